package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Transformed is the distribution of y = f_K(…f_1(x)) for x drawn from
// Base, a normalizing flow when the bijectors are learnable (RealNVP's
// AffineCoupling). By the change of variables,
//
//	log p(y) = log p_Base(x) − Σₖ log |det ∂fₖ/∂x|(xₖ₋₁),  x = f⁻¹(y),
//
// so LogProb runs the bijectors' inverses backwards and adds up their
// log-determinants, each summed over the event axes. Bijectors must keep
// the shape of their input. Like every distribution here it belongs to the
// graph of Base's parameters: build it again after a Reset.
type Transformed struct {
	Base      Distribution
	Bijectors []Bijector // applied in order: f_1 first
}

// inverseLogDetter is a bijector that gives its inverse and the
// log-determinant there at once, sharing work (AffineCoupling's
// conditioner) that Inverse and LogDetJacobian would each repeat.
type inverseLogDetter interface {
	InverseLogDet(y *graph.Node) (x, logDet *graph.Node)
}

// NewTransformed returns the distribution of the bijectors applied in
// order to draws of base. It panics with a *tensor.Error for a nil base
// or bijector.
func NewTransformed(base Distribution, bijectors ...Bijector) *Transformed {
	if base == nil {
		tensor.Fail("probabilistic.Transformed", "nil base distribution")
	}
	for i, b := range bijectors {
		if b == nil {
			tensor.Fail("probabilistic.Transformed", "bijector %d is nil", i)
		}
	}
	return &Transformed{Base: base, Bijectors: bijectors}
}

// LogProb returns log p(y) for y shaped (sample..., batch..., event...),
// dropping the event axes.
func (d *Transformed) LogProb(y *graph.Node) *graph.Node {
	x := y
	var logDet *graph.Node
	for k := len(d.Bijectors) - 1; k >= 0; k-- {
		var ld *graph.Node
		if b, ok := d.Bijectors[k].(inverseLogDetter); ok {
			x, ld = b.InverseLogDet(x)
		} else {
			x = d.Bijectors[k].Inverse(x)
			ld = d.Bijectors[k].LogDetJacobian(x)
		}
		ld = d.eventSum(ld, x.Dim())
		if logDet == nil {
			logDet = ld
		} else {
			logDet = graph.Add(logDet, ld)
		}
	}
	lp := d.Base.LogProb(x)
	if logDet == nil {
		return lp
	}
	return graph.Sub(lp, logDet)
}

// eventSum sums a bijector's log-determinant over whatever event axes it
// still has: elementwise bijectors keep every axis of x (rank xDim), those
// acting on the last axis drop it.
func (d *Transformed) eventSum(ld *graph.Node, xDim int) *graph.Node {
	want := xDim - len(d.Base.EventShape())
	if extra := ld.Dim() - want; extra > 0 {
		axes := make([]int, extra)
		for i := range axes {
			axes[i] = want + i
		}
		return graph.Sum(ld, axes, false)
	}
	return ld
}

// Sample draws n values (no gradient) by pushing Base's draws through the
// bijectors on Base's graph.
func (d *Transformed) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	g := d.Base.Mean().Graph()
	return d.forward(g.Const(d.Base.Sample(rng, n))).Value().To(tensor.CPU)
}

// RSample draws n reparameterised values: Base's reparameterised draws
// pushed through the bijectors, differentiable in Base's and the
// bijectors' parameters. It panics if Base has no reparameterised sampler.
func (d *Transformed) RSample(rng *tensor.RNG, n int) *graph.Node {
	x, err := RSample(d.Base, rng, n)
	if err != nil {
		tensor.Fail("probabilistic.Transformed.RSample", "%v", err)
	}
	return d.forward(x)
}

func (d *Transformed) forward(x *graph.Node) *graph.Node {
	for _, b := range d.Bijectors {
		x = b.Forward(x)
	}
	return x
}

// Entropy panics: a transformed distribution has no closed-form entropy
// (estimate it as −mean LogProb of samples).
func (d *Transformed) Entropy() *graph.Node {
	tensor.Fail("probabilistic.Transformed.Entropy", "no closed form; estimate −E[log p(y)] from samples")
	return nil
}

// Mean panics: there is no closed form (average Sample's draws).
func (d *Transformed) Mean() *graph.Node {
	tensor.Fail("probabilistic.Transformed.Mean", "no closed form; average samples")
	return nil
}

// Variance panics: there is no closed form (use Sample's draws).
func (d *Transformed) Variance() *graph.Node {
	tensor.Fail("probabilistic.Transformed.Variance", "no closed form; use samples")
	return nil
}

// BatchShape returns Base's batch shape.
func (d *Transformed) BatchShape() []int { return d.Base.BatchShape() }

// EventShape returns Base's event shape.
func (d *Transformed) EventShape() []int { return d.Base.EventShape() }
