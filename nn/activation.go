package nn

import "github.com/gradus-ml/gradus/graph"

// Activation layers wrap the graph's elementwise ops as parameter-free
// Layers, for use in Sequential. Outside a Sequential call the ops
// directly (graph.Relu, graph.Tanh, ...). Their zero values are ready to
// use, except that LeakyReLU and ELU take their constants from fields
// (NewLeakyReLU and NewELU set PyTorch's defaults).

// ReLU is max(x, 0).
type ReLU struct{ noParams }

// Forward returns graph.Relu(x).
func (ReLU) Forward(x *graph.Node) *graph.Node { return graph.Relu(x) }

// Sigmoid is 1/(1 + e⁻ˣ).
type Sigmoid struct{ noParams }

// Forward returns graph.Sigmoid(x).
func (Sigmoid) Forward(x *graph.Node) *graph.Node { return graph.Sigmoid(x) }

// Tanh is the hyperbolic tangent.
type Tanh struct{ noParams }

// Forward returns graph.Tanh(x).
func (Tanh) Forward(x *graph.Node) *graph.Node { return graph.Tanh(x) }

// GELU is x·Φ(x), the exact (erf) form, as PyTorch's default.
type GELU struct{ noParams }

// Forward returns graph.Gelu(x).
func (GELU) Forward(x *graph.Node) *graph.Node { return graph.Gelu(x) }

// SiLU is x·σ(x) (Elfwing et al. 2018; "swish"), PyTorch's nn.SiLU.
type SiLU struct{ noParams }

// Forward applies x·σ(x) elementwise.
func (SiLU) Forward(x *graph.Node) *graph.Node { return graph.Mul(x, graph.Sigmoid(x)) }

// Softplus is log(1 + eˣ) (PyTorch's nn.Softplus with beta 1; the
// threshold is not needed, the op is stable).
type Softplus struct{ noParams }

// Forward returns graph.Softplus(x).
func (Softplus) Forward(x *graph.Node) *graph.Node { return graph.Softplus(x) }

// Identity returns its input.
type Identity struct{ noParams }

// Forward returns x.
func (Identity) Forward(x *graph.Node) *graph.Node { return x }

// LeakyReLU is x where x > 0 and Slope·x elsewhere.
type LeakyReLU struct {
	noParams
	Slope float64 // the slope for x < 0
}

// NewLeakyReLU returns a LeakyReLU with the given negative slope (PyTorch
// uses 0.01).
func NewLeakyReLU(slope float64) LeakyReLU { return LeakyReLU{Slope: slope} }

// Forward returns graph.LeakyRelu(x, Slope).
func (a LeakyReLU) Forward(x *graph.Node) *graph.Node { return graph.LeakyRelu(x, a.Slope) }

// ELU is x where x > 0 and Alpha·(eˣ − 1) elsewhere.
type ELU struct {
	noParams
	Alpha float64 // the scale of eˣ − 1 for x ≤ 0
}

// NewELU returns an ELU with the given alpha (PyTorch uses 1).
func NewELU(alpha float64) ELU { return ELU{Alpha: alpha} }

// Forward returns graph.Elu(x, Alpha).
func (a ELU) Forward(x *graph.Node) *graph.Node { return graph.Elu(x, a.Alpha) }

// Softmax is exp(x)/Σexp(x) along Axis (PyTorch's nn.Softmax(dim)).
type Softmax struct {
	noParams
	Axis int // the axis normalised over; negative counts from the end
}

// Forward returns graph.Softmax(x, Axis).
func (a Softmax) Forward(x *graph.Node) *graph.Node { return graph.Softmax(x, a.Axis) }

// LogSoftmax is x − log Σexp(x) along Axis (PyTorch's nn.LogSoftmax(dim)).
type LogSoftmax struct {
	noParams
	Axis int // the axis normalised over; negative counts from the end
}

// Forward returns graph.LogSoftmax(x, Axis).
func (a LogSoftmax) Forward(x *graph.Node) *graph.Node { return graph.LogSoftmax(x, a.Axis) }
