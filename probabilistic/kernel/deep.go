package kernel

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// ModuleHyperparams returns the parameters of the module m as real-valued
// hyperparameters (Identity bijector, no floor) named prefix + "." + the
// parameter's dotted name ("features.0.weight"). They share m's
// parameters: fitting them trains m, and RawNode is the node m's layers
// use, so gradients flow through m into a model's objective. Models call
// SetDType on them, which converts m's parameters in place.
func ModuleHyperparams(prefix string, m nn.Module) []*Hyperparam {
	if m == nil {
		tensor.Fail("kernel.ModuleHyperparams", "nil module")
	}
	var out []*Hyperparam
	for _, np := range m.Params() {
		p := &Hyperparam{bij: Identity{}, raw: np.Param}
		p.setName(prefix + "." + np.Name)
		out = append(out, p)
	}
	return out
}

// Deep is a deep kernel (Wilson, Hu, Salakhutdinov and Xing 2016, Deep
// kernel learning): a base kernel on features computed by a neural
// network, k(g(x₁), g(x₂)). The network's parameters are hyperparameters
// of the kernel ("features.…", see ModuleHyperparams), so every model that
// fits its kernel's hyperparameters (FitExact, FitSVGP, the multitask and
// Dirichlet models of package gp) trains the network end to end on its
// own objective: the exact marginal likelihood or the variational ELBO.
type Deep struct {
	features nn.Layer
	base     Kernel
	params   []*Hyperparam
}

// NewDeep returns the kernel base(features(x₁), features(x₂)). features
// maps (n, d) inputs to (n, w) features, and base must accept w columns.
// The network should be in evaluation mode where dropout or batch
// statistics would make K(x, x) random.
func NewDeep(features nn.Layer, base Kernel) *Deep {
	if features == nil || base == nil {
		tensor.Fail("kernel.NewDeep", "nil feature extractor or base kernel")
	}
	d := &Deep{features: features, base: base}
	d.params = UniqueHyperparams(append(append([]*Hyperparam(nil), base.Hyperparams()...), ModuleHyperparams("features", features)...))
	return d
}

// Features returns the feature extractor.
func (d *Deep) Features() nn.Layer { return d.features }

// Base returns the kernel on the features.
func (d *Deep) Base() Kernel { return d.base }

// Hyperparams returns the base kernel's hyperparameters, then the
// network's.
func (d *Deep) Hyperparams() []*Hyperparam { return d.params }

// Transform returns the features of x (n, d), (n, w).
func (d *Deep) Transform(x *graph.Node) *graph.Node {
	f := d.features.Forward(x)
	if f.Dim() != 2 || f.Shape()[0] != x.Shape()[0] {
		tensor.Fail("kernel.Deep", "the feature extractor maps inputs %v to %v; want (%d, width)", x.Shape(), f.Shape(), x.Shape()[0])
	}
	return f
}

// K returns base(features(x1), features(x2)); the same node twice is
// K(x, x) for the base kernel too. It panics with a *tensor.Error naming
// the feature width when the base kernel does not accept it (an ARD
// lengthscale of another length).
func (d *Deep) K(x1, x2 *graph.Node) *graph.Node {
	checkInputs("kernel.Deep", x1, x2)
	f1 := d.Transform(x1)
	f2 := f1
	if x2 != x1 {
		f2 = d.Transform(x2)
	}
	defer d.explain(f1)
	return d.base.K(f1, f2)
}

// Diag returns the diagonal of base(features(x), features(x)).
func (d *Deep) Diag(x *graph.Node) *graph.Node {
	checkDiagInput("kernel.Deep", x)
	f := d.Transform(x)
	defer d.explain(f)
	return d.base.Diag(f)
}

// explain re-raises a misuse panic of the base kernel with the feature
// width, the usual cause.
func (d *Deep) explain(f *graph.Node) {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(*tensor.Error); ok {
		panic(&tensor.Error{Op: "kernel.Deep", Msg: fmt.Sprintf("the feature extractor gives %d features, which the base kernel does not accept: %v", f.Shape()[1], e), Caller: e.Caller})
	}
	panic(r)
}
