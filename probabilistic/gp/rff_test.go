package gp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// apxProfiles are the kernels' profiles k(r) of the scaled distance,
// written out by hand.
var apxProfiles = map[string]func(r float64) float64{
	"rbf":      func(r float64) float64 { return math.Exp(-r * r / 2) },
	"matern12": func(r float64) float64 { return math.Exp(-r) },
	"matern32": func(r float64) float64 { return (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r) },
	"matern52": func(r float64) float64 {
		return (1 + math.Sqrt(5)*r + 5*r*r/3) * math.Exp(-math.Sqrt(5)*r)
	},
}

func apxStationary(name string, ls ...float64) *kernel.Stationary {
	switch name {
	case "rbf":
		return kernel.NewRBF(ls...)
	case "matern12":
		return kernel.NewMatern12(ls...)
	case "matern32":
		return kernel.NewMatern32(ls...)
	default:
		return kernel.NewMatern52(ls...)
	}
}

// The RFF estimate φ(x)ᵀφ(x') converges to the exact kernel like 1/√D:
// the mean absolute error over all pairs of 12 points in 2-D falls from
// D = 100 to 1000 to 10000, stays below 1.5/√D·σ² (the summands of the
// Monte Carlo average have variance at most σ⁴), and not far below
// 0.05/√D·σ² either (so the estimate is a genuine Monte Carlo one).
func TestRFFConvergesToKernel(t *testing.T) {
	rng := tensor.NewRNG(7)
	const n, variance = 12, 1.7
	ls := []float64{0.8, 1.3} // ARD
	xv := rng.Uniform(tensor.Float64, -1.5, 1.5, n, 2).Values()
	for name, prof := range apxProfiles {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			prev := math.Inf(1)
			for _, nf := range []int{100, 1000, 10000} {
				k := kernel.NewScale(apxStationary(name, ls...), variance)
				r, err := NewRFF(k, 2, nf, tensor.NewRNG(uint64(nf)))
				require.NoError(t, err)
				x := tensor.FromValues(dt, xv, n, 2)
				approx := r.Kernel(x, nil)
				require.Equal(t, dt, approx.DType())
				errSum, pairs := 0.0, 0
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						dx := (xv[2*i] - xv[2*j]) / ls[0]
						dy := (xv[2*i+1] - xv[2*j+1]) / ls[1]
						exact := variance * prof(math.Hypot(dx, dy))
						errSum += math.Abs(approx.At(i, j) - exact)
						pairs++
					}
				}
				mae := errSum / float64(pairs)
				bound := 1.5 * variance / math.Sqrt(float64(nf))
				t.Logf("%s %v D=%d: mean abs error %.5f (bound %.5f)", name, dt, nf, mae, bound)
				assert.Less(t, mae, bound, "%s %v D=%d", name, dt, nf)
				assert.Greater(t, mae, 0.05*variance/math.Sqrt(float64(nf)), "%s %v D=%d", name, dt, nf)
				assert.Less(t, mae, prev, "%s %v D=%d: error decreases", name, dt, nf)
				prev = mae
			}
		}
	}
}

// The same seed gives the same features; φ(x)ᵀφ(x) never exceeds 2σ².
func TestRFFDeterministic(t *testing.T) {
	k := kernel.NewScale(kernel.NewRBF(1), 2)
	r1, err := NewRFF(k, 1, 50, tensor.NewRNG(1))
	require.NoError(t, err)
	r2, err := NewRFF(k, 1, 50, tensor.NewRNG(1))
	require.NoError(t, err)
	x := tensor.FromFloat64s([]float64{0.3, -1}, 2, 1)
	assert.Equal(t, r1.Features(x).Values(), r2.Features(x).Values())
	for _, v := range tensor.MatMulT(r1.Features(x), r1.Features(x), false, true).Values() {
		assert.LessOrEqual(t, math.Abs(v), 4.0)
	}
}

// Bayesian linear regression on the features is a GP with the RFF
// kernel: its LML and predictive mean equal those computed from the
// n×n matrix Kφ = ΦΦᵀ directly (log N(y | 0, Kφ + σ²I) and
// Kφ(x*, X)(Kφ + σ²I)⁻¹y).
func TestRFFRegressionIsGPWithFeatureKernel(t *testing.T) {
	x, y := apxRegression(15, 5)
	const noise = 0.05
	r, err := NewRFF(kernel.NewRBF(1), 1, 40, tensor.NewRNG(2))
	require.NoError(t, err)
	xt := tensor.FromFloat64s(append([]float64(nil), x...), 15, 1)
	m, err := NewRFFRegression(r, xt, tensor.FromFloat64s(append([]float64(nil), y...), 15), noise)
	require.NoError(t, err)

	kf := r.Kernel(xt, nil)
	ky := tensor.Add(kf, tensor.MulScalar(tensor.Eye(tensor.Float64, 15), noise))
	l, err := tensor.Cholesky(ky)
	require.NoError(t, err)
	yt := tensor.FromFloat64s(append([]float64(nil), y...), 15, 1)
	v := tensor.TriSolve(l, yt, true, false).Values()
	q := 0.0
	for _, vi := range v {
		q += vi * vi
	}
	want := -0.5*q - 0.5*tensor.LogDetChol(l).Item() - 7.5*math.Log(2*math.Pi)
	assert.InDelta(t, want, m.LogMarginalLikelihood(), 1e-8)

	xs := tensor.FromFloat64s([]float64{-1, 0.5}, 2, 1)
	pred := m.Predict(xs)
	wantMean := tensor.MatMul(r.Kernel(xs, xt), tensor.CholeskySolve(l, yt)).Values()
	assert.InDeltaSlice(t, wantMean, pred.Mean.Values(), 1e-8)
	assert.InDelta(t, math.Sin(-1), pred.Mean.Values()[0], 0.2)
}

func TestRFFErrors(t *testing.T) {
	_, err := NewRFF(kernel.NewPeriodic(1, 1), 1, 10, tensor.NewRNG(1))
	assert.ErrorContains(t, err, "no supported spectral density")
	_, err = NewRFF(kernel.NewRationalQuadratic(1, 1), 1, 10, tensor.NewRNG(1))
	assert.ErrorContains(t, err, "not supported")
	_, err = NewRFF(kernel.NewRBF(1, 2, 3), 2, 10, tensor.NewRNG(1))
	assert.ErrorContains(t, err, "3 lengthscales for 2 input columns")
	_, err = NewRFF(kernel.NewRBF(1), 1, 0, tensor.NewRNG(1))
	assert.Error(t, err)
	r, err := NewRFF(kernel.NewRBF(1), 1, 10, tensor.NewRNG(1))
	require.NoError(t, err)
	_, err = NewRFFRegression(r, tensor.Zeros(tensor.Float64, 3, 1), tensor.Zeros(tensor.Float64, 3), 0)
	assert.ErrorContains(t, err, "must be positive")
}
