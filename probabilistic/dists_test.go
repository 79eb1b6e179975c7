package probabilistic

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// distsFixture mirrors testdata/dists.json (testdata/make_dists.py).
type distsFixture struct {
	Scalar map[string][]struct {
		Rows []struct {
			Params        []float64
			X, Logpdf     float64
			Logcdf, Logsf *float64
		}
		Entropy   float64
		Mean, Var *float64
	} `json:"scalar"`
	Multinomial []struct {
		N         int
		Logits, X []float64
		Logpmf    float64
		Mean, Var []float64
	}
	Geometric []struct {
		P                  float64
		K, Logpmf          []float64
		Mean, Var, Entropy float64
	}
	RelaxedBernoulli []struct {
		Temperature, Logits float64
		Y, Logpdf           []float64
	} `json:"relaxed_bernoulli"`
	RelaxedOneHot []struct {
		Temperature float64
		Logits, Y   []float64
		Logpdf      float64
	} `json:"relaxed_one_hot"`
	LowRank struct {
		Loc, W, Diag, X, Logpdf, Var []float64
		Entropy                      float64
	} `json:"low_rank"`
	RandomWalk struct {
		Scale  float64
		X      []float64
		Logpdf float64
	} `json:"random_walk"`
	ZeroInflatedPoisson []struct {
		Rate, Gate float64
		K, Logpmf  []float64
		Mean, Var  float64
	} `json:"zero_inflated_poisson"`
	CensoredNormal struct {
		Loc, Scale, Low, High float64
		Rows                  []struct{ X, Logp float64 }
	} `json:"censored_normal"`
	KL map[string]struct {
		P, Q []float64
		KL   float64
	}
}

func loadDists(t *testing.T) distsFixture {
	t.Helper()
	raw, err := os.ReadFile("testdata/dists.json")
	require.NoError(t, err)
	var fx distsFixture
	require.NoError(t, json.Unmarshal(raw, &fx))
	return fx
}

// scalarFamilies builds each scalar distribution of the fixture from its
// parameters.
var scalarFamilies = map[string]func(c func(float64) *graph.Node, p []float64) Distribution{
	"half_normal":   func(c func(float64) *graph.Node, p []float64) Distribution { return NewHalfNormal(c(p[0])) },
	"half_cauchy":   func(c func(float64) *graph.Node, p []float64) Distribution { return NewHalfCauchy(c(p[0])) },
	"log_normal":    func(c func(float64) *graph.Node, p []float64) Distribution { return NewLogNormal(c(p[0]), c(p[1])) },
	"exponential":   func(c func(float64) *graph.Node, p []float64) Distribution { return NewExponential(c(p[0])) },
	"inverse_gamma": func(c func(float64) *graph.Node, p []float64) Distribution { return NewInverseGamma(c(p[0]), c(p[1])) },
	"cauchy":        func(c func(float64) *graph.Node, p []float64) Distribution { return NewCauchy(c(p[0]), c(p[1])) },
	"laplace":       func(c func(float64) *graph.Node, p []float64) Distribution { return NewLaplace(c(p[0]), c(p[1])) },
	"normal":        func(c func(float64) *graph.Node, p []float64) Distribution { return NewNormal(c(p[0]), c(p[1])) },
	"uniform":       func(c func(float64) *graph.Node, p []float64) Distribution { return NewUniform(c(p[0]), c(p[1])) },
}

// Log densities, log CDFs and survival functions, entropies, means and
// variances of the scalar families against SciPy to 1e-10.
func TestScalarDistributionsAgainstSciPy(t *testing.T) {
	fx := loadDists(t)
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	for name, build := range scalarFamilies {
		cases := fx.Scalar[name]
		require.NotEmpty(t, cases, name)
		for _, tc := range cases {
			var d Distribution
			for _, r := range tc.Rows {
				d = build(c, r.Params)
				assert.InDelta(t, r.Logpdf, d.LogProb(c(r.X)).Item(), 1e-10*math.Max(1, math.Abs(r.Logpdf)), "%s%v logpdf at %g", name, r.Params, r.X)
				if r.Logcdf != nil {
					cd := d.(CDFer)
					assert.InDelta(t, *r.Logcdf, cd.LogCDF(c(r.X)).Item(), 1e-10*math.Max(1, math.Abs(*r.Logcdf)), "%s%v logcdf at %g", name, r.Params, r.X)
					assert.InDelta(t, *r.Logsf, cd.LogSurvival(c(r.X)).Item(), 1e-10*math.Max(1, math.Abs(*r.Logsf)), "%s%v logsf at %g", name, r.Params, r.X)
				}
			}
			assert.InDelta(t, tc.Entropy, d.Entropy().Item(), 1e-10, "%s entropy", name)
			if tc.Mean != nil {
				assert.InDelta(t, *tc.Mean, d.Mean().Item(), 1e-10, "%s mean", name)
				assert.InDelta(t, *tc.Var, d.Variance().Item(), 1e-10*math.Max(1, *tc.Var), "%s variance", name)
			}
		}
	}
	assert.True(t, math.IsNaN(NewCauchy(c(0), c(1)).Mean().Item()), "Cauchy has no mean")
	assert.True(t, math.IsInf(NewHalfCauchy(c(1)).Variance().Item(), 1))
	assert.True(t, math.IsInf(NewInverseGamma(c(1.5), c(1)).Variance().Item(), 1), "α ≤ 2: infinite variance")
	assert.True(t, math.IsInf(NewHalfNormal(c(1)).LogProb(c(-0.1)).Item(), -1), "outside the support")
	assert.True(t, math.IsInf(NewExponential(c(1)).LogProb(c(-0.1)).Item(), -1), "outside the support")
}

// The discrete, relaxed, multivariate and wrapped distributions against
// SciPy, PyTorch and direct sums.
func TestOtherDistributionsAgainstFixtures(t *testing.T) {
	fx := loadDists(t)
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	vec := func(v []float64, shape ...int) *graph.Node {
		if shape == nil {
			shape = []int{len(v)}
		}
		return g.Const(tensor.FromFloat64s(v, shape...))
	}
	near := func(want, got float64, msg string) {
		assert.InDelta(t, want, got, 1e-10*math.Max(1, math.Abs(want)), msg)
	}
	require.Len(t, fx.Multinomial, 2)
	for _, r := range fx.Multinomial {
		d := NewMultinomial(r.N, vec(r.Logits))
		near(r.Logpmf, d.LogProb(vec(r.X)).Item(), "multinomial logpmf")
		requireValues(t, r.Mean, d.Mean(), 1e-12)
		requireValues(t, r.Var, d.Variance(), 1e-12)
	}
	require.Len(t, fx.Geometric, 2)
	for _, r := range fx.Geometric {
		d := NewGeometricProbs(c(r.P))
		for i, k := range r.K {
			near(r.Logpmf[i], d.LogProb(c(k)).Item(), "geometric logpmf")
		}
		near(r.Mean, d.Mean().Item(), "geometric mean")
		near(r.Var, d.Variance().Item(), "geometric variance")
		near(r.Entropy, d.Entropy().Item(), "geometric entropy")
	}
	for _, r := range fx.RelaxedBernoulli {
		d := NewRelaxedBernoulli(c(r.Temperature), c(r.Logits))
		for i, y := range r.Y {
			near(r.Logpdf[i], d.LogProb(c(y)).Item(), "relaxed Bernoulli")
		}
	}
	for _, r := range fx.RelaxedOneHot {
		d := NewRelaxedOneHotCategorical(c(r.Temperature), vec(r.Logits))
		near(r.Logpdf, d.LogProb(vec(r.Y)).Item(), "relaxed one-hot")
	}
	lr := fx.LowRank
	d := NewLowRankMVN(vec(lr.Loc), vec(lr.W, 4, 2), vec(lr.Diag))
	requireValues(t, lr.Logpdf, d.LogProb(vec(lr.X, 3, 4)), 1e-10)
	near(lr.Entropy, d.Entropy().Item(), "low-rank entropy")
	requireValues(t, lr.Var, d.Variance(), 1e-12)
	rw := fx.RandomWalk
	near(rw.Logpdf, NewGaussianRandomWalk(c(rw.Scale), len(rw.X)).LogProb(vec(rw.X)).Item(), "random walk")
	require.Len(t, fx.ZeroInflatedPoisson, 2)
	for _, r := range fx.ZeroInflatedPoisson {
		pi := r.Gate
		zi := NewZeroInflated(NewPoisson(c(r.Rate)), c(math.Log(pi/(1-pi))))
		for i, k := range r.K {
			near(r.Logpmf[i], zi.LogProb(c(k)).Item(), "zero-inflated Poisson logpmf")
		}
		near(r.Mean, zi.Mean().Item(), "zero-inflated Poisson mean")
		near(r.Var, zi.Variance().Item(), "zero-inflated Poisson variance")
	}
	cn := fx.CensoredNormal
	cd := NewCensored(NewNormal(c(cn.Loc), c(cn.Scale)), c(cn.Low), c(cn.High))
	for _, r := range cn.Rows {
		near(r.Logp, cd.LogProb(c(r.X)).Item(), "censored normal")
	}
}

// Each closed-form KL against SciPy quadrature (or a direct sum for the
// geometric), to 1e-9.
func TestNewKLsAgainstQuadrature(t *testing.T) {
	fx := loadDists(t)
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	pairs := map[string]func(p, q []float64) (Distribution, Distribution){
		"exponential": func(p, q []float64) (Distribution, Distribution) {
			return NewExponential(c(p[0])), NewExponential(c(q[0]))
		},
		"log_normal": func(p, q []float64) (Distribution, Distribution) {
			return NewLogNormal(c(p[0]), c(p[1])), NewLogNormal(c(q[0]), c(q[1]))
		},
		"half_normal": func(p, q []float64) (Distribution, Distribution) {
			return NewHalfNormal(c(p[0])), NewHalfNormal(c(q[0]))
		},
		"inverse_gamma": func(p, q []float64) (Distribution, Distribution) {
			return NewInverseGamma(c(p[0]), c(p[1])), NewInverseGamma(c(q[0]), c(q[1]))
		},
		"laplace": func(p, q []float64) (Distribution, Distribution) {
			return NewLaplace(c(p[0]), c(p[1])), NewLaplace(c(q[0]), c(q[1]))
		},
		"cauchy": func(p, q []float64) (Distribution, Distribution) {
			return NewCauchy(c(p[0]), c(p[1])), NewCauchy(c(q[0]), c(q[1]))
		},
		"geometric": func(p, q []float64) (Distribution, Distribution) {
			return NewGeometricProbs(c(p[0])), NewGeometricProbs(c(q[0]))
		},
	}
	require.Len(t, fx.KL, len(pairs))
	for name, mk := range pairs {
		r := fx.KL[name]
		p, q := mk(r.P, r.Q)
		kl, err := KL(p, q)
		require.NoError(t, err, name)
		assert.InDelta(t, r.KL, kl.Item(), 1e-9, "KL %s", name)
	}
}

// KL between uniforms by hand: log(4/2) when the first interval lies inside
// the second, +∞ when it does not.
func TestKLUniformByHand(t *testing.T) {
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	kl, err := KL(NewUniform(c(0), c(2)), NewUniform(c(-1), c(3)))
	require.NoError(t, err)
	assert.InDelta(t, math.Log(2), kl.Item(), 1e-15)
	kl, err = KL(NewUniform(c(0), c(2)), NewUniform(c(0.5), c(3)))
	require.NoError(t, err)
	assert.True(t, math.IsInf(kl.Item(), 1))
}

// The families work in float32 too: log densities within 1e−5 (relative)
// of the float64 values, and draws of the parameters' dtype.
func TestNewDistributionsFloat32(t *testing.T) {
	build := func(dt tensor.DType) (*graph.Graph, map[string]Distribution, func(...float64) *graph.Node) {
		g := graph.New()
		c := func(v float64) *graph.Node { return g.Scalar(dt, v) }
		vec := func(v ...float64) *graph.Node { return g.Const(tensor.FromValues(dt, v, len(v))) }
		return g, map[string]Distribution{
			"half-normal":   NewHalfNormal(c(1.3)),
			"half-Cauchy":   NewHalfCauchy(c(0.7)),
			"cauchy":        NewCauchy(c(0.2), c(1.1)),
			"log-normal":    NewLogNormal(c(0.2), c(0.4)),
			"exponential":   NewExponential(c(2.5)),
			"inverse gamma": NewInverseGamma(c(3.5), c(2)),
			"geometric":     NewGeometricProbs(c(0.3)),
			"relaxed":       NewRelaxedBernoulli(c(0.5), c(0.3)),
			"zero-inflated": NewZeroInflated(NewPoisson(c(2)), c(0.1)),
			"censored":      NewCensored(NewLaplace(c(0), c(1)), c(-0.5), c(0.5)),
			"random walk":   NewGaussianRandomWalk(c(0.5), 1),
			"low-rank":      NewLowRankMVN(vec(0.1), g.Const(tensor.FromValues(dt, []float64{0.5}, 1, 1)), vec(0.3)),
			"multinomial":   NewMultinomial(1, vec(0.3)),
			"relaxed 1-hot": NewRelaxedOneHotCategorical(c(0.5), vec(0.3, -0.2)),
		}, vec
	}
	_, d64, v64 := build(tensor.Float64)
	_, d32, v32 := build(tensor.Float32)
	at := map[string][]float64{"relaxed 1-hot": {0.3, 0.7}}
	for name, d := range d64 {
		x := []float64{0.4}
		if v, ok := at[name]; ok {
			x = v
		}
		want := d.LogProb(v64(x...)).Item()
		got := d32[name].LogProb(v32(x...))
		require.Equal(t, tensor.Float32, got.DType(), name)
		assert.InDelta(t, want, got.Item(), 1e-5*math.Max(1, math.Abs(want)), name)
		assert.Equal(t, tensor.Float32, d32[name].Sample(tensor.NewRNG(1), 3).DType(), name)
	}
}

// Multinomial log-probabilities stay exact where a class probability
// underflows: logits (0, −800) give p₂ = e^{−800}, and 0 counts of a class
// with logit −∞ add nothing.
func TestMultinomialExtremeLogits(t *testing.T) {
	g := graph.New()
	vec := func(v ...float64) *graph.Node { return g.Const(tensor.FromFloat64s(v, len(v))) }
	d := NewMultinomial(2, vec(0, -800))
	assert.InDelta(t, math.Log(2)-800, d.LogProb(vec(1, 1)).Item(), 1e-10, "log 2 + log 1 + log e^{−800}")
	assert.Equal(t, 0.0, NewMultinomial(2, vec(0, math.Inf(-1))).LogProb(vec(2, 0)).Item())
}
