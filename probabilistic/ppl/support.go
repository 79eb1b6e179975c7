package ppl

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

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

// supportOf returns d's support, false when it is not known. Continuous
// distributions name theirs through probabilistic.Supported; the
// discrete ones are listed here, as they have no bijector.
func supportOf(d probabilistic.Distribution) (support, bool) {
	switch d := d.(type) {
	case *probabilistic.Bernoulli:
		return support{kind: binarySupport, discrete: true}, true
	case *probabilistic.Poisson, *probabilistic.Binomial, *probabilistic.NegativeBinomial,
		*probabilistic.Geometric, *probabilistic.Multinomial:
		return support{kind: countSupport, discrete: true}, true
	case *probabilistic.Categorical:
		return support{kind: categorySupport, discrete: true, k: d.Logits.Shape()[d.Logits.Dim()-1]}, true
	case *probabilistic.ZeroInflated:
		return supportOf(d.Base)
	case *probabilistic.Censored:
		return supportOf(d.Base)
	case *probabilistic.MultivariateStudentT, pointMass:
		return support{kind: realSupport}, true
	case probabilistic.Supported:
		switch b := d.Support().(type) {
		case probabilistic.Identity:
			return support{kind: realSupport}, true
		case probabilistic.Exp:
			return support{kind: positiveSupport}, true
		case probabilistic.Sigmoid:
			return support{kind: unitSupport}, true
		case probabilistic.Interval:
			return support{kind: intervalSupport, lo: b.Low, hi: b.High}, true
		case probabilistic.StickBreaking:
			return support{kind: simplexSupport}, true
		default:
			return support{kind: customSupport, custom: b}, true
		}
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
		return "the support its Support bijector maps onto"
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
		return probabilistic.Interval{Low: sp.lo, High: sp.hi}
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
