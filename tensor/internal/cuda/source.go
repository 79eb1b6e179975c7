package cuda

import (
	"embed"
	"fmt"
	"slices"
	"strings"
)

//go:embed kernels/*.cu
var kernelFiles embed.FS

// Source returns the kernels' CUDA C++ source as NVRTC compiles it:
// kernels/common.cu, then the other kernels/*.cu in name order.
func Source() string {
	entries, err := kernelFiles.ReadDir("kernels")
	if err != nil {
		panic(err) // the embedded folder is always there
	}
	names := []string{"common.cu"}
	for _, e := range entries {
		if e.Name() != "common.cu" {
			names = append(names, e.Name())
		}
	}
	var b strings.Builder
	for _, n := range names {
		src, err := kernelFiles.ReadFile("kernels/" + n)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&b, "// ---- kernels/%s\n%s\n", n, src)
	}
	return b.String()
}

// The operations with a kernel, by the name the kernels carry (before the
// _f32 or _f64 suffix).
var (
	UnaryOps = []string{"neg", "exp", "log", "tanh", "relu", "sigmoid", "gelu",
		"square", "sqrt", "abs", "reciprocal", "log1p", "expm1", "softplus",
		"sign", "sin", "cos", "erf", "lgamma", "digamma",
		"log_ndtr", "log_bessel_i0", "bessel_i1_over_i0"} // the last three: kernels/special.cu
	BinaryOps = []string{"add", "sub", "mul", "div", "relu_grad", "gelu_grad", "sigmoid_grad", "tanh_grad",
		"pow", "maximum", "minimum", "xlogy", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
	ScalarOps = []string{"add_scalar", "mul_scalar"}
	RowOps    = []string{"softmax", "log_softmax", "softmax_grad", "log_softmax_grad", "sum_last"}
	OtherOps  = []string{"fill", "non_finite", "copy", "gather", "scatter_add", "cast"}
	UpdateOps = []string{"adam", "sgd", "rmsprop", "adagrad"}
	ConvOps   = []string{"im2col", "col2im", "max_pool", "max_pool_grad", "avg_pool", "avg_pool_grad"}
)

// The operations of kernels/math.cu and kernels/reduce.cu: ParamOps take
// two scalar parameters (Kernels.Param), ParamBinaryOps a broadcast pair
// and one (Kernels.ParamBinary), ReduceOps reduce the last axis
// (Kernels.MaxLast and the others of reduce.go), MathOps are Kernels.Where
// and Kernels.CopyStrided.
var (
	ParamOps       = []string{"pow_scalar", "leaky_relu", "elu", "clamp", "polygamma"} // polygamma: kernels/special.cu
	ParamBinaryOps = []string{"leaky_relu_grad"}
	ReduceOps      = []string{"max_last", "min_last", "prod_last", "logsumexp_last", "variance_last"}
	MathOps        = []string{"where", "copy_strided"}
)

// kernelNames lists every kernel function of the module.
func kernelNames() []string {
	var out []string
	for _, op := range slices.Concat(UnaryOps, BinaryOps, ScalarOps, RowOps, OtherOps, UpdateOps, ConvOps,
		ParamOps, ParamBinaryOps, ReduceOps, MathOps,
		CellOps, GammaOps) {
		out = append(out, op+"_f32", op+"_f64")
	}
	return out
}

// DType is the element type of a kernel's buffers.
type DType uint8

// The element types the kernels exist for.
const (
	F32 DType = iota + 1
	F64
)

// Size returns the element size in bytes.
func (t DType) Size() int {
	if t == F64 {
		return 8
	}
	return 4
}

func (t DType) suffix() string {
	if t == F64 {
		return "_f64"
	}
	return "_f32"
}

func (t DType) valid() bool { return t == F32 || t == F64 }

// MaxDims is the most dimensions a broadcast binary operation takes
// (MAXDIM in kernels/common.cu).
const MaxDims = 8

// stridesArg has the layout of struct Strides in kernels/common.cu: it is
// passed to the binary kernels by value.
type stridesArg struct {
	ndim  int64
	shape [MaxDims]int64
	a     [MaxDims]int64
	b     [MaxDims]int64
}

// newStridesArg checks a broadcast binary operation over an output of
// shape (contiguous) whose operands have aElems and bElems elements and
// are read with strides as and bs (0 repeats along a dimension), and
// returns the kernel's argument and the output's element count (0 for an
// empty shape, with nothing checked but the stride counts). Negative
// strides need elements before the operand's pointer: newStridesSpan.
func newStridesArg(shape, as, bs []int, aElems, bElems int) (*stridesArg, int, error) {
	return newStridesSpan(shape, as, bs, span{0, aElems}, span{0, bElems})
}

// span is the elements an operand may reach around its pointer: before
// it (a Buffer.Slice view into a larger buffer) and from it on.
type span struct{ before, after int }

// spanOf is b's span in elements of dt.
func spanOf(b *Buffer, dt DType) span { return span{b.head / dt.Size(), b.size / dt.Size()} }

// newStridesSpan is newStridesArg for operands that may have negative
// strides (a slice with a negative step): the kernels index an operand
// from its pointer, which points at its element 0, so a negative stride
// reads memory before the pointer, within the span's before elements.
func newStridesSpan(shape, as, bs []int, a, b span) (*stridesArg, int, error) {
	if len(shape) > MaxDims || len(as) != len(shape) || len(bs) != len(shape) {
		return nil, 0, fmt.Errorf("cuda: broadcast over shape %v with strides %v and %v: need one stride per dimension, at most %d dimensions", shape, as, bs, MaxDims)
	}
	s := &stridesArg{ndim: int64(len(shape))}
	for _, k := range shape {
		if k < 0 {
			return nil, 0, fmt.Errorf("cuda: broadcast over shape %v with strides %v and %v: sizes must be non-negative", shape, as, bs)
		}
	}
	if slices.Contains(shape, 0) {
		return s, 0, nil // nothing to compute
	}
	n, aMin, aMax, bMin, bMax := 1, 0, 0, 0, 0
	for d, k := range shape {
		n *= k
		if as[d] < 0 {
			aMin += (k - 1) * as[d]
		} else {
			aMax += (k - 1) * as[d]
		}
		if bs[d] < 0 {
			bMin += (k - 1) * bs[d]
		} else {
			bMax += (k - 1) * bs[d]
		}
		s.shape[d], s.a[d], s.b[d] = int64(k), int64(as[d]), int64(bs[d])
	}
	if aMax >= a.after || bMax >= b.after {
		return nil, 0, fmt.Errorf("cuda: broadcast over shape %v reads a up to element %d of %d and b up to %d of %d", shape, aMax, a.after, bMax, b.after)
	}
	if aMin < -a.before || bMin < -b.before {
		return nil, 0, fmt.Errorf("cuda: broadcast over shape %v with strides %v and %v reads a back to element %d (its buffer starts at %d) and b back to %d (at %d)",
			shape, as, bs, aMin, -a.before, bMin, -b.before)
	}
	return s, n, nil
}

// BroadcastStrides returns the strides that read a contiguous operand of
// shape in as if it had shape out (NumPy's rules: shapes align at the
// right, a size-1 or missing dimension repeats with stride 0). It returns
// an error if in does not broadcast to out.
func BroadcastStrides(in, out []int) ([]int, error) {
	if len(in) > len(out) {
		return nil, fmt.Errorf("cuda: shape %v does not broadcast to %v", in, out)
	}
	st := make([]int, len(out))
	step := 1
	for i := 1; i <= len(in); i++ {
		k, o := in[len(in)-i], out[len(out)-i]
		switch {
		case k == o && k != 1:
			st[len(out)-i] = step
		case k == 1:
		default:
			return nil, fmt.Errorf("cuda: shape %v does not broadcast to %v", in, out)
		}
		step *= k
	}
	return st, nil
}
