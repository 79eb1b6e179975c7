package nn

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Conv2DOptions holds the options of NewConv2D and NewConvTranspose2D.
// The zero value is PyTorch's default in float32: stride 1, no padding,
// dilation 1, one group, with a bias.
type Conv2DOptions struct {
	Stride   [2]int // 0 means 1
	Padding  [2]int // zeros added on both sides of the input
	Dilation [2]int // 0 means 1
	Groups   int    // 0 means 1; In and Out must be multiples of it
	NoBias   bool   // leave out the bias
	// OutputPadding adds rows and columns at the bottom and right of a
	// ConvTranspose2D's output (< stride or dilation), resolving its size
	// when the stride is above 1. NewConv2D panics if it is set.
	OutputPadding [2]int
	DType         tensor.DType // the parameters' dtype; 0 means tensor.Float32
}

// dtype returns o.DType, tensor.Float32 when it is zero.
func (o Conv2DOptions) dtype() tensor.DType { return orFloat32(o.DType) }

// orFloat32 is the zero-value default of the options' DType fields.
func orFloat32(dt tensor.DType) tensor.DType {
	if dt == 0 {
		return tensor.Float32
	}
	return dt
}

// Conv2D is a 2-D convolution over NCHW inputs (PyTorch's nn.Conv2d),
// strictly a cross-correlation, with the weight shaped
// (Out, In/Groups, kh, kw) and the bias shaped (Out).
type Conv2D struct {
	Weight *Param            // (Out, In/Groups, Kernel[0], Kernel[1])
	Bias   *Param            // (Out), nil without a bias
	In     int               // input channels
	Out    int               // output channels
	Kernel [2]int            // kernel height and width
	Conv   tensor.ConvParams // stride, padding, dilation and groups
}

// NewConv2D returns a convolution from in to out channels with a kernel of
// size kernel (height, width), initialised as PyTorch does: weight and
// bias from U(−1/√fan_in, 1/√fan_in) with fan_in = (in/groups)·kh·kw. It
// panics if the channels are not multiples of the groups, a size is not
// positive or opts.OutputPadding is set.
//
//	conv := nn.NewConv2D(rng, 1, 32, [2]int{3, 3}, nn.Conv2DOptions{Padding: [2]int{1, 1}})
func NewConv2D(rng *tensor.RNG, in, out int, kernel [2]int, opts Conv2DOptions) *Conv2D {
	cfg, dt := opts, opts.dtype()
	if opts.OutputPadding != [2]int{} {
		tensor.Fail("nn.NewConv2D", "OutputPadding %v is for ConvTranspose2D only", opts.OutputPadding)
	}
	p := tensor.ConvParams{Stride: cfg.Stride, Padding: cfg.Padding, Dilation: cfg.Dilation, Groups: cfg.Groups}
	for i := range 2 {
		if p.Stride[i] == 0 {
			p.Stride[i] = 1
		}
		if p.Dilation[i] == 0 {
			p.Dilation[i] = 1
		}
	}
	if p.Groups == 0 {
		p.Groups = 1
	}
	if in <= 0 || out <= 0 || kernel[0] <= 0 || kernel[1] <= 0 || p.Groups < 0 || in%p.Groups != 0 || out%p.Groups != 0 {
		tensor.Fail("nn.NewConv2D", "invalid configuration: in=%d out=%d kernel=%v groups=%d (channels must be positive multiples of groups)",
			in, out, kernel, p.Groups)
	}
	c := &Conv2D{In: in, Out: out, Kernel: kernel, Conv: p}
	w := tensor.Zeros(dt, out, in/p.Groups, kernel[0], kernel[1])
	c.Weight = NewParam(KaimingUniform(rng, w, math.Sqrt(5), FanIn, "leaky_relu"))
	if !cfg.NoBias {
		fanIn, _ := Fans(w.Shape())
		b := 1 / math.Sqrt(float64(fanIn))
		c.Bias = NewParam(Uniform(rng, tensor.Zeros(dt, out), -b, b))
	}
	return c
}

// String names the layer as its errors do, e.g. "Conv2D(1→32, 3×3)".
func (c *Conv2D) String() string {
	return fmt.Sprintf("Conv2D(%d→%d, %d×%d)", c.In, c.Out, c.Kernel[0], c.Kernel[1])
}

// Params returns "weight" and, with a bias, "bias".
func (c *Conv2D) Params() []NamedParam {
	ps := []NamedParam{{"weight", c.Weight}}
	if c.Bias != nil {
		ps = append(ps, NamedParam{"bias", c.Bias})
	}
	return ps
}

// SetTraining does nothing: a convolution behaves the same in both modes.
func (c *Conv2D) SetTraining(bool) {}

// Forward convolves x (N, In, H, W) into (N, Out, Ho, Wo). It panics,
// naming the layer and both shapes, if x is not 4-D with In channels, has
// another dtype, or is smaller than the dilated kernel.
func (c *Conv2D) Forward(x *graph.Node) *graph.Node {
	// The layer's own terms (its name, its channel count) read better than
	// conv2d's operand shapes; the geometry (an input smaller than the
	// dilated kernel) is graph.Conv2D's to check.
	checkInput(c, x, c.Weight.Value.DType())
	s := x.Shape()
	if len(s) != 4 || s[1] != c.In {
		tensor.Fail(c.String(), "input shape %s does not fit: want (N, %d, H, W)", tensor.FormatShape(s), c.In)
	}
	g := x.Graph()
	y := graph.Conv2D(x, c.Weight.Node(g), c.Conv)
	if c.Bias != nil {
		y = graph.Add(y, graph.Reshape(c.Bias.Node(g), 1, c.Out, 1, 1))
	}
	return y
}

// MaxPool2D takes the maximum over windows of NCHW inputs (PyTorch's
// nn.MaxPool2d). It has no parameters.
type MaxPool2D struct {
	noParams
	Pool tensor.PoolParams // window, stride and padding
}

// NewMaxPool2D returns a max pooling with the given window; a zero stride
// means the window size, as in PyTorch.
func NewMaxPool2D(p tensor.PoolParams) *MaxPool2D { return &MaxPool2D{Pool: p} }

// Forward pools x (N, C, H, W) into (N, C, Ho, Wo). It panics if x is not
// 4-D or the window does not fit (graph.MaxPool2D checks both).
func (m *MaxPool2D) Forward(x *graph.Node) *graph.Node { return graph.MaxPool2D(x, m.Pool) }

// AvgPool2D averages over windows of NCHW inputs (PyTorch's nn.AvgPool2d
// with count_include_pad=True: padding counts as zeros). It has no
// parameters.
type AvgPool2D struct {
	noParams
	Pool tensor.PoolParams // window, stride and padding
}

// NewAvgPool2D returns an average pooling with the given window; a zero
// stride means the window size, as in PyTorch.
func NewAvgPool2D(p tensor.PoolParams) *AvgPool2D { return &AvgPool2D{Pool: p} }

// Forward pools x (N, C, H, W) into (N, C, Ho, Wo). It panics if x is not
// 4-D or the window does not fit (graph.AvgPool2D checks both).
func (m *AvgPool2D) Forward(x *graph.Node) *graph.Node { return graph.AvgPool2D(x, m.Pool) }

// Flatten merges the axes StartDim..EndDim into one (PyTorch's nn.Flatten;
// the defaults 1 and −1 keep the batch axis and flatten the rest).
// Negative axes count from the end.
type Flatten struct {
	noParams
	StartDim, EndDim int // the first and last axis merged, inclusive
}

// NewFlatten returns a Flatten that keeps the batch axis: (N, ...) → (N, rest).
func NewFlatten() *Flatten { return &Flatten{StartDim: 1, EndDim: -1} }

// Forward reshapes x. It panics if the axes are out of range or in the
// wrong order.
func (f *Flatten) Forward(x *graph.Node) *graph.Node {
	if x == nil {
		tensor.Fail("Flatten", "nil input")
	}
	s := x.Shape()
	start, end := f.StartDim, f.EndDim
	if start < 0 {
		start += len(s)
	}
	if end < 0 {
		end += len(s)
	}
	if len(s) == 0 {
		return graph.Reshape(x, 1)
	}
	if start < 0 || end >= len(s) || start > end {
		tensor.Fail("Flatten", "axes %d..%d do not fit input shape %s", f.StartDim, f.EndDim, tensor.FormatShape(s))
	}
	shape := append([]int(nil), s[:start]...)
	n := 1
	for _, d := range s[start : end+1] {
		n *= d
	}
	shape = append(shape, n)
	shape = append(shape, s[end+1:]...)
	return graph.Reshape(x, shape...)
}
