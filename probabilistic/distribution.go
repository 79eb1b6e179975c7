package probabilistic

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Distribution is a batch of probability distributions whose parameters are
// graph nodes, so that every quantity it returns as a node is differentiable
// with respect to them.
type Distribution interface {
	// LogProb returns the log-density (or log-mass) of x, which has shape
	// (sample..., batch..., event...) with leading axes broadcasting against
	// the batch shape; the result drops the event axes. x must belong to the
	// parameters' graph and have their dtype.
	LogProb(x *graph.Node) *graph.Node
	// Sample draws values without gradient: shape (n, batch..., event...)
	// for n > 0, (batch..., event...) for n == 0. It panics if n < 0. The
	// draws are made on the host from rng's stream and returned on the
	// CPU, whatever device the parameters live on (the same values as
	// for parameters on the CPU); move them with To.
	Sample(rng *tensor.RNG, n int) *tensor.Tensor
	// Entropy returns the differential (or Shannon) entropy, in nats, shaped
	// like the batch.
	Entropy() *graph.Node
	// Mean returns the mean, shaped (batch..., event...).
	Mean() *graph.Node
	// Variance returns the variance of each component, shaped
	// (batch..., event...).
	Variance() *graph.Node
	// BatchShape returns the broadcast shape of the parameters without the
	// event axes.
	BatchShape() []int
	// EventShape returns the shape of one draw: () for scalar
	// distributions, (d) for a d-dimensional one.
	EventShape() []int
}

// RSampler is a Distribution with a reparameterised sampler: RSample returns
// a node x = f(params, ε) whose noise ε is a constant of the graph, so x is
// differentiable with respect to the parameters (pathwise gradients). The
// shape is that of Sample.
type RSampler interface {
	Distribution
	RSample(rng *tensor.RNG, n int) *graph.Node
}

// RSample draws n reparameterised samples from d, or returns an error naming
// d's type when it has no reparameterisation (discrete distributions, and
// Gamma, Beta and Dirichlet, which are sampled by rejection).
func RSample(d Distribution, rng *tensor.RNG, n int) (*graph.Node, error) {
	r, ok := d.(RSampler)
	if !ok {
		return nil, fmt.Errorf("probabilistic.RSample: %T has no reparameterised sampler; use Sample (no gradient) or a score-function estimator", d)
	}
	return r.RSample(rng, n), nil
}

const log2Pi = 1.8378770664093453 // log 2π

// checkParams makes sure the parameters are non-nil, live in one graph and
// share a dtype, so later errors name the distribution rather than an op.
func checkParams(op string, ns ...*graph.Node) {
	for _, n := range ns {
		if n == nil {
			tensor.Fail(op, "parameter is nil (parameters %s)", graph.Describe(ns...))
		}
	}
	for _, n := range ns[1:] {
		if n.Graph() != ns[0].Graph() {
			tensor.Fail(op, "parameters %s belong to different graphs", graph.Describe(ns...))
		}
		if n.DType() != ns[0].DType() {
			tensor.Fail(op, "parameters %s have mixed dtypes", graph.Describe(ns...))
		}
	}
}

// checkConst fails when a constant parameter has a value outside its domain.
// Variables are not checked: their values move during training, and a
// density at an invalid parameter is simply NaN.
func checkConst(op, name string, n *graph.Node, ok func(float64) bool, want string) {
	if !n.IsConst() {
		return
	}
	for _, v := range n.Value().Values() {
		if !ok(v) {
			tensor.Fail(op, "%s %s has the value %g: want %s", name, graph.Describe(n), v, want)
		}
	}
}

func positive(v float64) bool { return v > 0 }

// batchOf broadcasts the parameter shapes; the panic names op and every
// shape when they do not broadcast.
func batchOf(op string, shapes ...[]int) []int {
	return tensor.BroadcastShapes(op, shapes...)
}

// checkValue checks that x fits a distribution with the given batch and
// event shapes: same graph and dtype as param, trailing axes equal to the
// event shape, the rest broadcasting against the batch shape.
func checkValue(op string, x, param *graph.Node, batch, event []int) {
	if x == nil {
		tensor.Fail(op, "value is nil")
	}
	if x.Graph() != param.Graph() {
		tensor.Fail(op, "value %s belongs to another graph than the parameters", graph.Describe(x))
	}
	if x.DType() != param.DType() {
		tensor.Fail(op, "value %s has another dtype than the parameters (%s)", graph.Describe(x), param.DType())
	}
	s := x.Shape()
	want := tensor.FormatShape(append(append([]int{}, batch...), event...))
	if len(s) < len(event) {
		tensor.Fail(op, "value shape %s does not fit batch and event shape %s", tensor.FormatShape(s), want)
	}
	k := len(s) - len(event)
	for i, d := range event {
		if s[k+i] != d {
			tensor.Fail(op, "value shape %s does not end with the event shape %s (batch and event shape %s)", tensor.FormatShape(s), tensor.FormatShape(event), want)
		}
	}
	lead := s[:k]
	for i := 1; i <= len(lead) && i <= len(batch); i++ {
		a, b := lead[len(lead)-i], batch[len(batch)-i]
		if a != b && a != 1 && b != 1 {
			tensor.Fail(op, "value shape %s does not broadcast with batch and event shape %s", tensor.FormatShape(s), want)
		}
	}
}

// sampleShape returns (n, batch..., event...), or (batch..., event...) for
// n == 0.
func sampleShape(op string, n int, batch, event []int) []int {
	if n < 0 {
		tensor.Fail(op, "number of samples %d is negative", n)
	}
	s := []int{} // non-nil: FromValues reads a nil shape as 1-D
	if n > 0 {
		s = append(s, n)
	}
	s = append(s, batch...)
	return append(s, event...)
}

// expandValues returns t's values broadcast to shape, in row-major order.
func expandValues(t *tensor.Tensor, shape []int) []float64 {
	return tensor.Expand(t, shape...).Values()
}

// concatShape joins shapes.
func concatShape(ss ...[]int) []int {
	var out []int
	for _, s := range ss {
		out = append(out, s...)
	}
	if out == nil {
		out = []int{}
	}
	return out
}

func prod(s []int) int {
	p := 1
	for _, d := range s {
		p *= d
	}
	return p
}

// scalar returns the constant v in n's graph and dtype.
func scalar(n *graph.Node, v float64) *graph.Node {
	return n.Graph().Scalar(n.DType(), v)
}

// lbeta returns log B(a, b) = log Γ(a) + log Γ(b) − log Γ(a + b).
func lbeta(a, b *graph.Node) *graph.Node {
	return graph.Sub(graph.Add(graph.Lgamma(a), graph.Lgamma(b)), graph.Lgamma(graph.Add(a, b)))
}

// sampleGamma draws from Gamma(a, 1) by Marsaglia and Tsang's method (2000);
// for a < 1 it boosts the shape to a + 1 and scales by U^{1/a}.
func sampleGamma(rng *tensor.RNG, a float64) float64 {
	if a <= 0 || math.IsNaN(a) {
		return math.NaN()
	}
	if a < 1 {
		u := 1 - rng.Float64() // (0, 1]
		return sampleGamma(rng, a+1) * math.Pow(u, 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 {
			return d * v
		}
		if math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// hostValue is n's value on the CPU, where the samplers draw: the value
// itself on the CPU, a copy of a GPU value.
func hostValue(n *graph.Node) *tensor.Tensor { return n.Value().To(tensor.CPU) }
