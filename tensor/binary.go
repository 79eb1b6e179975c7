package tensor

// This file holds the broadcasting binary operations beyond arithmetic
// (Pow, Maximum, Minimum, the comparisons) and the ternary Where. Every one
// panics with a *Error naming the op and the shapes when the operands have
// different dtypes or do not broadcast.

import (
	"math"
	"slices"
)

var powOp = &binaryOp{name: "Pow",
	f32: binaryKernel[float32]{elem: pow32},
	f64: binaryKernel[float64]{elem: math.Pow},
}

var maximumOp = &binaryOp{name: "Maximum",
	f32: binaryKernel[float32]{elem: maxElem[float32]},
	f64: binaryKernel[float64]{elem: maxElem[float64]},
}

var minimumOp = &binaryOp{name: "Minimum",
	f32: binaryKernel[float32]{elem: minElem[float32]},
	f64: binaryKernel[float64]{elem: minElem[float64]},
}

// The builtins propagate NaN and order −0 below +0, like NumPy's maximum.
func maxElem[T Float](x, y T) T { return max(x, y) }
func minElem[T Float](x, y T) T { return min(x, y) }

// cmpOp builds a comparison op; its result is 1 where cmp holds, else 0.
func cmpOp(name string, f32 func(x, y float32) bool, f64 func(x, y float64) bool) *binaryOp {
	return &binaryOp{name: name,
		f32: binaryKernel[float32]{elem: func(x, y float32) float32 { return boolTo[float32](f32(x, y)) }},
		f64: binaryKernel[float64]{elem: func(x, y float64) float64 { return boolTo[float64](f64(x, y)) }},
	}
}

func boolTo[T Float](b bool) T {
	if b {
		return 1
	}
	return 0
}

// Comparisons follow IEEE: every comparison with NaN is false except
// NotEqual.
var (
	equalOp        = cmpOp("Equal", func(x, y float32) bool { return x == y }, func(x, y float64) bool { return x == y })
	notEqualOp     = cmpOp("NotEqual", func(x, y float32) bool { return x != y }, func(x, y float64) bool { return x != y })
	lessOp         = cmpOp("Less", func(x, y float32) bool { return x < y }, func(x, y float64) bool { return x < y })
	lessEqualOp    = cmpOp("LessEqual", func(x, y float32) bool { return x <= y }, func(x, y float64) bool { return x <= y })
	greaterOp      = cmpOp("Greater", func(x, y float32) bool { return x > y }, func(x, y float64) bool { return x > y })
	greaterEqualOp = cmpOp("GreaterEqual", func(x, y float32) bool { return x >= y }, func(x, y float64) bool { return x >= y })
)

// Pow returns aᵇ with broadcasting and math.Pow's special cases.
func Pow(a, b *Tensor) *Tensor { return powOp.apply(nil, a, b) }

// PowTo stores aᵇ in dst (nil allocates) and returns it.
func PowTo(dst, a, b *Tensor) *Tensor { return powOp.apply(dst, a, b) }

// Maximum returns the elementwise maximum with broadcasting; NaN in either
// operand gives NaN.
func Maximum(a, b *Tensor) *Tensor { return maximumOp.apply(nil, a, b) }

// MaximumTo stores Maximum(a, b) in dst (nil allocates) and returns it.
func MaximumTo(dst, a, b *Tensor) *Tensor { return maximumOp.apply(dst, a, b) }

// Minimum returns the elementwise minimum with broadcasting; NaN in either
// operand gives NaN.
func Minimum(a, b *Tensor) *Tensor { return minimumOp.apply(nil, a, b) }

// MinimumTo stores Minimum(a, b) in dst (nil allocates) and returns it.
func MinimumTo(dst, a, b *Tensor) *Tensor { return minimumOp.apply(dst, a, b) }

// Equal returns 1 where a == b and 0 elsewhere, in the operands' dtype.
func Equal(a, b *Tensor) *Tensor { return equalOp.apply(nil, a, b) }

// EqualTo stores Equal(a, b) in dst (nil allocates) and returns it.
func EqualTo(dst, a, b *Tensor) *Tensor { return equalOp.apply(dst, a, b) }

// NotEqual returns 1 where a != b (and where either is NaN), else 0.
func NotEqual(a, b *Tensor) *Tensor { return notEqualOp.apply(nil, a, b) }

// NotEqualTo stores NotEqual(a, b) in dst (nil allocates) and returns it.
func NotEqualTo(dst, a, b *Tensor) *Tensor { return notEqualOp.apply(dst, a, b) }

// Less returns 1 where a < b and 0 elsewhere.
func Less(a, b *Tensor) *Tensor { return lessOp.apply(nil, a, b) }

// LessTo stores Less(a, b) in dst (nil allocates) and returns it.
func LessTo(dst, a, b *Tensor) *Tensor { return lessOp.apply(dst, a, b) }

// LessEqual returns 1 where a <= b and 0 elsewhere.
func LessEqual(a, b *Tensor) *Tensor { return lessEqualOp.apply(nil, a, b) }

// LessEqualTo stores LessEqual(a, b) in dst (nil allocates) and returns it.
func LessEqualTo(dst, a, b *Tensor) *Tensor { return lessEqualOp.apply(dst, a, b) }

// Greater returns 1 where a > b and 0 elsewhere.
func Greater(a, b *Tensor) *Tensor { return greaterOp.apply(nil, a, b) }

// GreaterTo stores Greater(a, b) in dst (nil allocates) and returns it.
func GreaterTo(dst, a, b *Tensor) *Tensor { return greaterOp.apply(dst, a, b) }

// GreaterEqual returns 1 where a >= b and 0 elsewhere.
func GreaterEqual(a, b *Tensor) *Tensor { return greaterEqualOp.apply(nil, a, b) }

// GreaterEqualTo stores GreaterEqual(a, b) in dst (nil allocates) and
// returns it.
func GreaterEqualTo(dst, a, b *Tensor) *Tensor { return greaterEqualOp.apply(dst, a, b) }

// Where returns a where cond != 0 and b elsewhere (NaN in cond counts as
// true, as in NumPy). The three broadcast together and must share a dtype.
func Where(cond, a, b *Tensor) *Tensor { return WhereTo(nil, cond, a, b) }

// WhereTo stores Where(cond, a, b) in dst (nil allocates) and returns it.
// dst may alias any operand.
func WhereTo(dst, cond, a, b *Tensor) *Tensor {
	const op = "Where"
	sameDType(op, cond, a, b)
	shape := cond.shape
	if !slices.Equal(cond.shape, a.shape) || !slices.Equal(cond.shape, b.shape) {
		shape = BroadcastShapes(op, cond.shape, a.shape, b.shape)
	}
	dst = prepareDst(op, dst, a.dtype, shape, cond, a, b)
	checkOverlap(op, dst, cond, a, b)
	return whereTrusted(dst, cond, a, b)
}

// whereTrusted is WhereTo after validation, the trusted kernel graph calls
// (internal/unchecked): the operands share dst's dtype and broadcast to
// dst's shape, and dst overlaps none of them other than as its very view.
func whereTrusted(dst, cond, a, b *Tensor) *Tensor {
	shape := dst.shape
	view := func(t *Tensor) *Tensor { // broadcastTo without its checks
		if slices.Equal(t.shape, shape) {
			return t
		}
		return expandTrusted(t, shape)
	}
	c, av, bv := view(cond), view(a), view(b)
	if dst.dev != nil || c.dev != nil || av.dev != nil || bv.dev != nil {
		gpuWhere(dst, c, av, bv)
		return dst
	}
	if a.dtype == Float32 {
		whereApply[float32](dst, c, av, bv)
	} else {
		whereApply[float64](dst, c, av, bv)
	}
	return dst
}

// whereApply selects elementwise; c, a and b already have dst's shape.
func whereApply[T Float](dst, c, a, b *Tensor) {
	D, C, A, B := storage[T](dst), storage[T](c), storage[T](a), storage[T](b)
	walk(dst.shape, 4, [maxOperands]int{dst.offset, c.offset, a.offset, b.offset},
		[maxOperands][]int{dst.strides, c.strides, a.strides, b.strides},
		func(o [maxOperands]int, n int, s [maxOperands]int) {
			di, ci, ai, bi := o[0], o[1], o[2], o[3]
			for i := 0; i < n; i++ {
				if C[ci] != 0 {
					D[di] = A[ai]
				} else {
					D[di] = B[bi]
				}
				di += s[0]
				ci += s[1]
				ai += s[2]
				bi += s[3]
			}
		})
}
