package nn

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// ConvTranspose2D is PyTorch's nn.ConvTranspose2d: the adjoint of a Conv2D
// (the "fractionally strided" convolution that decoders and GAN
// generators upsample with), computed as that convolution's input
// gradient. The weight is shaped (In, Out/Groups, kh, kw), as in PyTorch,
// and the output size is (H − 1)·stride − 2·padding + dilation·(kh − 1) +
// outputPadding + 1.
type ConvTranspose2D struct {
	Weight        *Param // (In, Out/Groups, Kernel[0], Kernel[1])
	Bias          *Param // (Out), nil without a bias
	In, Out       int
	Kernel        [2]int
	Conv          tensor.ConvParams // of the convolution this layer is the adjoint of
	OutputPadding [2]int            // extra rows and columns at the bottom and right (< stride or dilation)
}

// NewConvTranspose2D returns the layer initialised as PyTorch does: weight
// and bias from U(−1/√fan, 1/√fan) with fan = (Out/groups)·kh·kw. The
// options' stride, padding, dilation and groups mean what they mean for the
// equivalent convolution; OutputPadding resolves the output size when the
// stride is above 1.
func NewConvTranspose2D(rng *tensor.RNG, in, out int, kernel [2]int, opts Conv2DOptions) *ConvTranspose2D {
	cfg, outputPadding, dt := opts, opts.OutputPadding, opts.dtype()
	p := tensor.ConvParams{Stride: cfg.Stride, Padding: cfg.Padding, Dilation: cfg.Dilation, Groups: cfg.Groups}
	for i := range 2 {
		if p.Stride[i] == 0 {
			p.Stride[i] = 1
		}
		if p.Dilation[i] == 0 {
			p.Dilation[i] = 1
		}
		if outputPadding[i] < 0 || (outputPadding[i] >= p.Stride[i] && outputPadding[i] >= p.Dilation[i]) {
			tensor.Fail("nn.NewConvTranspose2D", "output padding %v must be smaller than the stride %v or the dilation %v", outputPadding, p.Stride, p.Dilation)
		}
	}
	if p.Groups == 0 {
		p.Groups = 1
	}
	if in <= 0 || out <= 0 || in%p.Groups != 0 || out%p.Groups != 0 || kernel[0] <= 0 || kernel[1] <= 0 {
		tensor.Fail("nn.NewConvTranspose2D", "invalid configuration: in=%d out=%d kernel=%v groups=%d", in, out, kernel, p.Groups)
	}
	fan := out / p.Groups * kernel[0] * kernel[1]
	b := 1 / math.Sqrt(float64(fan))
	c := &ConvTranspose2D{In: in, Out: out, Kernel: kernel, Conv: p, OutputPadding: outputPadding}
	c.Weight = NewParam(Uniform(rng, tensor.Zeros(dt, in, out/p.Groups, kernel[0], kernel[1]), -b, b))
	if !cfg.NoBias {
		c.Bias = NewParam(Uniform(rng, tensor.Zeros(dt, out), -b, b))
	}
	return c
}

// String names the layer in errors.
func (c *ConvTranspose2D) String() string {
	return fmt.Sprintf("ConvTranspose2D(%d→%d, %d×%d)", c.In, c.Out, c.Kernel[0], c.Kernel[1])
}

// Params returns "weight" and, with a bias, "bias".
func (c *ConvTranspose2D) Params() []NamedParam {
	ps := []NamedParam{{"weight", c.Weight}}
	if c.Bias != nil {
		ps = append(ps, NamedParam{"bias", c.Bias})
	}
	return ps
}

// SetTraining does nothing.
func (c *ConvTranspose2D) SetTraining(bool) {}

// OutputShape returns the output shape for an input of shape (N, In, H, W).
func (c *ConvTranspose2D) OutputShape(in []int) []int {
	out := []int{in[0], c.Out, 0, 0}
	for i := range 2 {
		out[2+i] = (in[2+i]-1)*c.Conv.Stride[i] - 2*c.Conv.Padding[i] + c.Conv.Dilation[i]*(c.Kernel[i]-1) + c.OutputPadding[i] + 1
	}
	return out
}

// Forward maps x (N, In, H, W) to (N, Out, Ho, Wo).
func (c *ConvTranspose2D) Forward(x *graph.Node) *graph.Node {
	checkInput(c, x, c.Weight.Value.DType())
	s := x.Shape()
	if len(s) != 4 || s[1] != c.In {
		tensor.Fail(c.String(), "input shape %s does not fit: want (N, %d, H, W)", tensor.FormatShape(s), c.In)
	}
	out := c.OutputShape(s)
	if out[2] <= 0 || out[3] <= 0 {
		tensor.Fail(c.String(), "input shape %s gives an empty output %s", tensor.FormatShape(s), tensor.FormatShape(out))
	}
	g := x.Graph()
	y := graph.Conv2DInputGrad(x, c.Weight.Node(g), out, c.Conv)
	if c.Bias != nil {
		y = graph.Add(y, graph.Reshape(c.Bias.Node(g), 1, c.Out, 1, 1))
	}
	return y
}

// Upsample enlarges NCHW inputs by integer factors (PyTorch's
// nn.Upsample with mode "nearest" or "bilinear", align_corners false).
type Upsample struct {
	noParams
	Scale    [2]int
	Bilinear bool
}

// String names the layer in errors.
func (u Upsample) String() string { return fmt.Sprintf("Upsample(×%d, ×%d)", u.Scale[0], u.Scale[1]) }

// Forward maps x (N, C, H, W) to (N, C, H·s₀, W·s₁): each value repeated
// (nearest), or interpolated between the four nearest inputs with
// half-pixel centres (bilinear).
func (u Upsample) Forward(x *graph.Node) *graph.Node {
	s := x.Shape()
	if len(s) != 4 || u.Scale[0] < 1 || u.Scale[1] < 1 {
		tensor.Fail(u.String(), "want (N, C, H, W) input and positive scales, got %s", tensor.FormatShape(s))
	}
	n, c, h, w := s[0], s[1], s[2], s[3]
	if !u.Bilinear {
		y := graph.Reshape(x, n, c, h, 1, w, 1)
		y = graph.BroadcastTo(y, n, c, h, u.Scale[0], w, u.Scale[1])
		return graph.Reshape(y, n, c, h*u.Scale[0], w*u.Scale[1])
	}
	g := x.Graph()
	ah := g.Const(interpMatrix(x.DType(), h, u.Scale[0]))
	aw := g.Const(interpMatrix(x.DType(), w, u.Scale[1]))
	return graph.MatMulT(graph.MatMul(ah, x), aw, false, true)
}

// interpMatrix returns the (n·s, n) linear-interpolation matrix of
// PyTorch's bilinear upsampling along one axis: output i reads source
// (i + ½)/s − ½, clamped at 0, between its two neighbours.
func interpMatrix(dt tensor.DType, n, s int) *tensor.Tensor {
	m := make([]float64, n*s*n)
	for i := range n * s {
		src := math.Max((float64(i)+0.5)/float64(s)-0.5, 0)
		i0 := min(int(src), n-1)
		i1 := min(i0+1, n-1)
		l := src - float64(i0)
		m[i*n+i0] += 1 - l
		m[i*n+i1] += l
	}
	return tensor.FromValues(dt, m, n*s, n)
}
