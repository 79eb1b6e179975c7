package tensor

import "slices"

// This file holds the machinery shared by every elementwise operation and
// the four arithmetic operations. Each operation is a pair of kernels, one
// per dtype, so float32 work stays in float32.

// unaryKernel is one dtype's implementation of an elementwise unary op:
// elem maps one value, run (optional) maps a contiguous run faster.
type unaryKernel[T Float] struct {
	elem func(x T) T
	run  func(dst, x []T)
	// heavy marks an elem of ten nanoseconds or more (sin, log, erf, ...):
	// runs of such ops are split over goroutines from heavyElemMin
	// elements per goroutine instead of parallelElemMin.
	heavy bool
}

// binaryKernel is one dtype's implementation of an elementwise binary op.
type binaryKernel[T Float] struct {
	elem func(x, y T) T
	run  func(dst, x, y []T)
}

// unaryOp is an elementwise operation with kernels for both dtypes.
type unaryOp struct {
	name string
	f32  unaryKernel[float32]
	f64  unaryKernel[float64]
}

// binaryOp is an elementwise binary operation with kernels for both dtypes.
type binaryOp struct {
	name  string
	f32   binaryKernel[float32]
	f64   binaryKernel[float64]
	param float64 // the parameter of a parametrised op (LeakyReluGrad's slope), for the GPU kernel
}

// apply computes op(a) into dst (allocated when nil; it must have a's shape
// and dtype otherwise, and may be a itself).
func (op *unaryOp) apply(dst, a *Tensor) *Tensor {
	dst = prepareDst(op.name, dst, a.dtype, a.shape, a)
	checkOverlap(op.name, dst, a)
	return op.run(dst, a)
}

// run is apply after validation (dst shaped like a, same dtype, no partial
// overlap): the trusted kernel graph calls (internal/unchecked).
func (op *unaryOp) run(dst, a *Tensor) *Tensor {
	if dst.dev != nil || a.dev != nil {
		gpuUnary(op.name, dst, a)
		return dst
	}
	if a.dtype == Float32 {
		runUnary(dst, a, op.f32)
	} else {
		runUnary(dst, a, op.f64)
	}
	return dst
}

func runUnary[T Float](dst, a *Tensor, k unaryKernel[T]) {
	run := k.run
	if run == nil {
		elem := k.elem
		run = func(d, x []T) {
			for i := range d {
				d[i] = elem(x[i])
			}
		}
	}
	par, minPar := k.run, parallelElemMin
	if k.heavy {
		minPar = heavyElemMin
		if par == nil && a.Size() >= 2*heavyElemMin {
			// Made only for large tensors: the goroutines make it escape.
			elem := k.elem
			par = func(d, x []T) {
				for i := range d {
					d[i] = elem(x[i])
				}
			}
		}
	}
	unaryApplyPar(dst, a, run, k.elem, par, minPar)
}

// apply computes op(a, b) with broadcasting into dst (allocated when nil;
// otherwise it must have the broadcast shape and the operands' dtype).
func (op *binaryOp) apply(dst, a, b *Tensor) *Tensor {
	sameDType(op.name, a, b)
	shape := a.shape
	if !slices.Equal(a.shape, b.shape) {
		shape = BroadcastShapes(op.name, a.shape, b.shape)
	}
	dst = prepareDst(op.name, dst, a.dtype, shape, a, b)
	checkOverlap(op.name, dst, a, b)
	return op.run(dst, a, b)
}

// run is apply after validation: dst has the broadcast shape and the
// operands' dtype, and overlaps an operand only by being it. It is the
// trusted kernel graph calls (internal/unchecked).
func (op *binaryOp) run(dst, a, b *Tensor) *Tensor {
	av, bv := a.broadcastTo(op.name, dst.shape), b.broadcastTo(op.name, dst.shape)
	if dst.dev != nil || a.dev != nil || b.dev != nil {
		gpuBinaryParam(op.name, dst, av, bv, op.param)
		return dst
	}
	if a.dtype == Float32 {
		runBinary(dst, av, bv, op.f32)
	} else {
		runBinary(dst, av, bv, op.f64)
	}
	return dst
}

func runBinary[T Float](dst, a, b *Tensor, k binaryKernel[T]) {
	run := k.run
	if run == nil {
		elem := k.elem
		run = func(d, x, y []T) {
			for i := range d {
				d[i] = elem(x[i], y[i])
			}
		}
	}
	binaryApplyPar(dst, a, b, run, k.elem, k.run)
}

// prepareDst allocates a destination of the given dtype and shape when dst
// is nil, or checks that dst has them.
func prepareDst(op string, dst *Tensor, dt DType, shape []int, operands ...*Tensor) *Tensor {
	if dst == nil {
		for _, o := range operands {
			if o != nil && o.dev != nil {
				return newUninitOn(op, sameDevice(op, operands...).device, dt, shape...)
			}
		}
		return New(dt, shape...)
	}
	if dst.dtype != dt || !slices.Equal(dst.shape, shape) {
		Fail(op, "destination %v does not match result %v %v (operands %s)", describe(dst), fmtShape(shape), dt, describe(operands...))
	}
	checkDst(op, dst)
	return dst
}

// checkDst rejects a destination that is a broadcast view: several
// results would land in one element.
func checkDst(op string, dst *Tensor) {
	if dst.Size() == 0 {
		return // nothing is written
	}
	for i, d := range dst.shape {
		if d > 1 && dst.strides[i] == 0 {
			Fail(op, "destination %v is a broadcast view (stride 0 on axis %d); write into a tensor of its own", describe(dst), i)
		}
	}
}

// checkOverlap rejects a destination that shares storage with an operand
// without being exactly that operand: a kernel that streams through the
// operand would read elements it has already overwritten. The identical
// view is fine for elementwise kernels, which work in place.
func checkOverlap(op string, dst *Tensor, operands ...*Tensor) {
	for k, a := range operands {
		if a == nil || a == dst || !sharesStorage(dst, a) {
			continue
		}
		if a.offset == dst.offset && slices.Equal(a.shape, dst.shape) && slices.Equal(a.strides, dst.strides) {
			continue
		}
		Fail(op, "destination %v overlaps operand %d %v without being the same view; use a separate destination", describe(dst), k, describe(a))
	}
}

var addOp = &binaryOp{name: "Add",
	f32: binaryKernel[float32]{elem: func(x, y float32) float32 { return x + y }, run: addRun[float32]},
	f64: binaryKernel[float64]{elem: func(x, y float64) float64 { return x + y }, run: addRun[float64]},
}

var subOp = &binaryOp{name: "Sub",
	f32: binaryKernel[float32]{elem: func(x, y float32) float32 { return x - y }, run: subRun[float32]},
	f64: binaryKernel[float64]{elem: func(x, y float64) float64 { return x - y }, run: subRun[float64]},
}

var mulOp = &binaryOp{name: "Mul",
	f32: binaryKernel[float32]{elem: func(x, y float32) float32 { return x * y }, run: mulRun[float32]},
	f64: binaryKernel[float64]{elem: func(x, y float64) float64 { return x * y }, run: mulRun[float64]},
}

var divOp = &binaryOp{name: "Div",
	f32: binaryKernel[float32]{elem: func(x, y float32) float32 { return x / y }, run: divRun[float32]},
	f64: binaryKernel[float64]{elem: func(x, y float64) float64 { return x / y }, run: divRun[float64]},
}

func addRun[T Float](d, x, y []T) {
	y = y[:len(d)]
	x = x[:len(d)]
	k := arithBlocks('+', d, x, y)
	for i := k; i < len(d); i++ {
		d[i] = x[i] + y[i]
	}
}

func subRun[T Float](d, x, y []T) {
	y = y[:len(d)]
	x = x[:len(d)]
	k := arithBlocks('-', d, x, y)
	for i := k; i < len(d); i++ {
		d[i] = x[i] - y[i]
	}
}

func mulRun[T Float](d, x, y []T) {
	y = y[:len(d)]
	x = x[:len(d)]
	k := arithBlocks('*', d, x, y)
	for i := k; i < len(d); i++ {
		d[i] = x[i] * y[i]
	}
}

func divRun[T Float](d, x, y []T) {
	y = y[:len(d)]
	x = x[:len(d)]
	for i := range d {
		d[i] = x[i] / y[i]
	}
}

// Add returns a + b with broadcasting.
func Add(a, b *Tensor) *Tensor { return addOp.apply(nil, a, b) }

// AddTo stores a + b in dst (nil allocates) and returns it.
func AddTo(dst, a, b *Tensor) *Tensor { return addOp.apply(dst, a, b) }

// Sub returns a − b with broadcasting.
func Sub(a, b *Tensor) *Tensor { return subOp.apply(nil, a, b) }

// SubTo stores a − b in dst (nil allocates) and returns it.
func SubTo(dst, a, b *Tensor) *Tensor { return subOp.apply(dst, a, b) }

// Mul returns the elementwise product a·b with broadcasting.
func Mul(a, b *Tensor) *Tensor { return mulOp.apply(nil, a, b) }

// MulTo stores a·b in dst (nil allocates) and returns it.
func MulTo(dst, a, b *Tensor) *Tensor { return mulOp.apply(dst, a, b) }

// Div returns a / b with broadcasting (IEEE semantics for division by 0).
func Div(a, b *Tensor) *Tensor { return divOp.apply(nil, a, b) }

// DivTo stores a / b in dst (nil allocates) and returns it.
func DivTo(dst, a, b *Tensor) *Tensor { return divOp.apply(dst, a, b) }
