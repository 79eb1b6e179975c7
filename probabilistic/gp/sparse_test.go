package gp

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// apxRegression is a 1-D regression set: y = sin(x) + noise.
func apxRegression(n int, seed uint64) (x, y []float64) {
	rng := tensor.NewRNG(seed)
	x = make([]float64, n)
	y = make([]float64, n)
	for i := range x {
		x[i] = -3 + 6*float64(i)/float64(n-1) + 0.05*rng.NormFloat64()
		y[i] = math.Sin(x[i]) + 0.1*rng.NormFloat64()
	}
	return x, y
}

// apxExactLML is log N(y | 0, K + σ²I) for the RBF kernel, by hand:
// −½ yᵀ(K+σ²I)⁻¹y − ½ log|K+σ²I| − (n/2) log 2π.
func apxExactLML(t *testing.T, x, y []float64, variance, ls, noise float64) float64 {
	n := len(x)
	k := tensor.New(tensor.Float64, n, n)
	for i := range x {
		for j := range x {
			v := apxRBF(x[i], x[j], variance, ls)
			if i == j {
				v += noise
			}
			k.SetAt(v, i, j)
		}
	}
	l, err := tensor.Cholesky(k)
	require.NoError(t, err)
	alpha := tensor.TriSolve(l, tensor.FromFloat64s(append([]float64(nil), y...), n, 1), true, false).Values()
	q, logdet := 0.0, 0.0
	for i := range alpha {
		q += alpha[i] * alpha[i]
		logdet += 2 * math.Log(l.At(i, i))
	}
	return -0.5*q - 0.5*logdet - 0.5*float64(n)*math.Log(2*math.Pi)
}

func apxSparse(t *testing.T, x, y, z []float64, variance, ls, noise, jitter float64) *Sparse {
	s, err := NewSparse(tensor.FromFloat64s(append([]float64(nil), x...), len(x), 1), tensor.FromFloat64s(append([]float64(nil), y...), len(y)), SparseOptions{Kernel: kernel.NewScale(kernel.NewRBF(ls), variance), Inducing: tensor.FromFloat64s(append([]float64(nil), z...), len(z), 1), Noise: noise, Jitter: jitter})
	require.NoError(t, err)
	return s
}

func apxELBO(t *testing.T, s *Sparse) float64 {
	g := graph.New()
	e, err := s.ELBO(g)
	require.NoError(t, err)
	return e.Item()
}

// The collapsed bound lies below the exact log marginal likelihood, and
// reaches it when the inducing inputs are the data points (Qnn = Knn).
func TestTitsiasBoundBelowExactLML(t *testing.T) {
	x, y := apxRegression(12, 1)
	for _, hp := range []struct{ variance, ls, noise float64 }{{1, 1, 0.1}, {2, 0.6, 0.05}, {0.5, 2, 0.3}} {
		exact := apxExactLML(t, x, y, hp.variance, hp.ls, hp.noise)
		for _, z := range [][]float64{{0}, {-2, 0, 2}, {-2.5, -1, 0.5, 1.5, 2.8}} {
			elbo := apxELBO(t, apxSparse(t, x, y, z, hp.variance, hp.ls, hp.noise, 1e-8))
			assert.Less(t, elbo, exact, "m=%d %+v", len(z), hp)
		}
		full := apxELBO(t, apxSparse(t, x, y, x, hp.variance, hp.ls, hp.noise, 1e-10))
		assert.InDelta(t, exact, full, 1e-6, "inducing = data %+v", hp)
	}
}

// More inducing points (nested sets) give a tighter bound.
func TestTitsiasBoundTightensWithM(t *testing.T) {
	x, y := apxRegression(30, 2)
	prev := math.Inf(-1)
	for _, m := range []int{2, 4, 8, 16, 30} {
		z := make([]float64, m)
		for i := range z {
			z[i] = x[i*len(x)/m]
		}
		e := apxELBO(t, apxSparse(t, x, y, z, 1, 1, 0.1, 1e-8))
		assert.Greater(t, e, prev-1e-9, "m=%d", m)
		prev = e
	}
}

// GradCheck of the bound with respect to x, y, the inducing inputs and
// the noise variance, in both dtypes.
func TestTitsiasBoundGradCheck(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		k := kernel.NewScale(kernel.NewRBF(1.2), 1.3)
		for _, p := range k.Hyperparams() {
			p.SetDType(dt)
		}
		x := tensor.FromValues(dt, []float64{-1.5, -0.7, 0.1, 0.8, 1.6, 2.2}, 6, 1)
		y := tensor.FromValues(dt, []float64{-0.9, -0.5, 0.2, 0.7, 0.9, 0.6}, 6, 1)
		z := tensor.FromValues(dt, []float64{-1, 0.4, 1.9}, 3, 1)
		noise := tensor.FromValues(dt, []float64{0.2})
		fn := func(xs []*graph.Node) *graph.Node {
			return TitsiasBound(k, xs[0], xs[1], xs[2], xs[3], 1e-6)
		}
		opt := autodiff.GradCheckOptions{Name: "TitsiasBound", Order: 1}
		if dt == tensor.Float32 {
			opt.Tol = 3e-2
		}
		_, err := autodiff.GradCheck(fn, []*tensor.Tensor{x, y, z, noise}, opt)
		assert.NoError(t, err, "%v", dt)
	}
}

// With the inducing inputs at the data, the sparse predictive mean and
// variance are the exact ones, Kₛₓ(K+σ²I)⁻¹y and kₛₛ − Kₛₓ(K+σ²I)⁻¹Kₓₛ,
// computed here by hand.
func TestSparsePredictMatchesExactAtFullRank(t *testing.T) {
	x, y := apxRegression(10, 3)
	const variance, ls, noise = 1.5, 0.9, 0.1
	s := apxSparse(t, x, y, x, variance, ls, noise, 1e-10)
	xs := []float64{-2.2, 0.35, 4}
	pred, err := s.Predict(tensor.FromFloat64s(append([]float64(nil), xs...), 3, 1))
	require.NoError(t, err)
	n := len(x)
	k := tensor.New(tensor.Float64, n, n)
	for i := range x {
		for j := range x {
			v := apxRBF(x[i], x[j], variance, ls)
			if i == j {
				v += noise
			}
			k.SetAt(v, i, j)
		}
	}
	l, err := tensor.Cholesky(k)
	require.NoError(t, err)
	for q, xq := range xs {
		ks := tensor.New(tensor.Float64, n, 1)
		for i := range x {
			ks.SetAt(apxRBF(x[i], xq, variance, ls), i, 0)
		}
		alpha := tensor.CholeskySolve(l, tensor.FromFloat64s(append([]float64(nil), y...), n, 1))
		mean := tensor.Dot(tensor.Reshape(ks, n), tensor.Reshape(alpha, n)).Item()
		v := tensor.TriSolve(l, ks, true, false).Values()
		variance0 := variance
		for _, vi := range v {
			variance0 -= vi * vi
		}
		assert.InDelta(t, mean, pred.Mean.Values()[q], 1e-6, "mean at %g", xq)
		assert.InDelta(t, variance0, pred.Var.Values()[q], 1e-6, "var at %g", xq)
		assert.InDelta(t, variance0+noise, pred.NoisyVar.Values()[q], 1e-6)
	}
}

// Fitting moves the inducing inputs (graph variables) and the
// hyperparameters, and raises the bound.
func TestSparseFitMovesInducingPoints(t *testing.T) {
	x, y := apxRegression(40, 4)
	z0 := []float64{-0.5, -0.2, 0.1, 0.4}
	s := apxSparse(t, x, y, z0, 1, 1, 0.3, 0)
	before := apxELBO(t, s)
	res, err := s.fit(context.Background(), fitOptions{MaxIter: 200})
	require.NoError(t, err)
	after := apxELBO(t, s)
	assert.Greater(t, after, before+1)
	assert.InDelta(t, res.LML, after, 1e-9)
	zs := s.Inducing().Values()
	spread := 0.0
	for _, v := range zs {
		spread = math.Max(spread, math.Abs(v))
	}
	assert.Greater(t, spread, 1.0, "inducing points spread out over the data")
	pred, err := s.Predict(tensor.FromFloat64s([]float64{-1.5, 1.5}, 2, 1))
	require.NoError(t, err)
	assert.InDelta(t, math.Sin(-1.5), pred.Mean.Values()[0], 0.2)
	assert.InDelta(t, math.Sin(1.5), pred.Mean.Values()[1], 0.2)
}

func TestSparseErrors(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1}, 2, 1)
	y := tensor.FromFloat64s([]float64{0, 1}, 2)
	_, err := NewSparse(x, y, SparseOptions{Kernel: kernel.NewRBF(1), Inducing: tensor.FromFloat64s([]float64{0, 1}, 1, 2)})
	assert.ErrorContains(t, err, "z must be")
	_, err = NewSparse(x, tensor.FromFloat64s([]float64{0}, 1), SparseOptions{Kernel: kernel.NewRBF(1), Inducing: x})
	assert.ErrorContains(t, err, "y must have shape")
	_, err = NewSparse(x, y, SparseOptions{Kernel: kernel.NewRBF(1), Inducing: x, Noise: 1e-7})
	assert.ErrorContains(t, err, "must exceed its floor")
}
