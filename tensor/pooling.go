package tensor

import "slices"

// PoolParams configures 2-D max and average pooling over NCHW tensors.
// Index 0 is the height axis and index 1 the width axis.
type PoolParams struct {
	Kernel  [2]int // window size; both entries must be >= 1
	Stride  [2]int // step between windows; 0 means the kernel size
	Padding [2]int // implicit padding on both sides, at most half the kernel
}

// poolGeom is a resolved pooling: every size the kernels need.
type poolGeom struct {
	n, c, h, w int
	kh, kw     int
	sh, sw     int
	ph, pw     int
	ho, wo     int
}

// poolGeometry validates xShape against p for op and resolves the sizes.
// Padding is limited to half the kernel (as in PyTorch) so every window
// holds at least one real input element and max pooling is well defined.
func poolGeometry(op string, xShape []int, dt DType, p PoolParams) poolGeom {
	if len(xShape) != 4 {
		Fail(op, "input %v must be 4-D (N, C, H, W)", convDesc(xShape, dt))
	}
	g := poolGeometryOf(xShape, p)
	if g.kh < 1 || g.kw < 1 || g.sh < 1 || g.sw < 1 || g.ph < 0 || g.pw < 0 || 2*g.ph > g.kh || 2*g.pw > g.kw {
		Fail(op, "invalid parameters %+v for input %v: kernel and stride must be >= 1 (stride 0 means the kernel), padding between 0 and half the kernel", p, convDesc(xShape, dt))
	}
	if g.h+2*g.ph < g.kh || g.w+2*g.pw < g.kw {
		Fail(op, "input %v padded by (%d, %d) is smaller than the %d×%d window", convDesc(xShape, dt), g.ph, g.pw, g.kh, g.kw)
	}
	return g
}

// poolGeometryOf resolves the geometry of a 4-D xShape and p without
// checking them (see poolGeometry). Ho and Wo stay 0 for a stride below 1,
// which poolGeometry rejects, so it never divides by zero.
func poolGeometryOf(xShape []int, p PoolParams) poolGeom {
	g := poolGeom{n: xShape[0], c: xShape[1], h: xShape[2], w: xShape[3],
		kh: p.Kernel[0], kw: p.Kernel[1], sh: p.Stride[0], sw: p.Stride[1], ph: p.Padding[0], pw: p.Padding[1]}
	if g.sh == 0 {
		g.sh = g.kh
	}
	if g.sw == 0 {
		g.sw = g.kw
	}
	if g.sh > 0 && g.sw > 0 {
		g.ho = (g.h+2*g.ph-g.kh)/g.sh + 1
		g.wo = (g.w+2*g.pw-g.kw)/g.sw + 1
	}
	return g
}

func (g *poolGeom) outShape() []int { return []int{g.n, g.c, g.ho, g.wo} }

// window returns the input rows [h0, h1) and columns [w0, w1) that output
// position (oh, ow) covers, clipped to the image.
func (g *poolGeom) window(oh, ow int) (h0, h1, w0, w1 int) {
	h0 = oh*g.sh - g.ph
	w0 = ow*g.sw - g.pw
	h1 = min(h0+g.kh, g.h)
	w1 = min(w0+g.kw, g.w)
	return max(h0, 0), h1, max(w0, 0), w1
}

// Pool2DShape returns the output shape (N, C, Ho, Wo) of MaxPool2D and
// AvgPool2D for an input of shape xShape, with
// Ho = (H + 2·pad − kernel)/stride + 1 and likewise Wo. It panics if the
// shape or the parameters are invalid.
func Pool2DShape(xShape []int, p PoolParams) []int {
	g := poolGeometry("Pool2DShape", xShape, 0, p)
	return g.outShape()
}

// MaxPool2D returns the maximum of every pooling window of x (N, C, H, W)
// and, for each output element in row-major order, argmax: the flat
// row-major index into x of the element that was chosen (the first maximum
// in the window; a NaN wins over numbers). Padding never wins. It panics if
// x is not 4-D or the parameters are invalid.
func MaxPool2D(x *Tensor, p PoolParams) (y *Tensor, argmax []int) {
	return MaxPool2DTo(nil, nil, x, p)
}

// MaxPool2DTo is MaxPool2D writing the maxima into dst and the indices into
// argmax, so a training loop can reuse both buffers. A nil dst is
// allocated; argmax is allocated when it is shorter than the output (it is
// resliced to the output's size otherwise). It returns both.
func MaxPool2DTo(dst *Tensor, argmax []int, x *Tensor, p PoolParams) (*Tensor, []int) {
	const op = "MaxPool2D"
	g := poolGeometry(op, x.shape, x.dtype, p)
	return maxPoolRun(&g, prepareDst(op, dst, x.dtype, g.outShape(), x), argmax, x)
}

// maxPool2DTrusted is MaxPool2DTo after validation, the trusted kernel
// graph calls (internal/unchecked): x and p fit, dst has the output's shape
// and dtype and does not overlap x.
func maxPool2DTrusted(dst *Tensor, argmax []int, x *Tensor, p PoolParams) (*Tensor, []int) {
	if dst.dev != nil || x.dev != nil {
		// The graph's path: its argmax slices are reused step after step,
		// so the device indices are remembered for its gradient.
		g := poolGeometryOf(x.shape, p)
		return gpuMaxPool(&g, dst, argmax, x, true)
	}
	g := poolGeometryOf(x.shape, p)
	return maxPoolRun(&g, dst, argmax, x)
}

func maxPoolRun(g *poolGeom, y *Tensor, argmax []int, x *Tensor) (*Tensor, []int) {
	if y.dev != nil || x.dev != nil {
		return gpuMaxPool(g, y, argmax, x, false)
	}
	n := g.n * g.c * g.ho * g.wo
	if cap(argmax) < n {
		argmax = make([]int, n)
	}
	argmax = argmax[:n]
	if x.dtype == Float32 {
		yd := contigDst[float32](y)
		maxPool(g, contigData[float32](x), yd, argmax)
		finishDst(y, yd)
	} else {
		yd := contigDst[float64](y)
		maxPool(g, contigData[float64](x), yd, argmax)
		finishDst(y, yd)
	}
	return y, argmax
}

// contigDst returns dst's elements as one row-major slice: its storage when
// dst is contiguous, else a scratch copy that finishDst writes back.
func contigDst[T Float](dst *Tensor) []T {
	if dst.IsContiguous() {
		return storage[T](dst)[dst.offset : dst.offset+dst.Size()]
	}
	return make([]T, dst.Size())
}

// finishDst copies a scratch result from contigDst into a strided dst.
func finishDst[T Float](dst *Tensor, d []T) {
	if dst.IsContiguous() {
		return
	}
	src := &Tensor{dtype: dst.dtype, shape: dst.shape, strides: rowMajorStrides(dst.shape)}
	if f, ok := any(d).([]float32); ok {
		src.f32 = f
	} else {
		src.f64 = any(d).([]float64)
	}
	CopyInto(dst, src) // wraps d: no second scratch buffer
}

func maxPool[T Float](g *poolGeom, x, y []T, argmax []int) {
	hw, howo := g.h*g.w, g.ho*g.wo
	forEachImage(g.n*g.c, 0, g.n*g.c*(hw+howo), func(nc int, _ []T) {
		base := nc * hw
		i := nc * howo
		if g.ph == 0 && g.pw == 0 {
			// Without padding every window lies inside the image, so the
			// window bounds need no clipping.
			maxPoolImage(g, x[base:base+hw], y[i:i+howo], argmax[i:i+howo], base)
			return
		}
		for oh := 0; oh < g.ho; oh++ {
			for ow := 0; ow < g.wo; ow++ {
				h0, h1, w0, w1 := g.window(oh, ow)
				best, at := x[base+h0*g.w+w0], base+h0*g.w+w0
				for ih := h0; ih < h1; ih++ {
					row := base + ih*g.w
					for iw := w0; iw < w1; iw++ {
						// best == best is false only for NaN, which then sticks.
						if v := x[row+iw]; v > best || (v != v && best == best) {
							best, at = v, row+iw
						}
					}
				}
				y[i], argmax[i] = best, at
				i++
			}
		}
	})
}

// maxPoolImage pools one unpadded image x (H·W) into y and argmax (Ho·Wo),
// recording indices offset by base. It visits elements in the same order as
// the general loop, so ties and NaNs resolve identically.
func maxPoolImage[T Float](g *poolGeom, x, y []T, argmax []int, base int) {
	w, kh, kw := g.w, g.kh, g.kw
	i := 0
	if kh == 2 && kw == 2 {
		for oh := 0; oh < g.ho; oh++ {
			r0 := oh * g.sh * w
			maxPool2x2Row(x, r0, r0+w, g.sw, y[oh*g.wo:(oh+1)*g.wo], argmax[oh*g.wo:(oh+1)*g.wo], base)
		}
		return
	}
	for oh := 0; oh < g.ho; oh++ {
		r0 := oh * g.sh * w
		for ow := 0; ow < g.wo; ow++ {
			p := r0 + ow*g.sw
			best, at := x[p], p
			for ih := 0; ih < kh; ih++ {
				row := p + ih*w
				for iw := 0; iw < kw; iw++ {
					if v := x[row+iw]; v > best || (v != v && best == best) {
						best, at = v, row+iw
					}
				}
			}
			y[i], argmax[i] = best, base+at
			i++
		}
	}
}

// MaxPool2DGrad returns the gradient of MaxPool2D with respect to an input
// of shape xShape: each element of dy is added at the input position
// argmax records for it. It panics if argmax does not have one entry per
// element of dy or holds an index outside xShape.
func MaxPool2DGrad(dy *Tensor, argmax []int, xShape []int) *Tensor {
	return MaxPool2DGradTo(nil, dy, argmax, xShape)
}

// MaxPool2DGradTo is MaxPool2DGrad writing into dst (nil allocates), which
// it overwrites, and returns dst.
func MaxPool2DGradTo(dst, dy *Tensor, argmax []int, xShape []int) *Tensor {
	const op = "MaxPool2DGrad"
	if len(argmax) != dy.Size() {
		Fail(op, "%d argmax indices for output gradient %v %v with %d elements", len(argmax), fmtShape(dy.shape), dy.dtype, dy.Size())
	}
	dx := prepareDst(op, dst, dy.dtype, xShape, dy)
	size := dx.Size()
	for _, a := range argmax {
		if a < 0 || a >= size {
			Fail(op, "argmax index %d out of range for input shape %v (output gradient %v %v)", a, fmtShape(xShape), fmtShape(dy.shape), dy.dtype)
		}
	}
	if dx.dev != nil || dy.dev != nil { // argmax as given, which the caller may have changed
		gpuMaxPoolGrad(dx, dy, argmax, false)
		return dx
	}
	return maxPool2DGradTrusted(dx, dy, argmax)
}

// maxPool2DGradTrusted is MaxPool2DGradTo after validation, the trusted
// kernel graph calls (internal/unchecked): argmax has one index within dx
// per element of dy, and dx has dy's dtype and does not overlap it.
func maxPool2DGradTrusted(dx, dy *Tensor, argmax []int) *Tensor {
	if dx.dev != nil || dy.dev != nil {
		gpuMaxPoolGrad(dx, dy, argmax, true)
		return dx
	}
	if dy.dtype == Float32 {
		d := contigDst[float32](dx)
		clear(d)
		scatterAddFlat(contigData[float32](dy), argmax, d)
		finishDst(dx, d)
	} else {
		d := contigDst[float64](dx)
		clear(d)
		scatterAddFlat(contigData[float64](dy), argmax, d)
		finishDst(dx, d)
	}
	return dx
}

func scatterAddFlat[T Float](src []T, idx []int, dst []T) {
	for i, v := range src {
		dst[idx[i]] += v
	}
}

// AvgPool2D returns the mean of every pooling window of x (N, C, H, W).
// Padding counts as zeros in the mean, so every window is divided by
// kh·kw (PyTorch's count_include_pad=True). It panics if x is not 4-D or
// the parameters are invalid.
func AvgPool2D(x *Tensor, p PoolParams) *Tensor { return AvgPool2DTo(nil, x, p) }

// AvgPool2DTo is AvgPool2D writing into dst (nil allocates) and returning it.
func AvgPool2DTo(dst, x *Tensor, p PoolParams) *Tensor {
	const op = "AvgPool2D"
	g := poolGeometry(op, x.shape, x.dtype, p)
	return avgPoolRun(&g, prepareDst(op, dst, x.dtype, g.outShape(), x), x)
}

// avgPool2DTrusted is AvgPool2DTo after validation (see maxPool2DTrusted).
func avgPool2DTrusted(dst, x *Tensor, p PoolParams) *Tensor {
	g := poolGeometryOf(x.shape, p)
	return avgPoolRun(&g, dst, x)
}

func avgPoolRun(g *poolGeom, y, x *Tensor) *Tensor {
	if y.dev != nil || x.dev != nil {
		gpuAvgPool(g, y, x)
		return y
	}
	if x.dtype == Float32 {
		d := contigDst[float32](y)
		avgPool(g, contigData[float32](x), d)
		finishDst(y, d)
	} else {
		d := contigDst[float64](y)
		avgPool(g, contigData[float64](x), d)
		finishDst(y, d)
	}
	return y
}

func avgPool[T Float](g *poolGeom, x, y []T) {
	hw, howo := g.h*g.w, g.ho*g.wo
	inv := 1 / T(g.kh*g.kw)
	forEachImage(g.n*g.c, 0, g.n*g.c*(hw+howo), func(nc int, _ []T) {
		base := nc * hw
		i := nc * howo
		for oh := 0; oh < g.ho; oh++ {
			for ow := 0; ow < g.wo; ow++ {
				h0, h1, w0, w1 := g.window(oh, ow)
				var s T
				for ih := h0; ih < h1; ih++ {
					for _, v := range x[base+ih*g.w+w0 : base+ih*g.w+w1] {
						s += v
					}
				}
				y[i] = s * inv
				i++
			}
		}
	})
}

// AvgPool2DGrad returns the gradient of AvgPool2D with respect to an input
// of shape xShape: each element of dy, divided by kh·kw, is added to every
// real input element of its window. It panics if dy's shape is not the
// pooling output shape for xShape and p.
func AvgPool2DGrad(dy *Tensor, xShape []int, p PoolParams) *Tensor {
	return AvgPool2DGradTo(nil, dy, xShape, p)
}

// AvgPool2DGradTo is AvgPool2DGrad writing into dst (nil allocates), which
// it overwrites, and returns dst.
func AvgPool2DGradTo(dst, dy *Tensor, xShape []int, p PoolParams) *Tensor {
	const op = "AvgPool2DGrad"
	g := poolGeometry(op, xShape, dy.dtype, p)
	if !slices.Equal(dy.shape, g.outShape()) {
		Fail(op, "output gradient %v %v does not match the output %v of input %v", fmtShape(dy.shape), dy.dtype, fmtShape(g.outShape()), fmtShape(xShape))
	}
	return avgPoolGradRun(&g, prepareDst(op, dst, dy.dtype, xShape, dy), dy)
}

// avgPool2DGradTrusted is AvgPool2DGradTo after validation: dy has the
// pooling's output shape for xShape and p, dst has shape xShape and dy's
// dtype and does not overlap dy.
func avgPool2DGradTrusted(dst, dy *Tensor, xShape []int, p PoolParams) *Tensor {
	g := poolGeometryOf(xShape, p)
	return avgPoolGradRun(&g, dst, dy)
}

func avgPoolGradRun(g *poolGeom, dx, dy *Tensor) *Tensor {
	if dx.dev != nil || dy.dev != nil {
		gpuAvgPoolGrad(g, dx, dy)
		return dx
	}
	if dy.dtype == Float32 {
		d := contigDst[float32](dx)
		clear(d)
		avgPoolGrad(g, contigData[float32](dy), d)
		finishDst(dx, d)
	} else {
		d := contigDst[float64](dx)
		clear(d)
		avgPoolGrad(g, contigData[float64](dy), d)
		finishDst(dx, d)
	}
	return dx
}

func avgPoolGrad[T Float](g *poolGeom, dy, dx []T) {
	hw, howo := g.h*g.w, g.ho*g.wo
	inv := 1 / T(g.kh*g.kw)
	forEachImage(g.n*g.c, 0, g.n*g.c*(hw+howo), func(nc int, _ []T) {
		base := nc * hw
		i := nc * howo
		for oh := 0; oh < g.ho; oh++ {
			for ow := 0; ow < g.wo; ow++ {
				h0, h1, w0, w1 := g.window(oh, ow)
				v := dy[i] * inv
				i++
				for ih := h0; ih < h1; ih++ {
					row := dx[base+ih*g.w+w0 : base+ih*g.w+w1]
					for k := range row {
						row[k] += v
					}
				}
			}
		}
	})
}

// maxPool2x2Row pools one output row of 2×2 windows whose top-left
// corners are x[r0 + ow·sw] (second row at r1), writing y and argmax
// (indices offset by base). Without NaNs the first strict maximum is the
// larger of the two rows' first strict maxima, each chosen by index
// arithmetic on comparisons that compile to SETcc, with no branch: random
// data mispredicts a comparison's branch half of the time (the old loop
// also chained three such steps, each waiting for the previous one's
// load). A window whose sum is NaN (a NaN, or Infs of both signs) takes
// the general loop's order, where the first NaN wins.
func maxPool2x2Row[T Float](x []T, r0, r1, sw int, y []T, argmax []int, base int) {
	argmax = argmax[:len(y)]
	for ow := range y {
		p, q := r0+ow*sw, r1+ow*sw
		a, b, c, d := x[p], x[p+1], x[q], x[q+1]
		if s := a + b + c + d; s != s {
			at := p
			for _, k := range [3]int{p + 1, q, q + 1} {
				if v := x[k]; v > x[at] || (v != v && x[at] == x[at]) {
					at = k
				}
			}
			y[ow], argmax[ow] = x[at], base+at
			continue
		}
		i, j := p+b2i(b > a), q+b2i(d > c)
		at := i + b2i(x[j] > x[i])*(j-i)
		y[ow], argmax[ow] = x[at], base+at
	}
}

// b2i is 1 for true and 0 for false; the compiler emits a SETcc for it.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
