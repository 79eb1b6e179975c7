package gp

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// gridData returns n inputs in d dimensions and a (n, T) grid of targets.
func gridData(seed uint64, n, d, tasks int) (x, y *tensor.Tensor) {
	rng := tensor.NewRNG(seed)
	x = rng.Uniform(tensor.Float64, -2, 2, n, d)
	yv := make([]float64, n*tasks)
	for i := 0; i < n; i++ {
		for k := 0; k < tasks; k++ {
			yv[i*tasks+k] = math.Sin(x.At(i, 0)+float64(k)) + 0.1*rng.NormFloat64()
		}
	}
	return x, tensor.FromFloat64s(yv, n, tasks)
}

func mtLML(t *testing.T, m *Multitask) float64 {
	t.Helper()
	l, err := m.LogMarginalLikelihood(graph.New())
	require.NoError(t, err)
	return l.Item()
}

// With a diagonal task covariance B = diag(b) the ICM is T independent GPs
// with kernels b_t·k and noises σ²_t: its LML is their sum and its
// predictions theirs, on the Kronecker and the dense path, to 1e-10.
func TestICMDiagonalEqualsIndependentGPs(t *testing.T) {
	const n, T = 15, 3
	x, y := gridData(1, n, 2, T)
	xs := tensor.NewRNG(2).Uniform(tensor.Float64, -2, 2, 6, 2)
	b := []float64{0.7, 1.3, 2.1}
	noise := []float64{0.05, 0.1, 0.3}
	for _, dense := range []bool{false, true} {
		m, err := NewMultitask(x, y, nil, MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(0.9)}, Dense: dense})
		require.NoError(t, err)
		assert.Equal(t, !dense, m.Kronecker())
		require.NoError(t, m.Hyperparam("task.W").Set(0))
		require.NoError(t, m.Hyperparam("task.kappa").Set(b...))
		require.NoError(t, m.Hyperparam("noise").Set(noise...))
		pred, err := m.Predict(xs, nil)
		require.NoError(t, err)
		assert.Equal(t, []int{6, T}, pred.Mean.Shape())
		sum := 0.0
		for k := 0; k < T; k++ {
			yk := tensor.FromValues(tensor.Float64, column(y, k), n)
			e, err := NewExact(x, yk, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.9), b[k]), Noise: noise[k]})
			require.NoError(t, err)
			sum += lmlOf(t, e)
			pe, err := e.Predict(xs)
			require.NoError(t, err)
			numtest.CloseValues(t, pe.Mean.Values(), column(pred.Mean, k), 1e-10, "dense=%v task %d mean", dense, k)
			numtest.CloseValues(t, pe.Var.Values(), column(pred.Var, k), 1e-10, "dense=%v task %d var", dense, k)
			numtest.CloseValues(t, pe.NoisyVar.Values(), column(pred.NoisyVar, k), 1e-10, "dense=%v task %d noisy var", dense, k)
		}
		assert.InDelta(t, sum, mtLML(t, m), 1e-10*math.Abs(sum), "dense=%v", dense)
	}
}

// setLike copies every hyperparameter value of src into dst (same names).
func setLike(t *testing.T, dst, src *Multitask) {
	t.Helper()
	for _, p := range src.Hyperparams() {
		require.NoError(t, dst.Hyperparam(p.Name()).Set(p.Get()...), p.Name())
	}
}

// lmlGrads returns the LML and its gradient with respect to every raw
// hyperparameter, flattened.
func lmlGrads(t *testing.T, m *Multitask) (float64, []float64) {
	t.Helper()
	g := graph.New()
	l, err := m.LogMarginalLikelihood(g)
	require.NoError(t, err)
	var xs []*graph.Node
	for _, p := range m.Hyperparams() {
		xs = append(xs, p.RawNode(g))
	}
	var out []float64
	for _, gn := range autodiff.Grad(l, xs...) {
		out = append(out, gn.Value().Values()...)
	}
	return l.Item(), out
}

// The Kronecker and the dense path agree on the LML, its gradient with
// respect to every hyperparameter and the predictions, to 1e-10, at a
// task covariance of rank 2 with a constant mean per task.
func TestKroneckerMatchesDense(t *testing.T) {
	const n, T = 12, 3
	x, y := gridData(3, n, 1, T)
	xs := tensor.NewRNG(4).Uniform(tensor.Float64, -2, 2, 5, 1)
	opts := MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewMatern52(0.8)}, Rank: 2, Mean: ConstantMean, Seed: 5}
	kr, err := NewMultitask(x, y, nil, opts)
	require.NoError(t, err)
	require.NoError(t, kr.Hyperparam("noise").Set(0.05, 0.2, 0.1))
	require.NoError(t, kr.Hyperparam("mean").Set(0.2, -0.1, 0.4))
	opts.Kernels, opts.Dense = []kernel.Kernel{kernel.NewMatern52(0.8)}, true
	de, err := NewMultitask(x, y, nil, opts)
	require.NoError(t, err)
	setLike(t, de, kr)
	require.True(t, kr.Kronecker())
	require.False(t, de.Kronecker())
	lk, gk := lmlGrads(t, kr)
	ld, gd := lmlGrads(t, de)
	assert.InDelta(t, ld, lk, 1e-10*math.Abs(ld))
	numtest.CloseValues(t, gd, gk, 1e-10, "gradient")
	for _, tasks := range [][]int{nil, {2, 0, 1, 1, 0}} {
		pk, err := kr.Predict(xs, tasks)
		require.NoError(t, err)
		pd, err := de.Predict(xs, tasks)
		require.NoError(t, err)
		numtest.Close(t, pd.Mean.Values(), pk.Mean, 1e-10, "mean")
		numtest.Close(t, pd.Var.Values(), pk.Var, 1e-10, "var")
		numtest.Close(t, pd.NoisyVar.Values(), pk.NoisyVar, 1e-10, "noisy var")
	}
}

// The Hadamard form with every task at every input, in any order, is the
// grid's dense model: same LML and predictions, for the LCM too.
func TestHadamardMatchesGrid(t *testing.T) {
	const n, T = 8, 2
	x, y := gridData(6, n, 2, T)
	perm := tensor.NewRNG(7).Perm(n * T)
	xh := make([]float64, 0, n*T*2)
	yh := make([]float64, 0, n*T)
	tasks := make([]int, 0, n*T)
	for _, p := range perm {
		i, k := p%n, p/n
		xh = append(xh, x.At(i, 0), x.At(i, 1))
		yh = append(yh, y.At(i, k))
		tasks = append(tasks, k)
	}
	ks := func() []kernel.Kernel { return []kernel.Kernel{kernel.NewRBF(0.7), kernel.NewMatern32(2)} }
	grid, err := NewMultitask(x, y, nil, MultitaskOptions{Kernels: ks(), Rank: 1, Mean: ConstantMean, Seed: 8})
	require.NoError(t, err)
	require.False(t, grid.Kronecker(), "the LCM has no Kronecker path")
	had, err := NewMultitask(tensor.FromFloat64s(xh, n*T, 2), tensor.FromFloat64s(yh, n*T), tasks, MultitaskOptions{Kernels: ks(), Tasks: T, Mean: ConstantMean})
	require.NoError(t, err)
	setLike(t, had, grid)
	require.NoError(t, had.Hyperparam("mean").Set(0.3, -0.3))
	require.NoError(t, grid.Hyperparam("mean").Set(0.3, -0.3))
	lg, lh := mtLML(t, grid), mtLML(t, had)
	assert.InDelta(t, lg, lh, 1e-10*math.Abs(lg))
	xs := tensor.NewRNG(9).Uniform(tensor.Float64, -2, 2, 4, 2)
	pg, err := grid.Predict(xs, nil)
	require.NoError(t, err)
	ph, err := had.Predict(xs, nil)
	require.NoError(t, err)
	numtest.Close(t, pg.Mean.Values(), ph.Mean, 1e-10, "mean")
	numtest.Close(t, pg.Var.Values(), ph.Var, 1e-10, "var")
}

// The LCM's LML and predictions in the Hadamard form match NumPy's dense
// computation (testdata/multitask_lcm.py).
func TestLCMAgainstNumPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/multitask_lcm.json")
	require.NoError(t, err)
	var f struct {
		X, Y, Xs, Noise, Mean, Ls, PredMean, PredVar []float64
		Tasks, Ts                                    []int
		W, Kappa                                     [][]float64
		LML                                          float64
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	// encoding/json matches keys case-insensitively but not through "_".
	var g struct {
		PM []float64 `json:"pred_mean"`
		PV []float64 `json:"pred_var"`
	}
	require.NoError(t, json.Unmarshal(raw, &g))
	n := len(f.Y)
	m, err := NewMultitask(tensor.FromFloat64s(f.X, n, 2), tensor.FromFloat64s(f.Y, n), f.Tasks,
		MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(f.Ls[0]), kernel.NewRBF(f.Ls[1])}, Tasks: 3, Rank: 2, Mean: ConstantMean})
	require.NoError(t, err)
	for q, name := range []string{"task", "task_2"} {
		require.NoError(t, m.Hyperparam(name+".W").Set(f.W[q]...))
		require.NoError(t, m.Hyperparam(name+".kappa").Set(f.Kappa[q]...))
	}
	require.NoError(t, m.Hyperparam("noise").Set(f.Noise...))
	require.NoError(t, m.Hyperparam("mean").Set(f.Mean...))
	assert.InDelta(t, f.LML, mtLML(t, m), 1e-9)
	p, err := m.Predict(tensor.FromFloat64s(f.Xs, len(f.Ts), 2), f.Ts)
	require.NoError(t, err)
	numtest.Close(t, g.PM, p.Mean, 1e-9, "mean")
	numtest.Close(t, g.PV, p.Var, 1e-9, "var")
}

// GradCheck of the Kronecker path's LML (through two eigendecompositions)
// with respect to every unconstrained hyperparameter.
func TestKroneckerLMLGradCheck(t *testing.T) {
	x, y := gridData(10, 6, 1, 2)
	m, err := NewMultitask(x, y, nil, MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(0.6)}, Rank: 1, Mean: ConstantMean, Seed: 11})
	require.NoError(t, err)
	gradCheckLML(t, "kronecker lml", m.Hyperparams(), m.LogMarginalLikelihood)
}

// gradCheckLML runs GradCheck (first order) of lml with respect to the raw
// values of ps, bound into the graph it is evaluated in.
func gradCheckLML(t *testing.T, name string, ps []*kernel.Hyperparam, lml func(g *graph.Graph) (*graph.Node, error)) {
	t.Helper()
	var raws []*tensor.Tensor
	for _, p := range ps {
		raws = append(raws, p.Raw().Clone())
	}
	_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
		for i, p := range ps {
			xs[i].Graph().Bind(p.Raw(), xs[i])
		}
		l, err := lml(xs[0].Graph())
		require.NoError(t, err)
		return l
	}, raws, autodiff.GradCheckOptions{Name: name, Order: 1})
	assert.NoError(t, err)
}

// Fitting recovers a known task correlation: two series drawn with
// correlation 0.9 come out strongly positively correlated, and the fit
// (two L-BFGS starts) raises the LML.
func TestFitMultitaskLearnsCorrelation(t *testing.T) {
	const n = 30
	rng := tensor.NewRNG(12)
	x := rng.Uniform(tensor.Float64, 0, 5, n, 1)
	yv := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		f := math.Sin(2 * x.At(i, 0))
		yv[2*i] = f + 0.05*rng.NormFloat64()
		yv[2*i+1] = 0.9*f + 0.05*rng.NormFloat64()
	}
	y := tensor.FromFloat64s(yv, n, 2)
	opts := MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(1)}, Seed: 13, MaxIter: 60, Restarts: 1}
	m0, err := NewMultitask(x, y, nil, opts)
	require.NoError(t, err)
	opts.Kernels = []kernel.Kernel{kernel.NewRBF(1)}
	m, err := FitMultitask(context.Background(), x, y, nil, opts)
	if err != nil {
		numtest.Unconverged(t, err, "gp.FitMultitask", m.TaskCovariance(0).Values())
	}
	assert.Greater(t, m.FitResult().LML, mtLML(t, m0)+10)
	assert.Len(t, m.FitResult().Restarts, 2)
	b := m.TaskCovariance(0).Values()
	corr := b[1] / math.Sqrt(b[0]*b[3])
	assert.Greater(t, corr, 0.95)
	assert.InDelta(t, 0.9, math.Sqrt(b[3]/b[0]), 0.1, "the scale ratio of the two series")
}

// A fit out of iterations returns a usable model with a
// *tensor.NotConvergedError.
func TestFitMultitaskUnconverged(t *testing.T) {
	x, y := gridData(15, 10, 1, 2)
	m, err := FitMultitask(context.Background(), x, y, nil, MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(1)}, MaxIter: 2})
	require.NotNil(t, m)
	p, perr := m.Predict(x, nil)
	require.NoError(t, perr)
	numtest.Unconverged(t, err, "gp.FitMultitask", p.Mean.Values(), p.Var.Values())
}

// Bad inputs are errors that name the fault.
func TestMultitaskBadInputs(t *testing.T) {
	x, y := gridData(14, 5, 2, 2)
	k := []kernel.Kernel{kernel.NewRBF(1)}
	yv := tensor.FromFloat64s([]float64{1, 2, 3, 4, 5}, 5)
	cases := []struct {
		name  string
		x, y  *tensor.Tensor
		tasks []int
		opts  MultitaskOptions
		want  string
	}{
		{"no kernel", x, y, nil, MultitaskOptions{}, "no kernels"},
		{"task out of range", x, yv, []int{0, 1, 2, 0, 1}, MultitaskOptions{Kernels: k, Tasks: 2}, "task index 2 at position 2 is outside [0, 2)"},
		{"negative task", x, yv, []int{0, -1, 1, 0, 1}, MultitaskOptions{Kernels: k, Tasks: 2}, "task index -1"},
		{"tasks missing", x, yv, []int{0, 1, 1, 0, 1}, MultitaskOptions{Kernels: k}, "Tasks is required"},
		{"too few indices", x, yv, []int{0, 1}, MultitaskOptions{Kernels: k, Tasks: 2}, "2 task indices for 5 observations"},
		{"grid width", x, y, nil, MultitaskOptions{Kernels: k, Tasks: 3}, "y has 2 task columns but Tasks is 3"},
		{"grid rows", x, tensor.Zeros(tensor.Float64, 4, 2), nil, MultitaskOptions{Kernels: k}, "(n, T) grid with n = 5"},
		{"ARD width", x, y, nil, MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(1, 1, 1)}}, "lengthscale"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := NewMultitask(c.x, c.y, c.tasks, c.opts)
			if err == nil {
				_, err = m.LogMarginalLikelihood(graph.New())
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	m, err := NewMultitask(x, y, nil, MultitaskOptions{Kernels: k})
	require.NoError(t, err)
	_, err = m.Predict(tensor.Zeros(tensor.Float64, 3, 3), nil)
	assert.ErrorContains(t, err, "test inputs must be an (m, 2) matrix")
	_, err = m.Predict(tensor.Zeros(tensor.Float64, 2, 2), []int{0, 5})
	assert.ErrorContains(t, err, "task index 5 at position 1 is outside [0, 2)")
}
