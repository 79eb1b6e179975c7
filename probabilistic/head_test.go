package probabilistic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// TestGaussianHead sets the head's weights by hand and checks the
// distribution it produces and the gradients reaching its parameters.
func TestGaussianHead(t *testing.T) {
	for _, dt := range numtest.DTypes {
		for _, param := range []ScaleParam{LogVariance, SoftplusScale} {
			h := NewGaussianHead(tensor.NewRNG(1), 2, 2, param, dt)
			var m nn.Module = h
			names := []string{}
			for _, p := range m.Params() {
				names = append(names, p.Name)
			}
			require.Equal(t, []string{"mean.weight", "mean.bias", "scale.weight", "scale.bias"}, names)
			require.Equal(t, 12, nn.NumParams(h))

			// mean = x·Wᵀ + b with W = I, b = (1, −1); raw scale = 0·x + (log 4, 0).
			h.MeanLayer.Weight.Value = tensor.Eye(dt, 2)
			h.MeanLayer.Bias.Value = tensor.FromValues(dt, []float64{1, -1}, 2)
			h.ScaleLayer.Weight.Value = tensor.Zeros(dt, 2, 2)
			h.ScaleLayer.Bias.Value = tensor.FromValues(dt, []float64{math.Log(4), 0}, 2)
			g := graph.New()
			x := c(g, dt, []float64{0.5, 2}, 1, 2)
			d := h.Distribution(x)
			require.Equal(t, []int{1, 2}, d.BatchShape())
			requireValues(t, []float64{1.5, 1}, d.Mean(), numtest.Pick(dt, 2e-5, 1e-10))
			want := []float64{2, 1} // exp(½ log 4), exp(0)
			if param == SoftplusScale {
				want = []float64{math.Log1p(4) + 1e-6, math.Ln2 + 1e-6}
			}
			requireValues(t, want, d.Scale, numtest.Pick(dt, 2e-5, 1e-10))

			loss := graph.Neg(graph.Sum(d.LogProb(c(g, dt, []float64{0, 0}, 1, 2)), nil, false))
			grads := nn.Gradients(loss, h.Params())
			require.Len(t, grads, 4)
			// d loss/d mean = (μ − y)/σ² = (1.5/4, 1/1) for LogVariance; the mean bias gets it.
			if param == LogVariance {
				requireValues(t, []float64{1.5 / 4, 1}, g.Const(grads[1]), numtest.Pick(dt, 2e-5, 1e-10))
			}
			for i, gr := range grads {
				require.NotZero(t, tensor.Sum(tensor.Abs(gr), nil, false).Item(), "gradient %d", i)
			}
		}
	}
}

// TestReparameterise checks μ + exp(½·logvar)·ε and its derivatives.
func TestReparameterise(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		mu, lv := v(g, dt, s(1)), v(g, dt, s(math.Log(4)))
		z := Reparameterise(mu, lv, c(g, dt, s(0.5)))
		requireValues(t, s(2), z, numtest.Pick(dt, 2e-5, 1e-10))
		gr := autodiff.Grad(z, mu, lv)
		requireValues(t, s(1), gr[0], numtest.Pick(dt, 2e-5, 1e-10))
		requireValues(t, s(0.5), gr[1], numtest.Pick(dt, 2e-5, 1e-10)) // ½·exp(½ log 4)·0.5
	}
}
