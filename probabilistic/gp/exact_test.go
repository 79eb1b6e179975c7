package gp

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// toyData returns n points in d dimensions and targets y = sin(Σx) + noise.
func toyData(seed uint64, n, d int) (x, y *tensor.Tensor) {
	rng := tensor.NewRNG(seed)
	x = rng.Uniform(tensor.Float64, -2, 2, n, d)
	yv := make([]float64, n)
	for i := range yv {
		s := 0.0
		for j := 0; j < d; j++ {
			s += x.At(i, j)
		}
		yv[i] = math.Sin(s) + 0.1*rng.NormFloat64() + 0.5
	}
	return x, tensor.FromFloat64s(yv, n)
}

// rbfByHand returns v·exp(−‖a−b‖²/(2ℓ²)) for every pair of rows, in plain
// loops.
func rbfByHand(a, b *tensor.Tensor, ls, v float64) [][]float64 {
	n, m, d := a.Shape()[0], b.Shape()[0], a.Shape()[1]
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, m)
		for j := range out[i] {
			r2 := 0.0
			for k := 0; k < d; k++ {
				diff := a.At(i, k) - b.At(j, k)
				r2 += diff * diff
			}
			out[i][j] = v * math.Exp(-r2/(2*ls*ls))
		}
	}
	return out
}

func matrix(rows [][]float64) *tensor.Tensor {
	n, m := len(rows), len(rows[0])
	flat := make([]float64, 0, n*m)
	for _, r := range rows {
		flat = append(flat, r...)
	}
	return tensor.FromFloat64s(flat, n, m)
}

func lmlOf(t *testing.T, m *Exact) float64 {
	t.Helper()
	g := graph.New()
	l, err := m.LogMarginalLikelihood(g)
	require.NoError(t, err)
	return l.Item()
}

// The LML equals the multivariate normal log density of y under
// N(μ, K + σ²I), written out with a determinant and a linear solve:
// −½ (y−μ)ᵀ(K+σ²I)⁻¹(y−μ) − ½ log det(K+σ²I) − (n/2) log 2π.
func TestLMLMatchesMVNDensity(t *testing.T) {
	const ls, v, noise = 0.8, 1.7, 0.05
	cases := []struct {
		name      string
		normalize bool
		mean      MeanKind
		meanValue float64
	}{
		{"zero mean", false, ZeroMean, 0},
		{"constant mean", false, ConstantMean, 0.3},
		{"normalised", true, ZeroMean, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, y := toyData(1, 12, 2)
			m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(ls), v), Noise: noise, Mean: c.mean, Normalize: c.normalize})
			require.NoError(t, err)
			if c.mean == ConstantMean {
				require.NoError(t, m.Hyperparam("mean").Set(c.meanValue))
			}
			n := 12
			kk := rbfByHand(x, x, ls, v)
			for i := range kk {
				kk[i][i] += noise
			}
			yv := y.Values()
			if c.normalize {
				mu, sd := 0.0, 0.0
				for _, e := range yv {
					mu += e
				}
				mu /= float64(n)
				for _, e := range yv {
					sd += (e - mu) * (e - mu)
				}
				sd = math.Sqrt(sd / float64(n))
				for i := range yv {
					yv[i] = (yv[i] - mu) / sd
				}
			}
			for i := range yv {
				yv[i] -= c.meanValue
			}
			K := matrix(kk)
			sign, logAbs, err := tensor.SlogDet(K)
			require.NoError(t, err)
			require.Equal(t, 1.0, sign.Item())
			alpha, err := tensor.Solve(K, tensor.FromFloat64s(yv, n, 1))
			require.NoError(t, err)
			quad := 0.0
			for i, e := range yv {
				quad += e * alpha.At(i, 0)
			}
			want := -0.5*quad - 0.5*logAbs.Item() - 0.5*float64(n)*math.Log(2*math.Pi)
			assert.InDelta(t, want, lmlOf(t, m), 1e-9)
		})
	}
}

// In float32 the LML agrees with the float64 one to float32 accuracy.
func TestLMLFloat32(t *testing.T) {
	x, y := toyData(2, 10, 2)
	m64, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewMatern52(1.1), 1.3)})
	require.NoError(t, err)
	m32, err := NewExact(x.Cast(tensor.Float32), y.Cast(tensor.Float32), ExactOptions{Kernel: kernel.NewScale(kernel.NewMatern52(1.1), 1.3)})
	require.NoError(t, err)
	assert.Equal(t, tensor.Float32, m32.Hyperparams()[0].Raw().DType())
	assert.InDelta(t, lmlOf(t, m64), lmlOf(t, m32), 1e-3)
}

// The posterior mean is kernel ridge regression with λ = σ²:
// k(xs, X)(K + λI)⁻¹y, and the latent variance is
// k(xs, xs) − k(xs, X)(K + λI)⁻¹k(X, xs).
func TestPosteriorMatchesKernelRidge(t *testing.T) {
	const ls, v, noise = 0.7, 1.4, 0.1
	x, y := toyData(3, 15, 1)
	xs := tensor.Reshape(tensor.Linspace(tensor.Float64, -2.5, 2.5, 7), 7, 1)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(ls), v), Noise: noise})
	require.NoError(t, err)
	pred, err := m.Predict(xs)
	require.NoError(t, err)

	kk := rbfByHand(x, x, ls, v)
	for i := range kk {
		kk[i][i] += noise
	}
	ks := matrix(rbfByHand(x, xs, ls, v)) // (n, m)
	alpha, err := tensor.Solve(matrix(kk), tensor.Reshape(y, 15, 1))
	require.NoError(t, err)
	w, err := tensor.Solve(matrix(kk), ks) // (K + λI)⁻¹ k(X, xs)
	require.NoError(t, err)
	for j := 0; j < 7; j++ {
		mean, quad := 0.0, 0.0
		for i := 0; i < 15; i++ {
			mean += ks.At(i, j) * alpha.At(i, 0)
			quad += ks.At(i, j) * w.At(i, j)
		}
		assert.InDelta(t, mean, pred.Mean.At(j), 1e-9)
		assert.InDelta(t, v-quad, pred.Var.At(j), 1e-9)
		assert.InDelta(t, v-quad+noise, pred.NoisyVar.At(j), 1e-9)
	}
}

// With normalisation and a constant mean, predictions at the training
// inputs of a nearly noise-free model reproduce y in the original units.
func TestPredictDenormalises(t *testing.T) {
	x, y := toyData(4, 8, 1)
	ys := tensor.AddScalar(tensor.MulScalar(y, 100), 1000)
	m, err := NewExact(x, ys, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.5), 1), Normalize: true, Mean: ConstantMean, Noise: 1e-5, NoiseFloor: 1e-9})
	require.NoError(t, err)
	pred, err := m.Predict(x)
	require.NoError(t, err)
	assert.InDeltaSlice(t, ys.Values(), pred.Mean.Values(), 1e-2)
	for _, s := range pred.Var.Values() {
		assert.Less(t, s, 1.0, "variance at a training point is below the noise scale (in ppm²-like units)")
	}
}

// The autodiff gradient of the LML equals the closed form
// ∂LML/∂θ = ½ tr((ααᵀ − K⁻¹) ∂K/∂θ), α = K⁻¹y, for θ = log ℓ of an RBF
// (∂K/∂θ = K_rbf ∘ r²/ℓ²), θ = log v of its variance (∂K/∂θ = K_rbf) and
// θ = log(σ² − floor) of the noise (∂K/∂θ = (σ² − floor) I).
func TestLMLGradientClosedForm(t *testing.T) {
	const ls, v, noise, floor = 0.9, 1.3, 0.2, 1e-6
	x, y := toyData(5, 10, 2)
	k := kernel.NewScale(kernel.NewRBF(ls), v)
	m, err := NewExact(x, y, ExactOptions{Kernel: k, Noise: noise})
	require.NoError(t, err)
	for _, p := range m.Hyperparams() {
		p.SetBijector(probabilistic.Exp{})
	}
	g := graph.New()
	lml, err := m.LogMarginalLikelihood(g)
	require.NoError(t, err)
	grads := autodiff.Grad(lml, m.Hyperparam("rbf.lengthscale").RawNode(g), m.Hyperparam("scale.variance").RawNode(g), m.Hyperparam("noise").RawNode(g))

	n := 10
	kr := rbfByHand(x, x, ls, v)
	kk := make([][]float64, n)
	dls := make([][]float64, n)
	dnoise := make([][]float64, n)
	for i := range kk {
		kk[i] = append([]float64(nil), kr[i]...)
		kk[i][i] += noise
		dls[i] = make([]float64, n)
		dnoise[i] = make([]float64, n)
		for j := range kk {
			r2 := 0.0
			for c := 0; c < 2; c++ {
				d := x.At(i, c) - x.At(j, c)
				r2 += d * d
			}
			dls[i][j] = kr[i][j] * r2 / (ls * ls)
		}
		dnoise[i][i] = noise - floor
	}
	K := matrix(kk)
	kinv, err := tensor.Inverse(K)
	require.NoError(t, err)
	alpha, err := tensor.Solve(K, tensor.Reshape(y, n, 1))
	require.NoError(t, err)
	closed := func(dK [][]float64) float64 {
		s := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				s += (alpha.At(i, 0)*alpha.At(j, 0) - kinv.At(i, j)) * dK[j][i]
			}
		}
		return 0.5 * s
	}
	assert.InDelta(t, closed(dls), grads[0].Item(), 1e-8, "lengthscale")
	assert.InDelta(t, closed(kr), grads[1].Item(), 1e-8, "variance")
	assert.InDelta(t, closed(dnoise), grads[2].Item(), 1e-8, "noise")
}

// GradCheck of the LML (through Cholesky and the triangular solve) with
// respect to every unconstrained hyperparameter, for an RBF and a
// composite kernel, to second order.
func TestLMLGradCheck(t *testing.T) {
	kernels := map[string]func() kernel.Kernel{
		"rbf": func() kernel.Kernel { return kernel.NewScale(kernel.NewRBF(0.9), 1.2) },
		"composite": func() kernel.Kernel {
			return kernel.NewSum(kernel.NewScale(kernel.NewMatern32(1.2, 0.8), 0.7), kernel.NewProduct(kernel.NewPeriodic(1, 2), kernel.NewRBF(2)), kernel.NewWhite(0.05))
		},
	}
	for name, mk := range kernels {
		t.Run(name, func(t *testing.T) {
			x, y := toyData(6, 7, 2)
			m, err := NewExact(x, y, ExactOptions{Kernel: mk(), Mean: ConstantMean, Noise: 0.1})
			require.NoError(t, err)
			ps := m.Hyperparams()
			var raws []*tensor.Tensor
			for _, p := range ps {
				raws = append(raws, p.Raw().Clone())
			}
			_, err = autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
				for i, p := range ps {
					xs[i].Graph().Bind(p.Raw(), xs[i])
				}
				l, err := m.LogMarginalLikelihood(xs[0].Graph())
				require.NoError(t, err)
				return l
			}, raws, autodiff.GradCheckOptions{Name: "lml", Tol: 1e-5, Tol2: 1e-4})
			assert.NoError(t, err)
		})
	}
}

// The posterior mean and variance are differentiable in the test inputs
// (Bayesian optimisation relies on it).
func TestPosteriorGradCheck(t *testing.T) {
	x, y := toyData(7, 8, 2)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewMatern52(1), 1)})
	require.NoError(t, err)
	xs := tensor.NewRNG(8).Normal(tensor.Float64, 0, 1, 3, 2)
	for _, which := range []string{"mean", "var"} {
		_, err = autodiff.GradCheck(func(in []*graph.Node) *graph.Node {
			mean, v, err := m.Posterior(in[0])
			require.NoError(t, err)
			if which == "mean" {
				return mean
			}
			return v
		}, []*tensor.Tensor{xs}, autodiff.GradCheckOptions{Name: which, Order: 1})
		assert.NoError(t, err, which)
	}
}

// Joint posterior samples: reproducible for a seed, and their sample mean
// and variance match the posterior's (within 5 standard errors).
func TestSamplePosterior(t *testing.T) {
	x, y := toyData(9, 10, 1)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.8), 1), Normalize: true})
	require.NoError(t, err)
	xs := tensor.Reshape(tensor.Linspace(tensor.Float64, -3, 3, 6), 6, 1)
	const count = 4000
	s1, err := m.SamplePosterior(xs, count, tensor.NewRNG(1))
	require.NoError(t, err)
	s2, err := m.SamplePosterior(xs, count, tensor.NewRNG(1))
	require.NoError(t, err)
	require.Equal(t, []int{count, 6}, s1.Shape())
	assert.Equal(t, s1.Values(), s2.Values())
	pred, err := m.Predict(xs)
	require.NoError(t, err)
	for j := 0; j < 6; j++ {
		mean, sq := 0.0, 0.0
		for i := 0; i < count; i++ {
			mean += s1.At(i, j)
		}
		mean /= count
		for i := 0; i < count; i++ {
			d := s1.At(i, j) - mean
			sq += d * d
		}
		variance := sq / count
		se := math.Sqrt(pred.Var.At(j)/count) + 1e-6
		assert.InDelta(t, pred.Mean.At(j), mean, 5*se, "mean at %d", j)
		assert.InDelta(t, pred.Var.At(j), variance, 5*pred.Var.At(j)*math.Sqrt(2.0/count)+1e-6, "variance at %d", j)
	}
	_, err = m.SamplePosterior(xs, 0, tensor.NewRNG(1))
	assert.Error(t, err)
}

// badKernel returns a fixed indefinite matrix (eigenvalues 3 and −1 on
// pairs), which no jitter up to 1e-4 can repair.
type badKernel struct{ v *kernel.Hyperparam }

func (k badKernel) K(x1, x2 *graph.Node) *graph.Node {
	n := x1.Shape()[0]
	flat := make([]float64, n*n)
	for i := 0; i < n; i++ {
		flat[i*n+i] = 1
		if i%2 == 0 && i+1 < n {
			flat[i*n+i+1], flat[(i+1)*n+i] = 2, 2
		}
	}
	return graph.Mul(k.v.Node(x1.Graph()), x1.Graph().Const(tensor.FromFloat64s(flat, n, n)))
}
func (k badKernel) Diag(x *graph.Node) *graph.Node {
	return graph.BroadcastTo(k.v.Node(x.Graph()), x.Shape()[0])
}
func (k badKernel) Hyperparams() []*kernel.Hyperparam { return []*kernel.Hyperparam{k.v} }

// Duplicate inputs without noise make K singular: the factorisation
// succeeds after escalating the jitter, and each try is reported. An
// indefinite matrix gives a *CholeskyError naming the pivot.
func TestJitterEscalation(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 1, 2, 2}, 5, 1)
	y := tensor.FromFloat64s([]float64{1, 1, 0, -1, -1}, 5)
	var logs []string
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(1), NoiseFree: true, Log: func(s string) { logs = append(logs, s) }})
	require.NoError(t, err)
	l := lmlOf(t, m)
	assert.False(t, math.IsNaN(l) || math.IsInf(l, 0))
	assert.NotEmpty(t, logs, "escalation is reported")
	assert.Contains(t, logs[0], "jitter 1e-08")

	logs = nil
	bad, err := NewExact(tensor.Zeros(tensor.Float64, 4, 1), tensor.Zeros(tensor.Float64, 4), ExactOptions{Kernel: badKernel{kernel.NewHyperparam("bad.v", 1)}, NoiseFree: true, Log: func(s string) { logs = append(logs, s) }})
	require.NoError(t, err)
	_, err = bad.LogMarginalLikelihood(graph.New())
	var ce *CholeskyError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 5, ce.Tries)
	assert.InDelta(t, 1e-4, ce.Jitter, 1e-12)
	assert.Equal(t, 1, ce.Err.Pivot, "1 − 2² < 0 at the second pivot")
	assert.True(t, errors.Is(err, tensor.ErrNotPositiveDefinite))
	assert.Contains(t, err.Error(), "pivot 1")
	assert.Len(t, logs, 5)
	_, err = bad.Predict(tensor.Zeros(tensor.Float64, 2, 1))
	assert.ErrorAs(t, err, &ce)
}

// Bad data is refused by NewExact with a clear error.
func TestNewExactBadInputs(t *testing.T) {
	x, y := toyData(10, 5, 2)
	cases := []struct {
		name string
		k    kernel.Kernel
		x, y *tensor.Tensor
		msg  string
	}{
		{"nil kernel", nil, x, y, "nil kernel"},
		{"x not 2-D", kernel.NewRBF(1), tensor.Zeros(tensor.Float64, 5), y, "(n, d) matrix"},
		{"lengths differ", kernel.NewRBF(1), x, tensor.Zeros(tensor.Float64, 4), "5 rows but y has 4"},
		{"y matrix", kernel.NewRBF(1), x, tensor.Zeros(tensor.Float64, 5, 2), "shape (n) or (n, 1)"},
		{"NaN y", kernel.NewRBF(1), x, tensor.FromFloat64s([]float64{1, 2, math.NaN(), 4, 5}, 5), "y[2]"},
		{"Inf y", kernel.NewRBF(1), x, tensor.FromFloat64s([]float64{1, 2, 3, math.Inf(1), 5}, 5), "not finite"},
		{"NaN x", kernel.NewRBF(1), tensor.FromFloat64s([]float64{1, 2, 3, math.NaN()}, 2, 2), tensor.Zeros(tensor.Float64, 2), "row 1"},
		{"dtypes differ", kernel.NewRBF(1), x, y.Cast(tensor.Float32), "float32"},
		{"no rows", kernel.NewRBF(1), tensor.Zeros(tensor.Float64, 0, 2), tensor.Zeros(tensor.Float64, 0), "no data"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := NewExact(c.x, c.y, ExactOptions{Kernel: c.k})
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(1)})
	require.NoError(t, err)
	_, err = m.Predict(tensor.Zeros(tensor.Float64, 3, 3))
	assert.ErrorContains(t, err, "(m, 2)")
	_, err = m.Predict(tensor.Zeros(tensor.Float32, 3, 2))
	assert.ErrorContains(t, err, "float32")
}
