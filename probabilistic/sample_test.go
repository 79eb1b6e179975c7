package probabilistic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// TestSampleMoments checks that sample means and variances of 20,000 draws
// agree with Mean and Variance within 4 standard errors.
func TestSampleMoments(t *testing.T) {
	const n = 20000
	cases := []struct {
		name  string
		build func(g *graph.Graph, dt tensor.DType) Distribution
	}{
		{"Normal", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewNormal(c(g, dt, []float64{-1, 2}), c(g, dt, []float64{0.5, 3}))
		}},
		{"MVN", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewMVNFromScaleTril(c(g, dt, []float64{1, -1}), c(g, dt, []float64{1, 0, 0.5, 2}, 2, 2))
		}},
		{"Laplace", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewLaplace(c(g, dt, []float64{0, 3}), c(g, dt, []float64{1, 0.2}))
		}},
		{"Uniform", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewUniform(c(g, dt, []float64{-1, 2}), c(g, dt, s(3)))
		}},
		{"Gamma (α < 1 and α > 1)", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewGamma(c(g, dt, []float64{0.4, 5}), c(g, dt, []float64{2, 0.5}))
		}},
		{"Beta", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewBeta(c(g, dt, []float64{0.5, 3}), c(g, dt, []float64{0.5, 1.5}))
		}},
		{"Dirichlet", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewDirichlet(c(g, dt, []float64{0.5, 2, 4}))
		}},
		{"Bernoulli", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewBernoulliLogits(c(g, dt, []float64{-2, 0.5}))
		}},
		{"Categorical", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewCategoricalProbs(c(g, dt, []float64{0.1, 0.2, 0.3, 0.4}))
		}},
	}
	for i, tc := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				d := tc.build(g, dt)
				x := d.Sample(tensor.NewRNG(uint64(7+i)), n)
				require.Equal(t, dt, x.DType())
				xv := x.Values()
				mean, vr := d.Mean().Value().Values(), d.Variance().Value().Values()
				m := len(mean)
				for j := 0; j < m; j++ {
					col := make([]float64, n)
					for k := range col {
						col[k] = xv[k*m+j]
					}
					mu, se := meanSE(col)
					require.InDelta(t, mean[j], mu, 4*se+1e-9, "mean of component %d", j)
					var m2, m4 float64
					for _, x := range col {
						d := x - mu
						m2 += d * d
						m4 += d * d * d * d
					}
					m2 /= n - 1
					m4 /= n
					seVar := math.Sqrt((m4 - m2*m2) / n)
					require.InDelta(t, vr[j], m2, 4*seVar+1e-9, "variance of component %d", j)
				}
			})
		}
	}
}

// TestSampleSeeded checks that a seed reproduces the draws.
func TestSampleSeeded(t *testing.T) {
	g := graph.New()
	d := NewGamma(c(g, tensor.Float64, s(2)), c(g, tensor.Float64, s(1)))
	a := d.Sample(tensor.NewRNG(5), 10).Values()
	b := d.Sample(tensor.NewRNG(5), 10).Values()
	require.Equal(t, a, b)
	for _, x := range a {
		require.Greater(t, x, 0.0)
	}
}

// TestRSampleGradients differentiates Monte Carlo estimates through the
// reparameterised samples: d/dμ of the sample mean is exactly 1, and
// d/dσ E[x²] = 2σ for a Normal holds within 4 standard errors.
func TestRSampleGradients(t *testing.T) {
	const n = 20000
	for _, dt := range numtest.DTypes {
		g := graph.New()
		rng := tensor.NewRNG(11)
		mu := v(g, dt, s(0.5))
		sigma := v(g, dt, s(1.5))
		for _, d := range []RSampler{NewNormal(mu, sigma), NewLaplace(mu, sigma)} {
			gr := autodiff.Grad(graph.Mean(d.RSample(rng, n), nil, false), mu)[0]
			require.InDelta(t, 1, gr.Item(), 1e-5)
		}
		loc := v(g, dt, []float64{1, 2})
		mvn := NewMVNFromScaleTril(loc, c(g, dt, []float64{1, 0, 0.5, 2}, 2, 2))
		gr := autodiff.Grad(graph.Sum(graph.Mean(mvn.RSample(rng, n), []int{0}, false), nil, false), loc)[0]
		requireValues(t, []float64{1, 1}, gr, 1e-5)

		// d/dσ of the mean of x² = μ² + σ² is 2σ·mean(ε²).
		x := NewNormal(mu, sigma).RSample(rng, n)
		gs := autodiff.Grad(graph.Mean(graph.Square(x), nil, false), sigma)[0].Item()
		// Per-sample gradient 2ε(μ + σε) has variance 4(μ² + 2σ²) for ε ~ N(0, 1).
		se := math.Sqrt(4*(0.25+2*1.5*1.5)) / math.Sqrt(n)
		require.InDelta(t, 3, gs, 4*se)

		// Uniform: x = low + (high − low)u, so d mean/d low = 1 − ū ≈ ½.
		low, high := v(g, dt, s(-1)), v(g, dt, s(2))
		us := NewUniform(low, high).RSample(rng, n)
		gl := autodiff.Grad(graph.Mean(us, nil, false), low, high)
		require.InDelta(t, 0.5, gl[0].Item(), 4*math.Sqrt(1.0/12/n))
		require.InDelta(t, 1, gl[0].Item()+gl[1].Item(), 1e-5)
	}
}
