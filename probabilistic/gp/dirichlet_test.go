package gp

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// threeBlobs returns n points around three centres in the plane with
// their labels.
func threeBlobs(seed uint64, n int) (*tensor.Tensor, []int) {
	rng := tensor.NewRNG(seed)
	centres := [][2]float64{{-2, 0}, {2, 0}, {0, 2.5}}
	xv := make([]float64, 0, 2*n)
	labels := make([]int, n)
	for i := range labels {
		c := i % 3
		labels[i] = c
		xv = append(xv, centres[c][0]+0.8*rng.NormFloat64(), centres[c][1]+0.8*rng.NormFloat64())
	}
	return tensor.FromFloat64s(xv, n, 2), labels
}

// The transformed targets are Milios et al.'s: for αε = 0.01, log(1.01) −
// log(1/1.01 + 1)/2 for the label's class and log(0.01) − log(101)/2 for
// the others.
func TestDirichletTargetsByHand(t *testing.T) {
	x, labels := threeBlobs(1, 6)
	m, err := NewDirichletClassifier(x, labels, DirichletOptions{Kernel: kernel.NewRBF(1)})
	require.NoError(t, err)
	on, off := math.Log(1.01)-math.Log(1/1.01+1)/2, math.Log(0.01)-math.Log(101)/2
	assert.InDelta(t, -0.33414, on, 1e-5)
	assert.InDelta(t, -6.91273, off, 1e-5)
	y := m.Targets()
	for i, l := range labels {
		for j := range 3 {
			want := off
			if j == l {
				want = on
			}
			assert.InDelta(t, want, y.At(i, j), 1e-12)
		}
	}
}

// The model is C exact GP regressions sharing the kernel and the noise:
// its LML is the sum of theirs and its latent posterior is theirs, to
// 1e-10.
func TestDirichletMatchesExactPerClass(t *testing.T) {
	x, labels := threeBlobs(2, 15)
	m, err := NewDirichletClassifier(x, labels, DirichletOptions{Kernel: kernel.NewScale(kernel.NewRBF(1.3), 2)})
	require.NoError(t, err)
	require.NoError(t, m.Hyperparam("noise").Set(0.2))
	require.NoError(t, m.Hyperparam("mean").Set(-3, -4, -5))
	xs := tensor.NewRNG(3).Uniform(tensor.Float64, -3, 3, 4, 2)
	mean, variance, err := m.Latent(xs)
	require.NoError(t, err)
	sum := 0.0
	for c := range 3 {
		e, err := NewExact(x, tensor.FromValues(tensor.Float64, column(m.Targets(), c), 15),
			ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(1.3), 2), Noise: 0.2, Mean: ConstantMean})
		require.NoError(t, err)
		require.NoError(t, e.Hyperparam("mean").Set(-3-float64(c)))
		sum += lmlOf(t, e)
		p, err := e.Predict(xs)
		require.NoError(t, err)
		numtest.CloseValues(t, p.Mean.Values(), column(mean, c), 1e-10, "class %d mean", c)
		numtest.Close(t, p.Var.Values(), variance, 1e-10, "class %d var", c)
	}
	l, err := m.LogMarginalLikelihood(graph.New())
	require.NoError(t, err)
	assert.InDelta(t, sum, l.Item(), 1e-10*math.Abs(sum))
}

// PredictProba is the expectation of the softmax under the latent
// posterior: with two classes that is E[σ(f₀ − f₁)], f₀ − f₁ ~ N(μ₀ − μ₁,
// 2v), which Gauss–Hermite quadrature gives independently. The Monte
// Carlo estimate is within 4 standard errors, rows sum to one and the
// same seed gives the same numbers.
func TestDirichletPredictProba(t *testing.T) {
	x, labels := threeBlobs(4, 20)
	for i := range labels {
		labels[i] %= 2
	}
	const draws = 20000
	m, err := NewDirichletClassifier(x, labels, DirichletOptions{Kernel: kernel.NewScale(kernel.NewRBF(2), 4), Samples: draws, Seed: 5})
	require.NoError(t, err)
	xs := tensor.FromFloat64s([]float64{0, 0, 5, 5, -2, 0.5}, 3, 2)
	p, err := m.PredictProba(xs)
	require.NoError(t, err)
	mean, variance, err := m.Latent(xs)
	require.NoError(t, err)
	nodes, weights := hermite20()
	for i := range 3 {
		mu, sd := mean.At(i, 0)-mean.At(i, 1), math.Sqrt(2*variance.At(i))
		want, second := 0.0, 0.0
		for k, z := range nodes {
			s := 1 / (1 + math.Exp(-(mu + math.Sqrt2*sd*z)))
			want += weights[k] * s / math.Sqrt(math.Pi)
			second += weights[k] * s * s / math.Sqrt(math.Pi)
		}
		se := math.Sqrt((second - want*want) / draws)
		assert.InDelta(t, want, p.At(i, 0), 4*se+1e-12, "row %d", i)
		assert.InDelta(t, 1, p.At(i, 0)+p.At(i, 1), 1e-12)
	}
	q, err := m.PredictProba(xs)
	require.NoError(t, err)
	assert.Equal(t, p.Values(), q.Values())
}

// hermite20 returns the 20-point Gauss–Hermite nodes and weights (weight
// function e^{−z²}), from the Golub–Welsch eigenproblem.
func hermite20() (nodes, weights []float64) {
	const n = 20
	j := make([]float64, n*n)
	for i := 1; i < n; i++ {
		b := math.Sqrt(float64(i) / 2)
		j[i*n+i-1], j[(i-1)*n+i] = b, b
	}
	w, v, err := tensor.Eigh(tensor.FromFloat64s(j, n, n))
	if err != nil {
		panic(err)
	}
	for i := range n {
		nodes = append(nodes, w.At(i))
		weights = append(weights, math.Sqrt(math.Pi)*v.At(0, i)*v.At(0, i))
	}
	return nodes, weights
}

// Deep kernel learning end to end: a small Tanh network under an RBF,
// trained with the GP on three blobs, raises the LML and classifies
// held-out points of the blobs as well as the blobs allow.
func TestFitDirichletDeepKernel(t *testing.T) {
	x, labels := threeBlobs(6, 90)
	xt, lt := threeBlobs(7, 60)
	net := nn.NewSequential(nn.NewLinear(tensor.NewRNG(8), 2, 4, true, tensor.Float64), nn.Tanh{}, nn.NewLinear(tensor.NewRNG(9), 4, 2, true, tensor.Float64))
	k := kernel.NewScale(kernel.NewDeep(net, kernel.NewRBF(1)), 1)
	start := net.Params()[0].Value.Clone()
	m, err := FitDirichletClassifier(context.Background(), x, labels, DirichletOptions{Kernel: k, MaxIter: 40, LR: 0.05})
	require.NoError(t, err)
	fr := m.FitResult()
	assert.Greater(t, fr.LML, fr.Restarts[0].LML-1e-9)
	assert.NotEqual(t, start.Values(), net.Params()[0].Value.Values(), "the network is trained")
	pred, err := m.Predict(xt)
	require.NoError(t, err)
	acc, err := metrics.Accuracy(pred, lt)
	require.NoError(t, err)
	assert.Greater(t, acc, 0.85)
	// An L-BFGS fit out of iterations reports it, with a usable model.
	xd, ld, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	mi, err := FitDirichletClassifier(context.Background(), xd, ld, DirichletOptions{Kernel: kernel.NewRBF(1), Optimizer: "lbfgs", MaxIter: 2})
	require.NotNil(t, mi)
	p, perr := mi.PredictProba(xd)
	require.NoError(t, perr)
	numtest.Unconverged(t, err, "gp.FitDirichletClassifier", p.Values())
}

// Bad inputs are errors naming the fault: a feature extractor whose output
// width disagrees with the kernel, one whose input width disagrees with
// the data, labels out of range.
func TestDirichletBadInputs(t *testing.T) {
	x, labels := threeBlobs(10, 9)
	deep := func(in, out int, base kernel.Kernel) kernel.Kernel {
		return kernel.NewDeep(nn.NewLinear(tensor.NewRNG(1), in, out, true, tensor.Float64), base)
	}
	cases := []struct {
		name   string
		k      kernel.Kernel
		labels []int
		want   string
	}{
		{"feature width", deep(2, 3, kernel.NewRBF(1, 1)), labels, "the feature extractor gives 3 features, which the base kernel does not accept"},
		{"input width", deep(5, 2, kernel.NewRBF(1)), labels, "Linear(5→2): input shape (9, 2) does not fit"},
		{"negative label", kernel.NewRBF(1), []int{0, 1, -1, 0, 1, 0, 1, 0, 1}, "label -1 at position 2 is negative"},
		{"one class", kernel.NewRBF(1), make([]int, 9), "a single class"},
		{"labels short", kernel.NewRBF(1), labels[:4], "x has 9 rows but there are 4 labels"},
		{"nil kernel", nil, labels, "nil kernel"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := FitDirichletClassifier(context.Background(), x, c.labels, DirichletOptions{Kernel: c.k, MaxIter: 2})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	m, err := NewDirichletClassifier(x, labels, DirichletOptions{Kernel: kernel.NewRBF(1)})
	require.NoError(t, err)
	_, err = m.PredictProba(tensor.Zeros(tensor.Float64, 2, 3))
	assert.ErrorContains(t, err, "test inputs must be an (m, 2) matrix")
}

// A cancelled context stops both fits at once with a usable model at the
// initial values and an error wrapping context.Canceled.
func TestFitsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x, labels := threeBlobs(11, 12)
	for _, opt := range []string{"adam", "lbfgs"} {
		m, err := FitDirichletClassifier(ctx, x, labels, DirichletOptions{Kernel: kernel.NewRBF(1), Optimizer: opt})
		assert.ErrorIs(t, err, context.Canceled, opt)
		require.NotNil(t, m, opt)
		assert.InDelta(t, 0.1, m.Hyperparam("noise").Value(), 1e-12, opt)
	}
	xg, y := gridData(12, 6, 1, 2)
	m, err := FitMultitask(ctx, xg, y, nil, MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(1)}})
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, m)
	_, err = m.Predict(xg, nil)
	assert.NoError(t, err)
}

// In float32 (the example's dtype) the models agree with float64 to
// float32's precision: the Dirichlet classifier's probabilities and the
// multitask LML on both paths.
func TestFloat32MatchesFloat64(t *testing.T) {
	x, labels := threeBlobs(13, 30)
	var probs [2][]float64
	for i, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		m, err := NewDirichletClassifier(x.Cast(dt), labels, DirichletOptions{Kernel: kernel.NewScale(kernel.NewRBF(1), 2), Samples: 64, Seed: 1})
		require.NoError(t, err)
		p, err := m.PredictProba(x.Cast(dt))
		require.NoError(t, err)
		assert.Equal(t, dt, p.DType())
		probs[i] = p.Values()
	}
	numtest.CloseValues(t, probs[0], probs[1], 1e-3, "probabilities")
	xg, y := gridData(14, 10, 1, 2)
	for _, dense := range []bool{false, true} {
		var lml [2]float64
		for i, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			m, err := NewMultitask(xg.Cast(dt), y.Cast(dt), nil, MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(1)}, Dense: dense, Seed: 2})
			require.NoError(t, err)
			lml[i] = mtLML(t, m)
		}
		assert.InDelta(t, lml[0], lml[1], 1e-3*math.Abs(lml[0]), "dense=%v", dense)
	}
}
