package ppl

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// The support of every family of package probabilistic is known to the
// ppl layer: the continuous ones through their Support bijector, the
// discrete ones (and the wrappers, through their base) by type; and
// values outside it are caught.
func TestSupportOfEveryFamily(t *testing.T) {
	g := graph.New()
	one, two := g.Scalar(tensor.Float64, 1), g.Scalar(tensor.Float64, 2)
	for _, c := range []struct {
		d       probabilistic.Distribution
		kind    supportKind
		in, out float64 // a value inside the support and one outside
	}{
		{probabilistic.NewNormal(one, two), realSupport, -3, nanValue},
		{probabilistic.NewCauchy(one, two), realSupport, -3, nanValue},
		{probabilistic.NewHalfNormal(two), positiveSupport, 0.5, -1},
		{probabilistic.NewHalfCauchy(two), positiveSupport, 0.5, -1},
		{probabilistic.NewLogNormal(one, two), positiveSupport, 0.5, 0},
		{probabilistic.NewExponential(two), positiveSupport, 3, -0.1},
		{probabilistic.NewInverseGamma(one, two), positiveSupport, 3, -0.1},
		{probabilistic.NewGamma(one, two), positiveSupport, 3, -0.1},
		{probabilistic.NewBeta(one, two), unitSupport, 0.3, 1.5},
		{probabilistic.NewRelaxedBernoulli(one, two), unitSupport, 0.3, 1.5},
		{probabilistic.NewGeometricLogits(one), countSupport, 4, 1.5},
		{probabilistic.NewZeroInflated(probabilistic.NewPoisson(two), one), countSupport, 0, -1},
	} {
		sp, ok := supportOf(c.d)
		if !ok || sp.kind != c.kind {
			t.Errorf("%T: support kind %v (known %v), want %v", c.d, sp.kind, ok, c.kind)
			continue
		}
		if !sp.contains(c.in) || sp.contains(c.out) {
			t.Errorf("%T (%s): contains(%g) = %v, contains(%g) = %v", c.d, sp.what(), c.in, sp.contains(c.in), c.out, sp.contains(c.out))
		}
	}
}

var nanValue = math.NaN()
