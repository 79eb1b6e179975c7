package nn

import (
	"fmt"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// GroupNorm normalises the channels of (N, C, …) inputs in Groups groups
// (Wu and He 2018; PyTorch's nn.GroupNorm): each sample's group of C/Groups
// channels is scaled to zero mean and unit (biased) variance over its
// channels and positions, then an affine per-channel weight and bias are
// applied. Groups = C is instance normalisation (PyTorch's InstanceNorm
// with affine=True; see NewInstanceNorm) and Groups = 1 normalises each
// sample over all its features.
type GroupNorm struct {
	Groups, Channels int
	Eps              float64
	Weight, Bias     *Param // (C); nil without affine
}

// NewGroupNorm returns a GroupNorm of channels split into groups, with
// eps added to the variance (PyTorch uses 1e-5) and an affine weight 1 and
// bias 0 when affine.
func NewGroupNorm(groups, channels int, eps float64, affine bool, dt tensor.DType) *GroupNorm {
	if groups <= 0 || channels <= 0 || channels%groups != 0 {
		tensor.Fail("nn.NewGroupNorm", "%d channels do not split into %d groups", channels, groups)
	}
	g := &GroupNorm{Groups: groups, Channels: channels, Eps: eps}
	if affine {
		g.Weight, g.Bias = NewParam(tensor.Ones(dt, channels)), NewParam(tensor.Zeros(dt, channels))
	}
	return g
}

// NewInstanceNorm returns instance normalisation over channels: a
// GroupNorm with one group per channel.
func NewInstanceNorm(channels int, eps float64, affine bool, dt tensor.DType) *GroupNorm {
	return NewGroupNorm(channels, channels, eps, affine, dt)
}

// String names the layer in errors.
func (l *GroupNorm) String() string { return fmt.Sprintf("GroupNorm(%d, %d)", l.Groups, l.Channels) }

// Params returns "weight" and "bias", or nil without affine.
func (l *GroupNorm) Params() []NamedParam {
	if l.Weight == nil {
		return nil
	}
	return []NamedParam{{"weight", l.Weight}, {"bias", l.Bias}}
}

// SetTraining does nothing: the statistics are the input's own.
func (l *GroupNorm) SetTraining(bool) {}

// Forward normalises x (N, C, …).
func (l *GroupNorm) Forward(x *graph.Node) *graph.Node {
	if l.Weight != nil {
		checkInput(l, x, l.Weight.Value.DType())
	} else if x == nil {
		tensor.Fail(l.String(), "nil input")
	}
	s := x.Shape()
	if len(s) < 2 || s[1] != l.Channels {
		tensor.Fail(l.String(), "input shape %s does not fit: want (N, %d, …)", tensor.FormatShape(s), l.Channels)
	}
	rest := 1
	for _, d := range s[2:] {
		rest *= d
	}
	// Each group of each image is one run of C/G·rest elements.
	y := standardizeRows(x, l.Channels/l.Groups*rest, l.Eps)
	if l.Weight == nil || y.Size() == 0 {
		return y
	}
	g := x.Graph()
	return graph.ChannelAffine(y, l.Weight.Node(g), l.Bias.Node(g))
}

// RMSNorm scales each input by the root mean square over its last axes
// (Zhang and Sennrich 2019; PyTorch's nn.RMSNorm): y = x/√(mean(x²) + Eps)
// · weight, with no centring.
type RMSNorm struct {
	Shape  []int
	Eps    float64
	Weight *Param // Shape, initialised to 1; nil without affine
}

// NewRMSNorm returns an RMSNorm over inputs ending in shape.
func NewRMSNorm(shape []int, eps float64, affine bool, dt tensor.DType) *RMSNorm {
	if len(shape) == 0 {
		tensor.Fail("nn.NewRMSNorm", "empty normalised shape")
	}
	l := &RMSNorm{Shape: append([]int(nil), shape...), Eps: eps}
	if affine {
		l.Weight = NewParam(tensor.Ones(dt, shape...))
	}
	return l
}

// String names the layer in errors.
func (l *RMSNorm) String() string { return fmt.Sprintf("RMSNorm(%s)", tensor.FormatShape(l.Shape)) }

// Params returns "weight", or nil without affine.
func (l *RMSNorm) Params() []NamedParam {
	if l.Weight == nil {
		return nil
	}
	return []NamedParam{{"weight", l.Weight}}
}

// SetTraining does nothing.
func (l *RMSNorm) SetTraining(bool) {}

// Forward normalises x (..., Shape...).
func (l *RMSNorm) Forward(x *graph.Node) *graph.Node {
	if x == nil {
		tensor.Fail(l.String(), "nil input")
	}
	s := x.Shape()
	k := len(l.Shape)
	if len(s) < k || !slices.Equal(s[len(s)-k:], l.Shape) {
		tensor.Fail(l.String(), "input shape %s does not fit: want (..., %s)", tensor.FormatShape(s), joinDims(l.Shape))
	}
	axes := make([]int, k)
	for i := range axes {
		axes[i] = len(s) - k + i
	}
	y := graph.Div(x, graph.Sqrt(graph.AddScalar(graph.Mean(graph.Square(x), axes, true), l.Eps)))
	if l.Weight != nil {
		y = graph.Mul(y, l.Weight.Node(x.Graph()))
	}
	return y
}

// Conv1D is a 1-D convolution over (N, C, L) inputs (PyTorch's nn.Conv1d),
// computed as a Conv2D of height 1; the weight is (Out, In/Groups, k).
type Conv1D struct {
	conv   *Conv2D
	Weight *Param // (Out, In/Groups, Kernel), a view of the 2-D weight
	Bias   *Param
}

// Conv1DOptions holds NewConv1D's options. The zero value is PyTorch's
// default in float32: stride 1, no padding, dilation 1, one group, with a
// bias.
type Conv1DOptions struct {
	Stride   int          // 0 means 1
	Padding  int          // zeros added at both ends of the input
	Dilation int          // 0 means 1
	Groups   int          // 0 means 1; In and Out must be multiples of it
	NoBias   bool         // leave out the bias
	DType    tensor.DType // the parameters' dtype; 0 means tensor.Float32
}

// NewConv1D returns a 1-D convolution from in to out channels with a
// kernel of kernel taps, initialised as PyTorch does. The options mean
// what they do in PyTorch's nn.Conv1d.
//
//	conv := nn.NewConv1D(rng, 16, 32, 3, nn.Conv1DOptions{Padding: 1})
func NewConv1D(rng *tensor.RNG, in, out, kernel int, opts Conv1DOptions) *Conv1D {
	c := NewConv2D(rng, in, out, [2]int{1, kernel}, Conv2DOptions{Stride: [2]int{1, opts.Stride}, Padding: [2]int{0, opts.Padding},
		Dilation: [2]int{1, opts.Dilation}, Groups: opts.Groups, NoBias: opts.NoBias, DType: opts.DType})
	w := c.Weight.Value
	return &Conv1D{conv: c, Weight: NewParam(tensor.Reshape(w, w.Shape()[0], w.Shape()[1], kernel)), Bias: c.Bias}
}

// String names the layer in errors.
func (c *Conv1D) String() string {
	return fmt.Sprintf("Conv1D(%d→%d, %d)", c.conv.In, c.conv.Out, c.conv.Kernel[1])
}

// Params returns "weight" (Out, In/Groups, k) and, with a bias, "bias".
func (c *Conv1D) Params() []NamedParam {
	ps := []NamedParam{{"weight", c.Weight}}
	if c.Bias != nil {
		ps = append(ps, NamedParam{"bias", c.Bias})
	}
	return ps
}

// SetTraining does nothing.
func (c *Conv1D) SetTraining(bool) {}

// Forward convolves x (N, In, L) into (N, Out, Lo).
func (c *Conv1D) Forward(x *graph.Node) *graph.Node {
	checkInput(c, x, c.Weight.Value.DType())
	s := x.Shape()
	if len(s) != 3 || s[1] != c.conv.In {
		tensor.Fail(c.String(), "input shape %s does not fit: want (N, %d, L)", tensor.FormatShape(s), c.conv.In)
	}
	g := x.Graph()
	w := c.Weight.Node(g)
	ws := w.Shape()
	y := graph.Conv2D(graph.Reshape(x, s[0], s[1], 1, s[2]), graph.Reshape(w, ws[0], ws[1], 1, ws[2]), c.conv.Conv)
	ys := y.Shape()
	y = graph.Reshape(y, ys[0], ys[1], ys[3])
	if c.Bias != nil {
		y = graph.Add(y, graph.Reshape(c.Bias.Node(g), 1, c.conv.Out, 1))
	}
	return y
}
