package ppl

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// SupportBijector is what a distribution outside package probabilistic's
// built-in set implements to be sampled by NUTS or fitted by the automatic
// guides: the bijector from the real line (or ℝᵏ) onto its support, nil
// for the real line.
type SupportBijector interface {
	SupportBijector() probabilistic.Bijector
}

// SupportError reports observed data outside the support of their site's
// distribution. Run panics with it; the engines return it before any work.
type SupportError struct {
	Site   string
	Dist   string
	Index  int     // the first offending element, row-major
	Value  float64 // its value
	Want   string  // the support, in words
	Caller string  // the model's statement
}

// Error says which site, element and value, and what the support is.
func (e *SupportError) Error() string {
	return fmt.Sprintf("ppl: observed site %q (%s) has the value %g at element %d, outside the support %s (called at %s)",
		e.Site, e.Dist, e.Value, e.Index, e.Want, e.Caller)
}

type supportKind int

const (
	unknownSupport supportKind = iota
	realSupport
	positiveSupport
	unitSupport
	intervalSupport
	simplexSupport
	binarySupport
	countSupport
	categorySupport
	customSupport
)

// support describes a distribution's support: how to reach it from the
// real line and how to test a value against it.
type support struct {
	kind     supportKind
	discrete bool
	k        int         // categories
	lo, hi   *graph.Node // interval bounds
	custom   probabilistic.Bijector
}

// supportOf returns d's support, false when it is not known.
func supportOf(d probabilistic.Distribution) (support, bool) {
	switch d := d.(type) {
	case SupportBijector:
		return support{kind: customSupport, custom: d.SupportBijector()}, true
	case *probabilistic.Normal, *probabilistic.StudentT, *probabilistic.Laplace,
		*probabilistic.MultivariateNormal, *probabilistic.MultivariateStudentT:
		return support{kind: realSupport}, true
	case *probabilistic.Gamma:
		return support{kind: positiveSupport}, true
	case *probabilistic.Beta:
		return support{kind: unitSupport}, true
	case *probabilistic.Uniform:
		return support{kind: intervalSupport, lo: d.Low, hi: d.High}, true
	case *probabilistic.Dirichlet:
		return support{kind: simplexSupport}, true
	case *probabilistic.Bernoulli:
		return support{kind: binarySupport, discrete: true}, true
	case *probabilistic.Poisson, *probabilistic.Binomial, *probabilistic.NegativeBinomial:
		return support{kind: countSupport, discrete: true}, true
	case *probabilistic.Categorical:
		return support{kind: categorySupport, discrete: true, k: d.Logits.Shape()[d.Logits.Dim()-1]}, true
	case pointMass:
		return support{kind: realSupport}, true
	}
	return support{}, false
}

func (sp support) what() string {
	switch sp.kind {
	case realSupport:
		return "the real line"
	case positiveSupport:
		return "the positive reals"
	case unitSupport:
		return "the unit interval [0, 1]"
	case intervalSupport:
		return "an interval [low, high]"
	case simplexSupport:
		return "the simplex"
	case binarySupport:
		return "{0, 1} (discrete)"
	case countSupport:
		return "the counts 0, 1, 2, … (discrete)"
	case categorySupport:
		return fmt.Sprintf("the categories 0…%d (discrete)", sp.k-1)
	case customSupport:
		return "the support its SupportBijector maps onto"
	}
	return "of unknown support"
}

// bijector returns the map from the real line onto the support (nil for
// the real line itself).
func (sp support) bijector() probabilistic.Bijector {
	switch sp.kind {
	case positiveSupport:
		return probabilistic.Exp{}
	case unitSupport:
		return probabilistic.Sigmoid{}
	case intervalSupport:
		return interval{lo: sp.lo, hi: sp.hi}
	case simplexSupport:
		return probabilistic.StickBreaking{}
	case customSupport:
		return sp.custom
	}
	return nil
}

// contains reports whether v (one element) is in the support; for the
// simplex it tests the element only, and Σ = 1 is tested by the caller.
func (sp support) contains(v float64) bool {
	integer := v == math.Trunc(v)
	switch sp.kind {
	case realSupport:
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	case positiveSupport:
		return v > 0 && !math.IsInf(v, 0)
	case unitSupport, simplexSupport:
		return v >= 0 && v <= 1
	case binarySupport:
		return v == 0 || v == 1
	case countSupport:
		return v >= 0 && integer && !math.IsInf(v, 0)
	case categorySupport:
		return v >= 0 && integer && v < float64(sp.k)
	}
	return !math.IsNaN(v)
}

// checkSupport panics with a *SupportError when an observed value lies
// outside its distribution's support.
func checkSupport(s *Site) {
	sp, ok := supportOf(s.Dist)
	if !ok {
		return
	}
	vals := s.Value.Value().Values()
	fail := func(i int, want string) {
		panic(&SupportError{Site: s.Name, Dist: fmt.Sprintf("%T", s.Dist), Index: i, Value: vals[i], Want: want, Caller: tensor.CallerOutside()})
	}
	for i, v := range vals {
		if !sp.contains(v) {
			fail(i, sp.what())
		}
	}
	if sp.kind == intervalSupport && sp.lo.IsConst() && sp.hi.IsConst() {
		lo := graph.BroadcastTo(sp.lo, s.Value.Shape()...).Value().Values()
		hi := graph.BroadcastTo(sp.hi, s.Value.Shape()...).Value().Values()
		for i, v := range vals {
			if v < lo[i] || v > hi[i] {
				fail(i, fmt.Sprintf("[%g, %g]", lo[i], hi[i]))
			}
		}
	}
	if sp.kind == simplexSupport {
		shape := s.Value.Shape()
		k := shape[len(shape)-1]
		for r := 0; r < len(vals); r += k {
			sum := 0.0
			for _, v := range vals[r : r+k] {
				sum += v
			}
			if math.Abs(sum-1) > 1e-6 {
				fail(r, fmt.Sprintf("the simplex (this row sums to %g)", sum))
			}
		}
	}
}

// interval maps ℝ onto (lo, hi) by lo + (hi − lo)·sigmoid(x), as Stan
// does for bounded parameters.
type interval struct{ lo, hi *graph.Node }

func (b interval) width() *graph.Node { return graph.Sub(b.hi, b.lo) }

// Forward returns lo + (hi − lo)·sigmoid(x).
func (b interval) Forward(x *graph.Node) *graph.Node {
	return graph.Add(b.lo, graph.Mul(b.width(), graph.Sigmoid(x)))
}

// Inverse returns logit((y − lo)/(hi − lo)).
func (b interval) Inverse(y *graph.Node) *graph.Node {
	return probabilistic.Sigmoid{}.Inverse(graph.Div(graph.Sub(y, b.lo), b.width()))
}

// LogDetJacobian returns log(hi − lo) + log σ(x) + log(1 − σ(x)).
func (b interval) LogDetJacobian(x *graph.Node) *graph.Node {
	return graph.Add(graph.Log(b.width()), probabilistic.Sigmoid{}.LogDetJacobian(x))
}
