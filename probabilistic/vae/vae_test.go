package vae

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncoderKL checks the KL of the encoder head's q(z|x) against the
// formula evaluated on the head's own outputs.
func TestEncoderKL(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			rng := tensor.NewRNG(1)
			enc := NewEncoder(rng, 6, []int{5}, 3, dt)
			g := graph.New()
			x := g.Const(rng.Uniform(dt, 0, 1, 4, 6))
			mu, logvar := enc.Forward(x)
			kl := losses.KLDiagGaussian(mu, logvar, losses.None).Value().Values()
			m, lv := mu.Value().Values(), logvar.Value().Values()
			for i := range 4 {
				var want float64
				for j := range 3 {
					v := m[i*3+j]
					want += 0.5 * (v*v + math.Exp(lv[i*3+j]) - lv[i*3+j] - 1)
				}
				assert.InDelta(t, want, kl[i], 1e-5)
			}
			assert.Len(t, enc.Params(), 6)
		})
	}
}

// tinyData returns n binary-ish images of dim pixels with two prototypes,
// so a VAE has structure to find.
func tinyData(dt tensor.DType, n, dim int, seed uint64) *tensor.Tensor {
	rng := tensor.NewRNG(seed)
	v := make([]float64, n*dim)
	for i := range n {
		for j := range dim {
			p := 0.1
			if (j < dim/2) == (i%2 == 0) {
				p = 0.9
			}
			if rng.Float64() < p {
				v[i*dim+j] = 1
			}
		}
	}
	return tensor.FromValues(dt, v, n, dim)
}

func TestIWAEBound(t *testing.T) {
	// E[IWAE_K] is non-decreasing in K and IWAE_1 has the ELBO's
	// expectation (Burda et al. 2016, Theorem 1). Averaged over 400 images
	// with fixed seeds the ordering is far larger than the noise.
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			const n, dim = 400, 16
			m := New(tensor.NewRNG(3), Options{Input: dim, Hidden: []int{12}, Latent: 2, DType: dt})
			xs := tinyData(dt, n, dim, 4)
			g := graph.New()
			x := g.Const(xs)
			elbo, _, _ := m.ELBO(x, g.Const(normal(tensor.NewRNG(5), dt, n, 2)))
			// mean and standard error over the images
			stats := func(v *graph.Node) (float64, float64) {
				vals := v.Value().Values()
				var m, s2 float64
				for _, u := range vals {
					m += u
				}
				m /= float64(len(vals))
				for _, u := range vals {
					s2 += (u - m) * (u - m)
				}
				return m, math.Sqrt(s2 / float64(len(vals)-1) / float64(len(vals)))
			}
			e, seE := stats(elbo)
			var iw []float64
			var se1 float64
			for _, k := range []int{1, 5, 50} {
				m, se := stats(m.IWAE(x, tensor.NewRNG(6), k))
				if k == 1 {
					se1 = se
				}
				iw = append(iw, m)
			}
			t.Logf("ELBO %.4f ± %.4f, IWAE 1/5/50 %.4f (± %.4f) %.4f %.4f", e, seE, iw[0], se1, iw[1], iw[2])
			assert.InDelta(t, e, iw[0], 4*(seE+se1)) // the same expectation, within 4 standard errors
			assert.Greater(t, iw[1], e)
			assert.Greater(t, iw[1], iw[0])
			assert.Greater(t, iw[2], iw[1])
		})
	}
}

// bindAll binds the model's parameters, in Params order, to xs in their
// graph, so the model computes with the checker's variables.
func bindAll(ps []nn.NamedParam, xs []*graph.Node) {
	for i, p := range ps {
		xs[i].Graph().Bind(p.Value, xs[i])
	}
}

func TestELBOGradCheck(t *testing.T) {
	for _, lik := range []Likelihood{Bernoulli, Gaussian} {
		t.Run([]string{"bernoulli", "gaussian"}[lik], func(t *testing.T) {
			m := New(tensor.NewRNG(7), Options{Input: 5, Hidden: []int{4}, Latent: 2, Likelihood: lik, DType: tensor.Float64})
			ps := m.Params()
			xs := tinyData(tensor.Float64, 3, 5, 8)
			eps := normal(tensor.NewRNG(9), tensor.Float64, 3, 2)
			var inputs []*tensor.Tensor
			for _, p := range ps {
				inputs = append(inputs, p.Value)
			}
			f := func(in []*graph.Node) *graph.Node {
				g := in[0].Graph()
				bindAll(ps, in)
				e, _, _ := m.elbo(g.Const(xs), g.Const(eps))
				return graph.Sum(e, nil, false)
			}
			rep, err := autodiff.GradCheck(f, inputs, autodiff.GradCheckOptions{Name: "vae.ELBO", Eps: 1e-6, Order: 1, Seed: 1})
			require.NoError(t, err)
			assert.True(t, rep.Passed)
		})
	}
}

func TestLossMatchesELBO(t *testing.T) {
	// The fused training loss is −Σ ELBO.
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			m := New(tensor.NewRNG(10), Options{Input: 8, Hidden: []int{6}, Latent: 3, DType: dt})
			g := graph.New()
			x := g.Const(tinyData(dt, 5, 8, 11))
			eps := g.Const(normal(tensor.NewRNG(12), dt, 5, 3))
			e, ll, kl := m.ELBO(x, eps)
			loss := m.Loss(x, eps).Item()
			sum := func(v *graph.Node) float64 { return graph.Sum(v, nil, false).Item() }
			assert.InDelta(t, -sum(e), loss, 1e4*numtest.Tol(dt))
			assert.InDelta(t, sum(ll)-sum(kl), sum(e), 1e4*numtest.Tol(dt))
			grads := nn.Gradients(m.Loss(x, eps), m.Params())
			assert.Len(t, grads, len(m.Params()))
		})
	}
}

// β-VAE: the loss is −Σ log p(x|z) + β·Σ KL for both decoders, computed
// here from the ELBO's two terms; β = 0 in the Options means 1.
func TestBetaWeighsKL(t *testing.T) {
	for _, lik := range []Likelihood{Bernoulli, Gaussian} {
		for _, beta := range []float64{0, 1, 4} {
			m := New(tensor.NewRNG(10), Options{Input: 8, Hidden: []int{6}, Latent: 3, DType: tensor.Float64, Likelihood: lik, Beta: beta})
			g := graph.New()
			x := g.Const(tinyData(tensor.Float64, 5, 8, 11))
			eps := g.Const(normal(tensor.NewRNG(12), tensor.Float64, 5, 3))
			_, ll, kl := m.ELBO(x, eps)
			sum := func(v *graph.Node) float64 { return graph.Sum(v, nil, false).Item() }
			b := max(beta, 1) // 0 means 1
			assert.InDelta(t, -sum(ll)+b*sum(kl), m.Loss(x, eps).Item(), 1e-9, "likelihood %v, β = %g", lik, beta)
		}
	}
	assert.Panics(t, func() { New(tensor.NewRNG(1), Options{Input: 4, Latent: 2, Beta: -1}) })
}

func TestBadSizes(t *testing.T) {
	assert.Panics(t, func() { New(tensor.NewRNG(1), Options{Input: 0, Latent: 2}) })
	m := New(tensor.NewRNG(1), Options{Input: 4, Latent: 2})
	g := graph.New()
	assert.Panics(t, func() { m.Encoder.Forward(g.Const(tensor.Zeros(tensor.Float32, 2, 5))) })
}
