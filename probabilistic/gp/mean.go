package gp

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// MeanFunc is a prior mean function m(x) with learnable hyperparameters,
// for ExactOptions.MeanFunc and SamplePrior: y = m(x) + f(x) + ε with f
// the zero-mean GP. Fitting learns its hyperparameters with the kernel's
// (Rasmussen and Williams 2006, Gaussian Processes for Machine Learning,
// §2.7).
type MeanFunc interface {
	// Mean returns m(x) for x (n, d), shaped (n).
	Mean(x *graph.Node) *graph.Node
	// Hyperparams returns the learnable parameters.
	Hyperparams() []*kernel.Hyperparam
}

// LinearMean is the mean m(x) = x·w + b ("mean.weight" (d), "mean.bias").
type LinearMean struct {
	w, b *kernel.Hyperparam
	d    int
}

// NewLinearMean returns the linear mean on d inputs, starting at zero. It
// panics with a *tensor.Error if d < 1.
func NewLinearMean(d int) *LinearMean {
	if d < 1 {
		tensor.Fail("gp.NewLinearMean", "%d inputs", d)
	}
	return &LinearMean{w: kernel.NewUnconstrainedHyperparam("mean.weight", make([]float64, d)...),
		b: kernel.NewUnconstrainedHyperparam("mean.bias", 0), d: d}
}

// Weight returns the slope hyperparameter "mean.weight".
func (m *LinearMean) Weight() *kernel.Hyperparam { return m.w }

// Bias returns the intercept hyperparameter "mean.bias".
func (m *LinearMean) Bias() *kernel.Hyperparam { return m.b }

// Hyperparams returns the weight and the bias.
func (m *LinearMean) Hyperparams() []*kernel.Hyperparam { return []*kernel.Hyperparam{m.w, m.b} }

// Mean returns x·w + b. It panics with a *tensor.Error unless x is (n, d).
func (m *LinearMean) Mean(x *graph.Node) *graph.Node {
	if x.Dim() != 2 || x.Shape()[1] != m.d {
		tensor.Fail("gp.LinearMean", "inputs of shape %v; want (n, %d)", x.Shape(), m.d)
	}
	g := x.Graph()
	return graph.Add(graph.MatMul(x, graph.Reshape(m.w.Node(g), m.d)), m.b.Node(g))
}

// ModuleMean is a mean computed by a neural network, m(x) = net(x), whose
// parameters are hyperparameters named "mean.…" (kernel.ModuleHyperparams):
// fitting the GP trains the network.
type ModuleMean struct {
	net    nn.Layer
	params []*kernel.Hyperparam
}

// NewModuleMean returns the mean net(x); net maps (n, d) to (n, 1) or (n).
// It panics with a *tensor.Error if net is nil.
func NewModuleMean(net nn.Layer) *ModuleMean {
	if net == nil {
		tensor.Fail("gp.NewModuleMean", "nil network")
	}
	return &ModuleMean{net: net, params: kernel.ModuleHyperparams("mean", net)}
}

// Hyperparams returns the network's parameters.
func (m *ModuleMean) Hyperparams() []*kernel.Hyperparam { return m.params }

// Mean returns net(x) as (n). It panics with a *tensor.Error if the
// network's output is not (n, 1) or (n).
func (m *ModuleMean) Mean(x *graph.Node) *graph.Node {
	out := m.net.Forward(x)
	n := x.Shape()[0]
	s := out.Shape()
	if !((len(s) == 1 && s[0] == n) || (len(s) == 2 && s[0] == n && s[1] == 1)) {
		tensor.Fail("gp.ModuleMean", "the network maps inputs %v to %v; want (%d, 1) or (%d)", x.Shape(), s, n, n)
	}
	return graph.Reshape(out, n)
}
