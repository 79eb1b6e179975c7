package probabilistic

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

type wishartFixture struct {
	L, X, TLoc, TX                         []float64
	DF, TDF                                float64
	WishartLogpdf, WishartEntropy, TLogpdf float64
	WishartMean, WishartVar                []float64
	InvwishartLogpdf                       float64
	InvwishartMean, InvwishartVar          []float64
}

func (f *wishartFixture) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	vec := func(k string) []float64 {
		var out []float64
		for _, v := range m[k].([]any) {
			out = append(out, v.(float64))
		}
		return out
	}
	f.L, f.X, f.DF = vec("L"), vec("X"), m["df"].(float64)
	f.WishartLogpdf, f.WishartEntropy = m["wishart_logpdf"].(float64), m["wishart_entropy"].(float64)
	f.WishartMean, f.WishartVar = vec("wishart_mean"), vec("wishart_var")
	f.InvwishartLogpdf = m["invwishart_logpdf"].(float64)
	f.InvwishartMean, f.InvwishartVar = vec("invwishart_mean"), vec("invwishart_var")
	f.TDF, f.TLoc, f.TX, f.TLogpdf = m["t_df"].(float64), vec("t_loc"), vec("t_x"), m["t_logpdf"].(float64)
	return nil
}

// Log densities, the Wishart's entropy and both families' means and
// variances against SciPy (testdata/make_wishart.py), p = 3.
func TestWishartFamilyAgainstSciPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/wishart.json")
	require.NoError(t, err)
	var fx wishartFixture
	require.NoError(t, json.Unmarshal(raw, &fx))
	g := graph.New()
	l := g.Const(tensor.FromFloat64s(fx.L, 3, 3))
	x := g.Const(tensor.FromFloat64s(fx.X, 3, 3))
	nu := g.Scalar(tensor.Float64, fx.DF)
	w := NewWishart(nu, l)
	assert.InDelta(t, fx.WishartLogpdf, w.LogProb(x).Item(), 1e-12)
	assert.InDelta(t, fx.WishartEntropy, w.Entropy().Item(), 1e-12)
	assert.InDeltaSlice(t, fx.WishartMean, w.Mean().Value().Values(), 1e-12)
	assert.InDeltaSlice(t, fx.WishartVar, w.Variance().Value().Values(), 1e-12)
	iw := NewInverseWishart(nu, l)
	assert.InDelta(t, fx.InvwishartLogpdf, iw.LogProb(x).Item(), 1e-12)
	assert.InDeltaSlice(t, fx.InvwishartMean, iw.Mean().Value().Values(), 1e-12)
	assert.InDeltaSlice(t, fx.InvwishartVar, iw.Variance().Value().Values(), 1e-12)
	mt := NewMultivariateStudentT(g.Scalar(tensor.Float64, fx.TDF), g.Const(tensor.FromFloat64s(fx.TLoc, 3)), l)
	assert.InDelta(t, fx.TLogpdf, mt.LogProb(g.Const(tensor.FromFloat64s(fx.TX, 3))).Item(), 1e-12)
	// A batch of two matrices gives two log densities.
	both := w.LogProb(g.Const(tensor.Concat(0, tensor.Unsqueeze(tensor.FromFloat64s(fx.X, 3, 3), 0), tensor.Unsqueeze(tensor.FromFloat64s(fx.X, 3, 3), 0))))
	assert.InDeltaSlice(t, []float64{fx.WishartLogpdf, fx.WishartLogpdf}, both.Value().Values(), 1e-12)
	assert.Panics(t, func() { NewWishart(g.Scalar(tensor.Float64, 1.5), l) }, "df ≤ p − 1")
}

// Sample means against the closed forms: the Wishart's and inverse
// Wishart's entrywise within 5 standard errors (from their variances), the
// multivariate t's within 5 of √(Var/n).
func TestWishartFamilySample(t *testing.T) {
	g := graph.New()
	l := g.Const(tensor.FromFloat64s([]float64{1, 0, 0.5, 0.7}, 2, 2))
	const n = 20000
	for name, d := range map[string]Distribution{
		"wishart":         NewWishart(g.Scalar(tensor.Float64, 4.5), l),
		"inverse wishart": NewInverseWishart(g.Scalar(tensor.Float64, 9), l),
		"mv t":            NewMultivariateStudentT(g.Scalar(tensor.Float64, 6), g.Const(t64(1, -1)), l),
	} {
		s := d.Sample(tensor.NewRNG(3), n)
		k := s.Size() / n
		v := s.Values()
		mean := make([]float64, k)
		for i := range n {
			for j := range k {
				mean[j] += v[i*k+j] / n
			}
		}
		want, vr := d.Mean().Value().Values(), d.Variance().Value().Values()
		for j := range k {
			assert.InDelta(t, want[j], mean[j], 5*math.Sqrt(vr[j]/n), "%s entry %d", name, j)
		}
	}
}

// Second-order gradient checks in the scale factor and the value.
func TestWishartFamilyGradCheck(t *testing.T) {
	x := tensor.FromFloat64s([]float64{2, 0.3, 0.3, 1.5}, 2, 2)
	for name, f := range map[string]func([]*graph.Node) *graph.Node{
		"wishart": func(xs []*graph.Node) *graph.Node {
			return NewWishart(xs[0].Graph().Scalar(tensor.Float64, 3.5), graph.Tril(xs[0])).LogProb(sym(xs[1]))
		},
		"inverse wishart": func(xs []*graph.Node) *graph.Node {
			return NewInverseWishart(xs[0].Graph().Scalar(tensor.Float64, 3.5), graph.Tril(xs[0])).LogProb(sym(xs[1]))
		},
		"mv t": func(xs []*graph.Node) *graph.Node {
			g := xs[0].Graph()
			return NewMultivariateStudentT(g.Scalar(tensor.Float64, 4), g.Const(t64(0.1, 0.2)), graph.Tril(xs[0])).LogProb(graph.Sum(xs[1], []int{0}, false))
		},
	} {
		in := []*tensor.Tensor{tensor.FromFloat64s([]float64{1.1, 0, 0.4, 0.9}, 2, 2), x}
		_, err := autodiff.GradCheck(f, in, autodiff.GradCheckOptions{Name: name, Order: 2})
		require.NoError(t, err, name)
	}
}
