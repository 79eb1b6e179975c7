package tensor

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

// The GPU side of the operations that have a kernel there. Each run
// function of the CPU path calls into this file when an operand or the
// destination lives on a GPU; everything here has been validated by the
// caller as on the CPU, except that the operands share one device.

// sameDevice returns the device store every tensor of ts lives on, or
// panics naming op when they live on different devices (as PyTorch does)
// or one of them is on the CPU.
func sameDevice(op string, ts ...*Tensor) *deviceStore {
	var s *deviceStore
	for _, t := range ts {
		if t == nil {
			continue
		}
		if t.dev == nil || (s != nil && t.dev.device != s.device) {
			var where []string
			for _, u := range ts {
				if u != nil {
					where = append(where, u.Device().String())
				}
			}
			Fail(op, "operands live on different devices (%s); move them to one with To", strings.Join(where, ", "))
		}
		if s == nil {
			s = t.dev
		}
	}
	return s
}

// kernelName turns an op's name ("ReluGrad") into its kernel's
// ("relu_grad").
func kernelName(op string) string {
	var b strings.Builder
	for i, r := range op {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// noKernel panics for an op with no GPU kernel yet.
func noKernel(op string, t *Tensor) {
	Fail(op, "no GPU kernel yet for %v tensors of shape %v on %v; move them with To(tensor.CPU)", t.dtype, t.shape, t.Device())
}

// intoContiguous runs f on dst when it is contiguous, else on a
// contiguous scratch tensor that is then copied into dst.
func intoContiguous(op string, dst *Tensor, f func(out *Tensor)) {
	if dst.IsContiguous() {
		f(dst)
		return
	}
	tmp := newUninitOn(op, dst.Device(), dst.dtype, dst.shape...)
	f(tmp)
	gpuCopy(op, dst, tmp)
	tmp.release()
}

// contiguousOperand returns a contiguous form of the GPU tensor a and a
// function that frees the copy, if one was made.
func contiguousOperand(op string, a *Tensor) (*Tensor, func()) {
	c := a.deviceContiguous(op)
	if c == a {
		return a, func() {}
	}
	return c, c.release
}

// deviceFill is Fill on a GPU tensor.
func (t *Tensor) deviceFill(v float64) {
	defer alive(t)
	intoContiguous("Fill", t, func(out *Tensor) {
		gpuCheck("Fill", out.dev.be.Fill(devDType(t.dtype), t.Size(), out.mem(), v))
	})
}

// deviceElement reads the element at storage offset off of a GPU tensor.
func (t *Tensor) deviceElement(op string, off int) float64 {
	e := &Tensor{dtype: t.dtype, shape: []int{}, strides: []int{}, offset: off, dev: t.dev}
	return e.To(CPU).Item()
}

// gpuCopy copies s, of dst's shape, into dst. Between the CPU and a GPU
// it transfers (CopyInto is explicit, as PyTorch's copy_ is).
func gpuCopy(op string, dst, s *Tensor) {
	defer alive(dst, s)
	if dst.Device() != s.Device() {
		transfer(op, dst, s)
		return
	}
	st := sameDevice(op, dst, s)
	if dst.Size() == 0 {
		return
	}
	d := devices.View{Mem: dst.mem()}
	if !dst.IsContiguous() {
		d.Strides = dst.strides
	}
	gpuCheck(op, st.be.Copy(devDType(dst.dtype), dst.shape, d, s.view()))
}

// gpuUnary is unaryOp.run on a GPU.
func gpuUnary(op string, dst, a *Tensor) {
	defer alive(dst, a)
	st := sameDevice(op, dst, a)
	k := kernelName(op)
	if !st.be.HasUnary(k) {
		noKernel(op, a)
	}
	if dst.Size() == 0 {
		return
	}
	src, done := contiguousOperand(op, a)
	defer done()
	intoContiguous(op, dst, func(out *Tensor) {
		gpuCheck(op, st.be.Unary(k, devDType(a.dtype), a.Size(), out.mem(), src.mem()))
	})
}

// gpuBinary is binaryOp.run on a GPU: a and b are already broadcast to
// dst's shape (as views with zero strides).
func gpuBinary(op string, dst, a, b *Tensor) { gpuBinaryParam(op, dst, a, b, 0) }

// gpuBinaryParam is gpuBinary for an op that may take a parameter
// (LeakyReluGrad's slope).
func gpuBinaryParam(op string, dst, a, b *Tensor, p float64) {
	defer alive(dst, a, b)
	st := sameDevice(op, dst, a, b)
	k := kernelName(op)
	param := k == "leaky_relu_grad"
	if !param && !st.be.HasBinary(k) {
		noKernel(op, a)
	}
	if dst.Size() == 0 {
		return
	}
	intoContiguous(op, dst, func(out *Tensor) {
		if param {
			gpuCheck(op, st.be.ParamBinary(k, devDType(a.dtype), dst.shape, out.mem(), a.view(), b.view(), p))
			return
		}
		gpuCheck(op, st.be.Binary(k, devDType(a.dtype), dst.shape, out.mem(), a.view(), b.view()))
	})
}

// gpuWhere is whereTrusted on a GPU: cond, a and b already have dst's
// shape (broadcast views).
func gpuWhere(dst, cond, a, b *Tensor) {
	defer alive(dst, cond, a, b)
	const op = "Where"
	st := sameDevice(op, dst, cond, a, b)
	if dst.Size() == 0 {
		return
	}
	intoContiguous(op, dst, func(out *Tensor) {
		gpuCheck(op, st.be.Where(devDType(a.dtype), dst.shape, out.mem(), cond.view(), a.view(), b.view()))
	})
}

// gpuParam is paramOp.run on a GPU: AddScalar and MulScalar, and the
// ops with parameters p and q (PowScalar, LeakyRelu, Elu, Clamp).
func gpuParam(op string, dst, a *Tensor, p, q float64) {
	defer alive(dst, a)
	st := sameDevice(op, dst, a)
	k := kernelName(op)
	scalar := k == "add_scalar" || k == "mul_scalar"
	if !scalar && !st.be.HasParam(k) {
		noKernel(op, a)
	}
	if dst.Size() == 0 {
		return
	}
	src, done := contiguousOperand(op, a)
	defer done()
	intoContiguous(op, dst, func(out *Tensor) {
		if scalar {
			gpuCheck(op, st.be.Scalar(k, devDType(a.dtype), a.Size(), out.mem(), src.mem(), p))
			return
		}
		gpuCheck(op, st.be.Param(k, devDType(a.dtype), a.Size(), out.mem(), src.mem(), p, q))
	})
}

// gpuSum sums a over axes into dst, whose elements are a's kept axes in
// order (keepdims or not, the layout is the same); mean divides by the
// count.
func gpuSum(op string, dst, a *Tensor, axes []int, mean bool) {
	defer alive(dst, a)
	gpuReduceAxes(op, "sum", dst, a, axes, 0, mean)
}

// gpuReduceAxes reduces a over axes into dst with the row reduction kind
// (devices.Backend.ReduceLast's names); mean divides a sum by the count.
func gpuReduceAxes(op, kind string, dst, a *Tensor, axes []int, ddof int, mean bool) {
	defer alive(dst, a)
	st := sameDevice(op, dst, a)
	if dst.Size() == 0 {
		return
	}
	// Move the summed axes last, make that contiguous and sum its rows.
	var kept, summed []int
	for i := range a.shape {
		if slices.Contains(axes, i) {
			summed = append(summed, i)
		} else {
			kept = append(kept, i)
		}
	}
	cols := 1
	for _, ax := range summed {
		cols *= a.shape[ax]
	}
	rows := dst.Size()
	src, done := contiguousOperand(op, permuteTrusted(a, append(kept, summed...)))
	defer done()
	dt := devDType(a.dtype)
	intoContiguous(op, dst, func(out *Tensor) {
		if cols == 0 { // max and min over no elements were refused before
			v := 0.0
			switch {
			case mean || kind == "variance":
				v = math.NaN() // 0/0, as on the CPU
			case kind == "prod":
				v = 1
			case kind == "logsumexp":
				v = math.Inf(-1)
			}
			gpuCheck(op, st.be.Fill(dt, rows, out.mem(), v))
			return
		}
		if kind == "sum" {
			gpuCheck(op, st.be.SumLast(dt, rows, cols, out.mem(), src.mem()))
		} else {
			gpuCheck(op, st.be.ReduceLast(kind, dt, rows, cols, ddof, out.mem(), src.mem()))
		}
		if mean {
			gpuCheck(op, st.be.Scalar("mul_scalar", dt, rows, out.mem(), out.mem(), 1/float64(cols)))
		}
		return
	})
}

// gpuMatMul is matmulTrusted (bias nil) and matmulBiasTrusted on a GPU:
// dst (batch..., m, n) = op(a)·op(b) (+ bias broadcast over the rows).
func gpuMatMul(op string, dst, a, b, bias *Tensor, transA, transB bool) {
	defer alive(dst, a, b, bias)
	st := sameDevice(op, dst, a, b, bias)
	if dst.Size() == 0 {
		return
	}
	nd := len(dst.shape)
	m, n := dst.shape[nd-2], dst.shape[nd-1]
	k := a.shape[len(a.shape)-1]
	if transA {
		k = a.shape[len(a.shape)-2]
	}
	batchShape := dst.shape[:nd-2]
	batch := shapeSize(batchShape)
	// Each operand's matrices must be contiguous and evenly spaced: one
	// matrix repeated (stride 0), or the batch laid out densely.
	operand := func(t *Tensor) (*Tensor, int, func()) {
		if len(t.shape) == 2 || shapeSize(t.shape[:len(t.shape)-2]) == 1 {
			c, done := contiguousOperand(op, reshapeTrusted(t, t.shape[len(t.shape)-2:]))
			return c, 0, done
		}
		full := append(slices.Clone(batchShape), t.shape[len(t.shape)-2:]...)
		c, done := contiguousOperand(op, expandTrusted(t, full))
		return c, t.shape[len(t.shape)-2] * t.shape[len(t.shape)-1], done
	}
	ca, sa, doneA := operand(a)
	defer doneA()
	cb, sb, doneB := operand(b)
	defer doneB()
	dt := devDType(a.dtype)
	intoContiguous(op, dst, func(out *Tensor) {
		beta := 0.0
		if bias != nil {
			gpuCopy(op, out, expandTrusted(bias, out.shape))
			beta = 1
		}
		gpuCheck(op, st.be.Gemm(dt, transA, transB, batch, m, n, k, ca.mem(), sa, cb.mem(), sb, out.mem(), m*n, 1, beta))
	})
}

// lastAxis runs f, an op over the last axis, for an op along axis ax:
// the operands are permuted so that ax comes last and made contiguous,
// and the result is permuted back into dst.
func lastAxis(op string, dst *Tensor, ax int, f func(out *Tensor, in []*Tensor), in ...*Tensor) {
	nd := len(dst.shape)
	perm := make([]int, 0, nd)
	for i := range nd {
		if i != ax {
			perm = append(perm, i)
		}
	}
	perm = append(perm, ax)
	inv := make([]int, nd)
	for i, p := range perm {
		inv[p] = i
	}
	moved := make([]*Tensor, len(in))
	for i, t := range in {
		c, done := contiguousOperand(op, permuteTrusted(t, perm))
		defer done()
		moved[i] = c
	}
	tmp := newUninitOn(op, dst.Device(), dst.dtype, permuteTrusted(dst, perm).shape...)
	f(tmp, moved)
	gpuCopy(op, dst, permuteTrusted(tmp, inv))
	tmp.release()
}

// gpuSoftmax is softmaxRun on a GPU.
func gpuSoftmax(op string, dst, a *Tensor, ax int, log bool) {
	defer alive(dst, a)
	st := sameDevice(op, dst, a)
	if dst.Size() == 0 {
		return
	}
	if ax != len(a.shape)-1 {
		lastAxis(op, dst, ax, func(out *Tensor, in []*Tensor) { gpuSoftmax(op, out, in[0], len(a.shape)-1, log) }, a)
		return
	}
	src, done := contiguousOperand(op, a)
	defer done()
	cols := a.shape[ax]
	intoContiguous(op, dst, func(out *Tensor) {
		gpuCheck(op, st.be.Softmax(devDType(a.dtype), a.Size()/cols, cols, out.mem(), src.mem(), log))
	})
}

// gpuSoftmaxGrad is softmaxGradRun on a GPU.
func gpuSoftmaxGrad(op string, dst, y, v *Tensor, ax int) {
	defer alive(dst, y, v)
	st := sameDevice(op, dst, y, v)
	if dst.Size() == 0 {
		return
	}
	if ax != len(y.shape)-1 {
		lastAxis(op, dst, ax, func(out *Tensor, in []*Tensor) { gpuSoftmaxGrad(op, out, in[0], in[1], len(y.shape)-1) }, y, v)
		return
	}
	cy, doneY := contiguousOperand(op, y)
	defer doneY()
	cv, doneV := contiguousOperand(op, v)
	defer doneV()
	cols := y.shape[ax]
	intoContiguous(op, dst, func(out *Tensor) {
		gpuCheck(op, st.be.SoftmaxGrad(devDType(y.dtype), y.Size()/cols, cols, out.mem(), cy.mem(), cv.mem(), false))
	})
}

// gpuIndexSelect is indexSelectTrusted on a GPU.
func gpuIndexSelect(op string, out, a *Tensor, ax int, idx []int) {
	defer alive(out, a)
	st := sameDevice(op, out, a)
	if out.Size() == 0 {
		return
	}
	src, done := contiguousOperand(op, a)
	defer done()
	outer, inner := shapeSize(a.shape[:ax]), shapeSize(a.shape[ax+1:])
	intoContiguous(op, out, func(o *Tensor) {
		gpuCheck(op, st.be.Gather(devDType(a.dtype), outer, a.shape[ax], inner, o.mem(), src.mem(), idx))
	})
}

// gpuScatterAdd is scatterAddTrusted on a GPU: dst += src scattered at
// idx along ax.
func gpuScatterAdd(op string, dst, src *Tensor, ax int, idx []int) {
	defer alive(dst, src)
	st := sameDevice(op, dst, src)
	if src.Size() == 0 {
		return
	}
	if !dst.IsContiguous() {
		Fail(op, "no GPU kernel yet for adding into the strided %v view of shape %v on %v", dst.dtype, dst.shape, dst.Device())
	}
	cs, done := contiguousOperand(op, src)
	defer done()
	outer, inner := shapeSize(dst.shape[:ax]), shapeSize(dst.shape[ax+1:])
	gpuCheck(op, st.be.ScatterAdd(devDType(dst.dtype), outer, dst.shape[ax], inner, dst.mem(), idx, cs.mem()))
}

// gpuReduce is reduceTrusted on a GPU.
func gpuReduce(kind redKind, dst, a *Tensor, axes []int, ddof int) *Tensor {
	defer alive(dst, a)
	op := redNames[kind]
	row := [...]string{redSum: "sum", redMean: "sum", redMax: "max", redMin: "min",
		redProd: "prod", redLSE: "logsumexp", redVar: "variance"}[kind]
	gpuReduceAxes(op, row, dst, a, axes, ddof, kind == redMean)
	return dst
}

// deviceUpdate is an optimiser's update on a GPU (internal/unchecked's
// DeviceUpdate): false when p lives on the CPU. state holds up to three
// buffers, nil where the rule's option is off.
func deviceUpdate(rule string, p, g *Tensor, state [3]*Tensor, h [8]float64) bool {
	defer alive(p, g, state[0], state[1], state[2])
	if p.dev == nil {
		return false
	}
	op := "optim." + rule
	st := sameDevice(op, p, g)
	var mems [3]devices.Mem
	for i, s := range state {
		if s != nil {
			sameDevice(op, p, s)
			mems[i] = s.mem()
		}
	}
	gpuCheck(op, st.be.Update(rule, devDType(p.dtype), p.Size(), p.mem(), g.mem(), mems, h))
	return true
}

// transfer copies s into dst across devices: directly when both are
// contiguous, else through a contiguous copy on the destination's device.
func transfer(op string, dst, s *Tensor) {
	defer alive(dst, s)
	if dst.Size() == 0 {
		return
	}
	if !dst.IsContiguous() || !s.IsContiguous() || (dst.dev != nil && s.dev != nil) {
		c := s.To(dst.Device())
		copyTrusted(dst, c)
		return
	}
	n := dst.Size()
	if dst.dev != nil { // upload
		var src any
		if s.dtype == Float32 {
			src = s.f32[s.offset : s.offset+n]
		} else {
			src = s.f64[s.offset : s.offset+n]
		}
		gpuCheck(op, dst.dev.be.Upload(dst.mem(), src))
		return
	}
	var d any
	if dst.dtype == Float32 {
		d = dst.f32[dst.offset : dst.offset+n]
	} else {
		d = dst.f64[dst.offset : dst.offset+n]
	}
	gpuCheck(op, s.dev.be.Download(d, s.mem()))
}

// deviceCast is Cast on a GPU, into the contiguous out of t's shape.
func (t *Tensor) deviceCast(out *Tensor) *Tensor {
	const op = "Cast"
	defer alive(t, out)
	c, done := contiguousOperand(op, t)
	defer done()
	if t.Size() > 0 {
		gpuCheck(op, t.dev.be.Cast(devDType(out.dtype), t.Size(), out.mem(), c.mem()))
	}
	return out
}
