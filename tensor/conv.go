package tensor

import "slices"

// ConvParams configures a 2-D convolution. Zero values mean the defaults:
// stride 1, padding 0, dilation 1, one group. Index 0 is the height axis and
// index 1 the width axis.
type ConvParams struct {
	Stride   [2]int // step between output positions
	Padding  [2]int // zeros added on both sides of the input
	Dilation [2]int // spacing between kernel taps
	Groups   int    // input and output channels are split into this many independent groups
}

// convGeom is a fully resolved convolution: every size the kernels need.
type convGeom struct {
	n, c, h, w int // input
	o, kh, kw  int // weight (o, c/groups, kh, kw)
	ho, wo     int // output spatial size
	sh, sw     int
	ph, pw     int
	dh, dw     int
	groups     int
	cg, og     int // channels per group, input and output
	kdim       int // rows of one group's column matrix: cg·kh·kw
	hw, howo   int // spatial sizes of one input and one output plane
}

// resolve fills in the defaults and checks p for op.
func (p ConvParams) resolve(op string) (sh, sw, ph, pw, dh, dw, groups int) {
	sh, sw, ph, pw, dh, dw, groups = p.defaults()
	if sh < 1 || sw < 1 || dh < 1 || dw < 1 || ph < 0 || pw < 0 || groups < 1 {
		Fail(op, "invalid parameters %+v: stride and dilation must be >= 1 (0 means 1), padding >= 0, groups >= 1", p)
	}
	return
}

// defaults fills in the defaults of p without checking it.
func (p ConvParams) defaults() (sh, sw, ph, pw, dh, dw, groups int) {
	return orOne(p.Stride[0]), orOne(p.Stride[1]), p.Padding[0], p.Padding[1],
		orOne(p.Dilation[0]), orOne(p.Dilation[1]), orOne(p.Groups)
}

func orOne(v int) int {
	if v == 0 {
		return 1
	}
	return v
}

// convGeometry validates an input shape and a weight shape against p and
// returns the resolved geometry. It panics for op with both shapes named.
func convGeometry(op string, xShape, wShape []int, dt DType, p ConvParams) convGeom {
	if len(xShape) != 4 || len(wShape) != 4 {
		Fail(op, "input %v and weight %v must both be 4-D (N, C, H, W) and (O, C/groups, kh, kw)", convDesc(xShape, dt), fmtShape(wShape))
	}
	p.resolve(op)
	g := geometry(xShape, wShape, p)
	if wShape[1]*g.groups != g.c {
		Fail(op, "input %v has %d channels, weight %v expects %d×groups %d", convDesc(xShape, dt), g.c, fmtShape(wShape), wShape[1], g.groups)
	}
	if g.o%g.groups != 0 {
		Fail(op, "weight %v has %d output channels, not divisible by groups %d (input %v)", fmtShape(wShape), g.o, g.groups, convDesc(xShape, dt))
	}
	if g.kh < 1 || g.kw < 1 {
		Fail(op, "weight %v has an empty kernel (input %v)", fmtShape(wShape), convDesc(xShape, dt))
	}
	if g.h+2*g.ph < g.dh*(g.kh-1)+1 || g.w+2*g.pw < g.dw*(g.kw-1)+1 {
		Fail(op, "input %v padded by (%d, %d) is smaller than weight %v's kernel dilated by (%d, %d)", convDesc(xShape, dt), g.ph, g.pw, fmtShape(wShape), g.dh, g.dw)
	}
	return g
}

// geometry resolves the geometry of shapes that fit together (see
// convGeometry) without checking them.
func geometry(xShape, wShape []int, p ConvParams) convGeom {
	var g convGeom
	g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.groups = p.defaults()
	g.n, g.c, g.h, g.w = xShape[0], xShape[1], xShape[2], xShape[3]
	g.o, g.kh, g.kw = wShape[0], wShape[2], wShape[3]
	g.ho = (g.h+2*g.ph-(g.dh*(g.kh-1)+1))/g.sh + 1
	g.wo = (g.w+2*g.pw-(g.dw*(g.kw-1)+1))/g.sw + 1
	g.cg, g.og = g.c/g.groups, g.o/g.groups
	g.kdim = g.cg * g.kh * g.kw
	g.hw, g.howo = g.h*g.w, g.ho*g.wo
	return g
}

// convDesc formats an operand given by shape as "(2, 3, 5, 5) float32", or
// as the shape alone when dt is 0 (no tensor involved).
func convDesc(shape []int, dt DType) string {
	if dt == 0 {
		return fmtShape(shape)
	}
	return fmtShape(shape) + " " + dt.String()
}

func (g *convGeom) outShape() []int { return []int{g.n, g.o, g.ho, g.wo} }

// Conv2DShape returns the output shape (N, O, Ho, Wo) of Conv2D for an input
// of shape xShape and a weight of shape wShape, with
// Ho = (H + 2·pad − dilation·(kh − 1) − 1)/stride + 1 and likewise Wo. It
// panics if the shapes do not fit together.
func Conv2DShape(xShape, wShape []int, p ConvParams) []int {
	g := convGeometry("Conv2DShape", xShape, wShape, 0, p)
	return g.outShape()
}

// Conv2D returns the 2-D cross-correlation of x (N, C, H, W) with the
// filters w (O, C/groups, kh, kw) as a new (N, O, Ho, Wo) tensor, the
// operation deep-learning frameworks call convolution. It panics on rank,
// channel or dtype mismatches and when the dilated kernel does not fit the
// padded input.
func Conv2D(x, w *Tensor, p ConvParams) *Tensor { return Conv2DTo(nil, x, w, p) }

// Conv2DTo is Conv2D writing into dst (nil allocates), which must have the
// output's shape and dtype and must not overlap x or w. It returns dst.
func Conv2DTo(dst, x, w *Tensor, p ConvParams) *Tensor {
	const op = "Conv2D"
	sameDType(op, x, w)
	g := convGeometry(op, x.shape, w.shape, x.dtype, p)
	dst = prepareDst(op, dst, x.dtype, g.outShape(), x, w)
	return conv2DRun(&g, dst, x, w)
}

// conv2DTrusted is Conv2DTo after validation, the trusted kernel graph
// calls (internal/unchecked): the shapes fit, dst has the output's shape
// and dtype and overlaps neither operand.
func conv2DTrusted(dst, x, w *Tensor, p ConvParams) *Tensor {
	g := geometry(x.shape, w.shape, p)
	return conv2DRun(&g, dst, x, w)
}

func conv2DRun(g *convGeom, dst, x, w *Tensor) *Tensor {
	if dst.dev != nil || x.dev != nil || w.dev != nil {
		gpuConv2D(g, dst, x, w)
		return dst
	}
	out := dst.Contiguous()
	if x.dtype == Float32 {
		convForward(g, contigData[float32](x), contigData[float32](w), storage[float32](out)[out.offset:])
	} else {
		convForward(g, contigData[float64](x), contigData[float64](w), storage[float64](out)[out.offset:])
	}
	if out != dst {
		CopyInto(dst, out)
	}
	return dst
}

// Conv2DInputGrad returns the gradient of a Conv2D with respect to its input
// x of shape xShape, given the output cotangent dy and the weight w: the
// adjoint of x ↦ Conv2D(x, w, p). It panics if dy's shape is not the output
// shape Conv2D would give for xShape and w.
func Conv2DInputGrad(dy, w *Tensor, xShape []int, p ConvParams) *Tensor {
	return Conv2DInputGradTo(nil, dy, w, xShape, p)
}

// Conv2DInputGradTo is Conv2DInputGrad writing into dst (nil allocates),
// which must have shape xShape and dy's dtype and must not overlap dy or w.
// It returns dst.
func Conv2DInputGradTo(dst, dy, w *Tensor, xShape []int, p ConvParams) *Tensor {
	const op = "Conv2DInputGrad"
	sameDType(op, dy, w)
	g := convGeometry(op, xShape, w.shape, dy.dtype, p)
	if !slices.Equal(dy.shape, g.outShape()) {
		Fail(op, "output gradient %v %v does not match the output %v of input %v with weight %v", fmtShape(dy.shape), dy.dtype, fmtShape(g.outShape()), fmtShape(xShape), fmtShape(w.shape))
	}
	dst = prepareDst(op, dst, dy.dtype, xShape, dy, w)
	return conv2DInputGradRun(&g, dst, dy, w)
}

// conv2DInputGradTrusted is Conv2DInputGradTo after validation (see
// conv2DTrusted).
func conv2DInputGradTrusted(dst, dy, w *Tensor, xShape []int, p ConvParams) *Tensor {
	g := geometry(xShape, w.shape, p)
	return conv2DInputGradRun(&g, dst, dy, w)
}

func conv2DInputGradRun(g *convGeom, dst, dy, w *Tensor) *Tensor {
	if dst.dev != nil || dy.dev != nil || w.dev != nil {
		gpuConv2DInputGrad(g, dst, dy, w)
		return dst
	}
	out := dst.Contiguous()
	if dy.dtype == Float32 {
		convInputGrad(g, contigData[float32](dy), contigData[float32](w), storage[float32](out)[out.offset:])
	} else {
		convInputGrad(g, contigData[float64](dy), contigData[float64](w), storage[float64](out)[out.offset:])
	}
	if out != dst {
		CopyInto(dst, out)
	}
	return dst
}

// Conv2DWeightGrad returns the gradient of a Conv2D with respect to its
// weight of shape wShape, given the input x and the output cotangent dy:
// the adjoint of w ↦ Conv2D(x, w, p). It panics if dy's shape is not the
// output shape Conv2D would give for x and wShape.
func Conv2DWeightGrad(x, dy *Tensor, wShape []int, p ConvParams) *Tensor {
	return Conv2DWeightGradTo(nil, x, dy, wShape, p)
}

// Conv2DWeightGradTo is Conv2DWeightGrad writing into dst (nil allocates),
// which must have shape wShape and x's dtype and must not overlap x or dy.
// It returns dst.
func Conv2DWeightGradTo(dst, x, dy *Tensor, wShape []int, p ConvParams) *Tensor {
	const op = "Conv2DWeightGrad"
	sameDType(op, x, dy)
	g := convGeometry(op, x.shape, wShape, x.dtype, p)
	if !slices.Equal(dy.shape, g.outShape()) {
		Fail(op, "output gradient %v %v does not match the output %v of input %v with weight %v", fmtShape(dy.shape), dy.dtype, fmtShape(g.outShape()), fmtShape(x.shape), fmtShape(wShape))
	}
	dst = prepareDst(op, dst, x.dtype, wShape, x, dy)
	return conv2DWeightGradRun(&g, dst, x, dy)
}

// conv2DWeightGradTrusted is Conv2DWeightGradTo after validation (see
// conv2DTrusted).
func conv2DWeightGradTrusted(dst, x, dy *Tensor, wShape []int, p ConvParams) *Tensor {
	g := geometry(x.shape, wShape, p)
	return conv2DWeightGradRun(&g, dst, x, dy)
}

func conv2DWeightGradRun(g *convGeom, dst, x, dy *Tensor) *Tensor {
	if dst.dev != nil || x.dev != nil || dy.dev != nil {
		gpuConv2DWeightGrad(g, dst, x, dy)
		return dst
	}
	out := dst.Contiguous()
	if x.dtype == Float32 {
		convWeightGrad(g, contigData[float32](x), contigData[float32](dy), storage[float32](out)[out.offset:])
	} else {
		convWeightGrad(g, contigData[float64](x), contigData[float64](dy), storage[float64](out)[out.offset:])
	}
	if out != dst {
		CopyInto(dst, out)
	}
	return dst
}

// contigData returns t's elements in row-major order, sharing memory when
// t is contiguous.
func contigData[T Float](t *Tensor) []T {
	c := t.Contiguous()
	return storage[T](c)[c.offset : c.offset+c.Size()]
}
