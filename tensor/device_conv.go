package tensor

import (
	"sync"

	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

// Convolution and pooling on a GPU: float32 convolutions in the device's
// library (cuDNN) where it has one, otherwise im2col and col2im kernels
// around cuBLAS products, one strided-batched product per group
// (Chellapilla et al. 2006, "High performance convolutional neural
// networks for document processing"); pooling kernels.

// The products of a convolution a devices.ConvLibrary computes.
const (
	libConvForward = iota
	libConvInputGrad
	libConvWeightGrad
)

// libraryConv runs product dir of the convolution g into dst from a and b
// in the device's library and reports whether it did; false leaves the
// kernels to do it.
func libraryConv(op string, st *deviceStore, dir int, g *convGeom, dst, a, b *Tensor) bool {
	cl, ok := st.be.(devices.ConvLibrary)
	if !ok || !cl.ConvServes(devDType(dst.dtype)) {
		return false
	}
	ca, doneA := contiguousOperand(op, a)
	defer doneA()
	cb, doneB := contiguousOperand(op, b)
	defer doneB()
	used := false
	intoContiguous(op, dst, func(out *Tensor) {
		var err error
		used, err = cl.Conv(dir, devDType(dst.dtype), g.device(), g.o, g.groups, ca.mem(), cb.mem(), out.mem())
		gpuCheck(op, err)
	})
	return used
}

func (g *convGeom) device() devices.ConvGeom {
	return devices.ConvGeom{N: g.n, C: g.c, H: g.h, W: g.w, KH: g.kh, KW: g.kw, HO: g.ho, WO: g.wo,
		SH: g.sh, SW: g.sw, PH: g.ph, PW: g.pw, DH: g.dh, DW: g.dw}
}

func (g *poolGeom) device() devices.ConvGeom {
	return devices.ConvGeom{N: g.n, C: g.c, H: g.h, W: g.w, KH: g.kh, KW: g.kw, HO: g.ho, WO: g.wo,
		SH: g.sh, SW: g.sw, PH: g.ph, PW: g.pw, DH: 1, DW: 1}
}

// at is the device memory off elements into t.
func (t *Tensor) at(off int) devices.Mem {
	return t.dev.be.Slice(t.mem(), devDType(t.dtype), off)
}

// im2col returns x's columns (N, C·KH·KW, HO·WO) as a scratch tensor.
func (g *convGeom) im2col(op string, st *deviceStore, x *Tensor) *Tensor {
	cx, done := contiguousOperand(op, x)
	defer done()
	cols := newUninitOn(op, st.device, x.dtype, g.n, g.c*g.kh*g.kw, g.howo)
	gpuCheck(op, st.be.Im2Col(devDType(x.dtype), g.device(), cols.mem(), cx.mem()))
	return cols
}

// gpuConv2D is conv2DRun on a GPU: y[n, group] = w[group]·cols[n, group].
func gpuConv2D(g *convGeom, dst, x, w *Tensor) {
	defer alive(dst, x, w)
	const op = "Conv2D"
	st := sameDevice(op, dst, x, w)
	if dst.Size() == 0 || libraryConv(op, st, libConvForward, g, dst, x, w) {
		return
	}
	cols := g.im2col(op, st, x)
	defer cols.release()
	cw, done := contiguousOperand(op, w)
	defer done()
	dt := devDType(x.dtype)
	intoContiguous(op, dst, func(out *Tensor) {
		for gi := range g.groups {
			gpuCheck(op, st.be.Gemm(dt, false, false, g.n, g.og, g.howo, g.kdim,
				cw.at(gi*g.og*g.kdim), 0, cols.at(gi*g.kdim*g.howo), g.c*g.kh*g.kw*g.howo,
				out.at(gi*g.og*g.howo), g.o*g.howo, 1, 0))
		}
	})
}

// gpuConv2DInputGrad is conv2DInputGradRun on a GPU: the columns'
// cotangent w[group]ᵀ·dy[n, group], folded back by col2im.
func gpuConv2DInputGrad(g *convGeom, dx, dy, w *Tensor) {
	defer alive(dx, dy, w)
	const op = "Conv2DInputGrad"
	st := sameDevice(op, dx, dy, w)
	if dx.Size() == 0 || libraryConv(op, st, libConvInputGrad, g, dx, w, dy) {
		return
	}
	cdy, doneY := contiguousOperand(op, dy)
	defer doneY()
	cw, doneW := contiguousOperand(op, w)
	defer doneW()
	dt := devDType(dy.dtype)
	cols := newUninitOn(op, st.device, dy.dtype, g.n, g.c*g.kh*g.kw, g.howo)
	defer cols.release()
	for gi := range g.groups {
		gpuCheck(op, st.be.Gemm(dt, true, false, g.n, g.kdim, g.howo, g.og,
			cw.at(gi*g.og*g.kdim), 0, cdy.at(gi*g.og*g.howo), g.o*g.howo,
			cols.at(gi*g.kdim*g.howo), g.c*g.kh*g.kw*g.howo, 1, 0))
	}
	intoContiguous(op, dx, func(out *Tensor) {
		gpuCheck(op, st.be.Col2Im(dt, g.device(), out.mem(), cols.mem()))
	})
}

// gpuConv2DWeightGrad is conv2DWeightGradRun on a GPU: dw[group] =
// Σₙ dy[n, group]·cols[n, group]ᵀ, one product over the batch with dy
// laid out (O, N·HO·WO) and the columns (C·KH·KW, N·HO·WO).
func gpuConv2DWeightGrad(g *convGeom, dw, x, dy *Tensor) {
	defer alive(dw, x, dy)
	const op = "Conv2DWeightGrad"
	st := sameDevice(op, dw, x, dy)
	if dw.Size() == 0 || libraryConv(op, st, libConvWeightGrad, g, dw, x, dy) {
		return
	}
	cols := g.im2col(op, st, x)
	defer cols.release()
	colsT := permuteTrusted(cols, []int{1, 0, 2}).deviceContiguous(op)
	defer colsT.release()
	cdy, doneY := contiguousOperand(op, dy)
	defer doneY()
	dyT := permuteTrusted(reshapeTrusted(cdy, []int{g.n, g.o, g.howo}), []int{1, 0, 2}).deviceContiguous(op)
	defer func() {
		if dyT.dev.h != dy.dev.h {
			dyT.release()
		}
	}()
	dt := devDType(dy.dtype)
	nhw := g.n * g.howo
	intoContiguous(op, dw, func(out *Tensor) {
		for gi := range g.groups {
			gpuCheck(op, st.be.Gemm(dt, false, true, 1, g.og, g.kdim, nhw,
				dyT.at(gi*g.og*nhw), 0, colsT.at(gi*g.kdim*nhw), 0,
				out.at(gi*g.og*g.kdim), 0, 1, 0))
		}
	})
}

// gpuMaxPool is maxPoolRun on a GPU. The chosen positions come back to
// the host as argmax (flat indices into x, as on the CPU), which the
// gradient and the graph's rules read: one transfer and one wait per call.
// With keep (the graph's calls) the device copy is remembered for the
// gradient.
func gpuMaxPool(g *poolGeom, y *Tensor, argmax []int, x *Tensor, keep bool) (*Tensor, []int) {
	defer alive(y, x)
	const op = "MaxPool2D"
	st := sameDevice(op, y, x)
	n := y.Size()
	if cap(argmax) < n {
		argmax = make([]int, n)
	}
	argmax = argmax[:n]
	if n == 0 {
		return y, argmax
	}
	cx, done := contiguousOperand(op, x)
	defer done()
	idx := newUninitOn(op, st.device, Float32, n) // int32 indices
	intoContiguous(op, y, func(out *Tensor) {
		gpuCheck(op, st.be.MaxPool(devDType(x.dtype), g.device(), out.mem(), idx.mem(), cx.mem()))
	})
	plane := make([]int32, n)
	gpuCheck(op, st.be.DownloadInt32(plane, idx.mem()))
	howo, hw := g.ho*g.wo, g.h*g.w
	for i, v := range plane {
		argmax[i] = i/howo*hw + int(v)
	}
	if keep {
		remember(argmax, idx, g.device())
	} else {
		idx.release()
	}
	return y, argmax
}

// deviceArgmax remembers, for each host argmax slice a GPU max pooling
// filled, the device copy of its indices and the pooling's geometry, so
// that the graph's gradient reads them on the device (a gathering kernel,
// no transfer) instead of uploading the host copy. An entry is used only
// while the slice still holds what the pooling wrote at both ends and has
// its length; the graph reuses its argmax slices step after step, so the
// entries stay few, each replaced when its slice is filled again.
var deviceArgmax struct {
	sync.Mutex
	m map[*int]argmaxEntry
}

type argmaxEntry struct {
	idx         *Tensor
	g           devices.ConvGeom
	n           int
	first, last int
}

func remember(argmax []int, idx *Tensor, g devices.ConvGeom) {
	deviceArgmax.Lock()
	defer deviceArgmax.Unlock()
	if deviceArgmax.m == nil {
		deviceArgmax.m = map[*int]argmaxEntry{}
	}
	k := &argmax[0]
	if old, ok := deviceArgmax.m[k]; ok {
		old.idx.release()
	}
	deviceArgmax.m[k] = argmaxEntry{idx: idx, g: g, n: len(argmax), first: argmax[0], last: argmax[len(argmax)-1]}
}

// recalled returns the device indices a GPU pooling left for argmax.
func recalled(argmax []int, dev Device) (argmaxEntry, bool) {
	if len(argmax) == 0 {
		return argmaxEntry{}, false
	}
	deviceArgmax.Lock()
	defer deviceArgmax.Unlock()
	e, ok := deviceArgmax.m[&argmax[0]]
	ok = ok && e.n == len(argmax) && e.first == argmax[0] && e.last == argmax[len(argmax)-1] && e.idx.Device() == dev
	return e, ok
}

// gpuMaxPoolGrad is maxPool2DGradTrusted on a GPU: with the indices a GPU
// pooling left for argmax (the graph's gradient), each input element
// gathers the dy of the windows that chose it; otherwise dx = 0, then dy
// added at argmax uploaded (atomic adds, in an unspecified order where
// windows overlap).
func gpuMaxPoolGrad(dx, dy *Tensor, argmax []int, useDevice bool) {
	defer alive(dx, dy)
	const op = "MaxPool2DGrad"
	st := sameDevice(op, dx, dy)
	if dx.Size() == 0 {
		return
	}
	cdy, done := contiguousOperand(op, dy)
	defer done()
	if e, ok := recalled(argmax, st.device); useDevice && ok && e.g.N*e.g.C*e.g.H*e.g.W == dx.Size() && e.g.N*e.g.C*e.g.HO*e.g.WO == dy.Size() {
		intoContiguous(op, dx, func(out *Tensor) {
			gpuCheck(op, st.be.MaxPoolGrad(devDType(dx.dtype), e.g, out.mem(), cdy.mem(), e.idx.mem()))
		})
		return
	}
	intoContiguous(op, dx, func(out *Tensor) {
		dt := devDType(dx.dtype)
		gpuCheck(op, st.be.Fill(dt, out.Size(), out.mem(), 0))
		if len(argmax) > 0 {
			gpuCheck(op, st.be.ScatterAdd(dt, 1, out.Size(), 1, out.mem(), argmax, cdy.mem()))
		}
	})
}

// gpuAvgPool is avgPoolRun on a GPU.
func gpuAvgPool(g *poolGeom, y, x *Tensor) {
	defer alive(y, x)
	const op = "AvgPool2D"
	st := sameDevice(op, y, x)
	if y.Size() == 0 {
		return
	}
	cx, done := contiguousOperand(op, x)
	defer done()
	intoContiguous(op, y, func(out *Tensor) {
		gpuCheck(op, st.be.AvgPool(devDType(x.dtype), g.device(), out.mem(), cx.mem()))
	})
}

// gpuAvgPoolGrad is avgPoolGradRun on a GPU.
func gpuAvgPoolGrad(g *poolGeom, dx, dy *Tensor) {
	defer alive(dx, dy)
	const op = "AvgPool2DGrad"
	st := sameDevice(op, dx, dy)
	if dx.Size() == 0 {
		return
	}
	cdy, done := contiguousOperand(op, dy)
	defer done()
	intoContiguous(op, dx, func(out *Tensor) {
		gpuCheck(op, st.be.AvgPoolGrad(devDType(dy.dtype), g.device(), out.mem(), cdy.mem()))
	})
}
