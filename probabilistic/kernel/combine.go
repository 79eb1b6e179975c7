package kernel

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Sum is the sum of kernels: the covariance of a sum of independent
// processes.
type Sum struct{ kernels []Kernel }

// NewSum returns k₁ + k₂ + …; nested sums are flattened. Hyperparameter
// names that collide are made unique ("rbf_2.lengthscale"). It panics with
// a *tensor.Error if no kernel is given.
func NewSum(ks ...Kernel) *Sum {
	if len(ks) == 0 {
		tensor.Fail("kernel.NewSum", "no kernels")
	}
	s := &Sum{}
	for _, k := range ks {
		if inner, ok := k.(*Sum); ok {
			s.kernels = append(s.kernels, inner.kernels...)
		} else {
			s.kernels = append(s.kernels, k)
		}
	}
	s.Hyperparams()
	return s
}

// Kernels returns the terms.
func (s *Sum) Kernels() []Kernel { return s.kernels }

// Hyperparams returns the terms' hyperparameters in order.
func (s *Sum) Hyperparams() []*Hyperparam { return collectParams(s.kernels) }

// K returns Σ kᵢ(x1, x2).
func (s *Sum) K(x1, x2 *graph.Node) *graph.Node {
	out := s.kernels[0].K(x1, x2)
	for _, k := range s.kernels[1:] {
		out = graph.Add(out, k.K(x1, x2))
	}
	return out
}

// Diag returns Σ diag kᵢ(x, x).
func (s *Sum) Diag(x *graph.Node) *graph.Node {
	out := s.kernels[0].Diag(x)
	for _, k := range s.kernels[1:] {
		out = graph.Add(out, k.Diag(x))
	}
	return out
}

// Product is the elementwise product of kernels, e.g. a periodic kernel
// times an RBF for a quasi-periodic process whose pattern drifts.
type Product struct{ kernels []Kernel }

// NewProduct returns k₁ · k₂ · …; nested products are flattened. It panics
// with a *tensor.Error if no kernel is given.
func NewProduct(ks ...Kernel) *Product {
	if len(ks) == 0 {
		tensor.Fail("kernel.NewProduct", "no kernels")
	}
	p := &Product{}
	for _, k := range ks {
		if inner, ok := k.(*Product); ok {
			p.kernels = append(p.kernels, inner.kernels...)
		} else {
			p.kernels = append(p.kernels, k)
		}
	}
	p.Hyperparams()
	return p
}

// Kernels returns the factors.
func (p *Product) Kernels() []Kernel { return p.kernels }

// Hyperparams returns the factors' hyperparameters in order.
func (p *Product) Hyperparams() []*Hyperparam { return collectParams(p.kernels) }

// K returns Π kᵢ(x1, x2) elementwise.
func (p *Product) K(x1, x2 *graph.Node) *graph.Node {
	out := p.kernels[0].K(x1, x2)
	for _, k := range p.kernels[1:] {
		out = graph.Mul(out, k.K(x1, x2))
	}
	return out
}

// Diag returns Π diag kᵢ(x, x).
func (p *Product) Diag(x *graph.Node) *graph.Node {
	out := p.kernels[0].Diag(x)
	for _, k := range p.kernels[1:] {
		out = graph.Mul(out, k.Diag(x))
	}
	return out
}

// Scale multiplies a kernel by a learnable variance ("scale.variance"),
// GPyTorch's ScaleKernel: the usual way to give a unit-variance kernel
// such as the RBF its amplitude.
type Scale struct {
	kernel   Kernel
	variance *Hyperparam
}

// NewScale returns variance·k.
func NewScale(k Kernel, variance float64) *Scale {
	s := &Scale{kernel: k, variance: NewHyperparam("scale.variance", variance)}
	s.Hyperparams()
	return s
}

// Kernel returns the scaled kernel.
func (s *Scale) Kernel() Kernel { return s.kernel }

// Variance returns the variance hyperparameter.
func (s *Scale) Variance() *Hyperparam { return s.variance }

// Hyperparams returns the variance followed by the kernel's hyperparameters.
func (s *Scale) Hyperparams() []*Hyperparam {
	return UniqueHyperparams(append([]*Hyperparam{s.variance}, s.kernel.Hyperparams()...))
}

// K returns variance·k(x1, x2).
func (s *Scale) K(x1, x2 *graph.Node) *graph.Node {
	return graph.Mul(s.variance.Node(x1.Graph()), s.kernel.K(x1, x2))
}

// Diag returns variance·diag k(x, x).
func (s *Scale) Diag(x *graph.Node) *graph.Node {
	return graph.Mul(s.variance.Node(x.Graph()), s.kernel.Diag(x))
}

// collectParams concatenates the kernels' hyperparameters, dropping
// repeats and making names unique.
func collectParams(ks []Kernel) []*Hyperparam {
	var ps []*Hyperparam
	for _, k := range ks {
		ps = append(ps, k.Hyperparams()...)
	}
	return UniqueHyperparams(ps)
}
