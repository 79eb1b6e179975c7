package nn

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Linear is the affine layer y = x·Wᵀ + b (PyTorch's nn.Linear), with the
// weight W shaped (out, in) and the bias b shaped (out).
type Linear struct {
	Weight *Param // (Out, In)
	Bias   *Param // (Out), nil without a bias
	In     int    // input features
	Out    int    // output features
}

// NewLinear returns a Linear layer from in to out features in dtype dt,
// initialised as PyTorch does: the weight by Kaiming-uniform with a = √5
// and the bias from U(−1/√in, 1/√in), so both lie in ±1/√in.
func NewLinear(rng *tensor.RNG, in, out int, bias bool, dt tensor.DType) *Linear {
	if in <= 0 || out <= 0 {
		tensor.Fail("nn.NewLinear", "sizes must be positive, got in=%d out=%d", in, out)
	}
	l := &Linear{In: in, Out: out}
	l.Weight = NewParam(KaimingUniform(rng, tensor.Zeros(dt, out, in), math.Sqrt(5), FanIn, "leaky_relu"))
	if bias {
		b := 1 / math.Sqrt(float64(in))
		l.Bias = NewParam(Uniform(rng, tensor.Zeros(dt, out), -b, b))
	}
	return l
}

// String names the layer as its errors do, e.g. "Linear(784→256)".
func (l *Linear) String() string { return fmt.Sprintf("Linear(%d→%d)", l.In, l.Out) }

// Params returns "weight" and, with a bias, "bias".
func (l *Linear) Params() []NamedParam {
	ps := []NamedParam{{"weight", l.Weight}}
	if l.Bias != nil {
		ps = append(ps, NamedParam{"bias", l.Bias})
	}
	return ps
}

// SetTraining does nothing: a Linear layer behaves the same in both modes.
func (l *Linear) SetTraining(bool) {}

// Forward maps x (..., In) to (..., Out). It panics, naming the layer and
// both shapes, if x's last dimension is not In or its dtype differs.
func (l *Linear) Forward(x *graph.Node) *graph.Node {
	// Checked here although MatMulT checks too: "Linear(784→256): input
	// shape (32, 100) does not fit: want (..., 784)" says more than
	// matmul's inner-dimension message about the transposed weight.
	checkInput(l, x, l.Weight.Value.DType())
	s := x.Shape()
	if len(s) == 0 || s[len(s)-1] != l.In {
		tensor.Fail(l.String(), "input shape %s does not fit: want (..., %d)", tensor.FormatShape(s), l.In)
	}
	g := x.Graph()
	if l.Bias != nil {
		return graph.Linear(x, l.Weight.Node(g), l.Bias.Node(g))
	}
	return graph.MatMulT(x, l.Weight.Node(g), false, true)
}
