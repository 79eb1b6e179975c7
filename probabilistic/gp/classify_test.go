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

// apxRBF is σ² exp(−(a−b)²/(2ℓ²)) for 1-D points, written out by hand so
// the tests do not trust the kernel code they build on.
func apxRBF(a, b, variance, ls float64) float64 {
	return variance * math.Exp(-(a-b)*(a-b)/(2*ls*ls))
}

// apxTiny is a tiny 1-D classification problem with overlapping classes.
var (
	apxTinyX = []float64{-2, -1.2, -0.5, 0.1, 0.6, 1.3, 2.1}
	apxTinyT = []int{0, 0, 1, 0, 1, 1, 1}
)

func apxClassifier(t *testing.T, variance, ls float64) *Classifier {
	k := kernel.NewScale(kernel.NewRBF(ls), variance)
	c, err := NewClassifier(tensor.FromFloat64s(append([]float64(nil), apxTinyX...), len(apxTinyX), 1), apxTinyT, ClassifierOptions{Kernel: k})
	require.NoError(t, err)
	return c
}

// At the Laplace mode the gradient of log p(y|f) − ½fᵀK⁻¹f vanishes:
// f̂ = K ∇log p(y|f̂), with ∇log p = t − σ(f̂) and K written out by hand.
func TestLaplaceModeIsFixedPoint(t *testing.T) {
	for _, hp := range []struct{ variance, ls float64 }{{1, 1}, {4, 0.7}, {0.5, 2}} {
		c := apxClassifier(t, hp.variance, hp.ls)
		f, err := c.Mode()
		require.NoError(t, err)
		for i, xi := range apxTinyX {
			kg := 0.0
			for j, xj := range apxTinyX {
				kg += apxRBF(xi, xj, hp.variance, hp.ls) * (float64(apxTinyT[j]) - 1/(1+math.Exp(-f[j])))
			}
			assert.InDelta(t, kg, f[i], 1e-9, "σ²=%g ℓ=%g i=%d", hp.variance, hp.ls, i)
		}
	}
}

// With one point the mode solves f = k(1 − σ(f)) (label 1), found here by
// bisection, and the approximate LML is −½f²/k + log σ(f) − ½ log(1 + kW).
func TestLaplaceOnePointByHand(t *testing.T) {
	const k = 2.5
	lo, hi := 0.0, k
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if mid-k*(1-1/(1+math.Exp(-mid))) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	f := (lo + hi) / 2
	p := 1 / (1 + math.Exp(-f))
	want := -0.5*f*f/k + math.Log(p) - 0.5*math.Log(1+k*p*(1-p))

	c, err := NewClassifier(tensor.FromFloat64s([]float64{0.3}, 1, 1), []int{1}, ClassifierOptions{Kernel: kernel.NewScale(kernel.NewRBF(1), k)})
	require.NoError(t, err)
	mode, err := c.Mode()
	require.NoError(t, err)
	assert.InDelta(t, f, mode[0], 1e-10)
	lml, err := c.LogMarginalLikelihood()
	require.NoError(t, err)
	assert.InDelta(t, want, lml, 1e-10)
}

// The gradient of the approximate LML with respect to the raw
// hyperparameters (implicit correction for the moving mode included)
// equals central differences of the converged LML.
func TestLaplaceLMLGradientMatchesFiniteDifferences(t *testing.T) {
	for _, hp := range []struct{ variance, ls float64 }{{1, 1}, {6, 0.6}, {0.3, 2.5}} {
		c := apxClassifier(t, hp.variance, hp.ls)
		g := graph.New()
		lml, err := c.LogMarginalLikelihoodNode(g)
		require.NoError(t, err)
		direct, err := c.LogMarginalLikelihood()
		require.NoError(t, err)
		assert.InDelta(t, direct, lml.Item(), 1e-10, "graph value = Algorithm 3.1 value")
		var raws []*graph.Node
		for _, p := range c.Hyperparams() {
			raws = append(raws, p.RawNode(g))
		}
		grads := autodiff.Grad(lml, raws...)
		for i, p := range c.Hyperparams() {
			r := p.Raw()
			r0 := r.Item()
			const h = 1e-5
			r.Fill(r0 + h)
			up, err := c.LogMarginalLikelihood()
			require.NoError(t, err)
			r.Fill(r0 - h)
			down, err := c.LogMarginalLikelihood()
			require.NoError(t, err)
			r.Fill(r0)
			fd := (up - down) / (2 * h)
			assert.InDelta(t, fd, grads[i].Item(), 1e-6*math.Max(1, math.Abs(fd)), "%s (σ²=%g ℓ=%g)", p.Name(), hp.variance, hp.ls)
		}
	}
}

// Without the implicit correction the gradient would be wrong: check that
// the correction matters on this problem, so the test above can fail.
func TestLaplaceImplicitCorrectionMatters(t *testing.T) {
	c := apxClassifier(t, 6, 0.6)
	s, err := c.laplace()
	require.NoError(t, err)
	g := graph.New()
	x := g.Const(c.x)
	n := len(c.t)
	lml := LaplaceObjective(c.kernel.K(x, x), g.Const(tensor.FromFloat64s(s.a, n)), g.Const(tensor.FromFloat64s(s.f, n)), c.t)
	full, err := c.LogMarginalLikelihoodNode(g)
	require.NoError(t, err)
	ls := c.Hyperparam("rbf.lengthscale").RawNode(g)
	naive := autodiff.Grad(lml, ls)[0].Item()
	total := autodiff.Grad(full, ls)[0].Item()
	assert.Greater(t, math.Abs(naive-total), 1e-3)
}

// GradCheck of the Laplace objective Ψ(K(x), a, f) with f fixed, with
// respect to the inputs x and a, in both dtypes; and with f free too.
func TestLaplaceObjectiveGradCheck(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, freeF := range []bool{false, true} {
			k := kernel.NewScale(kernel.NewRBF(1.1), 1.7)
			for _, p := range k.Hyperparams() {
				p.SetDType(dt)
			}
			tv := []float64{0, 1, 1, 0, 1}
			x := tensor.FromValues(dt, []float64{-1.5, -0.4, 0.3, 0.9, 1.8}, 5, 1)
			a := tensor.FromValues(dt, []float64{-0.3, 0.2, 0.4, -0.1, 0.25}, 5)
			f := tensor.FromValues(dt, []float64{-0.5, 0.3, 0.8, 0.1, 1.2}, 5)
			inputs := []*tensor.Tensor{x, a}
			if freeF {
				inputs = append(inputs, f)
			}
			fn := func(xs []*graph.Node) *graph.Node {
				fn := xs[0].Graph().Const(f)
				if freeF {
					fn = xs[2]
				}
				return LaplaceObjective(k.K(xs[0], xs[0]), xs[1], fn, tv)
			}
			opt := autodiff.GradCheckOptions{Name: "LaplaceObjective", Order: 1}
			if dt == tensor.Float32 {
				opt.Tol = 3e-2
			}
			_, err := autodiff.GradCheck(fn, inputs, opt)
			assert.NoError(t, err, "%v freeF=%v", dt, freeF)
		}
	}
}

// Far from the data the latent posterior returns to the zero-mean prior:
// mean 0, variance k(x*, x*) = σ², probability ½.
func TestClassifierPredictsHalfFarAway(t *testing.T) {
	c := apxClassifier(t, 2, 1)
	pred, err := c.Predict(tensor.FromFloat64s([]float64{100, -80, 0.6}, 3, 1))
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		assert.InDelta(t, 0.5, pred.Prob[i], 1e-12)
		assert.InDelta(t, 0, pred.Mean[i], 1e-12)
		assert.InDelta(t, 2, pred.Var[i], 1e-12)
	}
	// Near the positive points the probability exceeds ½ but stays below
	// σ(mean), since averaging over the latent shrinks it toward ½.
	assert.Greater(t, pred.Prob[2], 0.5)
	assert.Less(t, pred.Prob[2], 1/(1+math.Exp(-pred.Mean[2])))
	kappa := 1 / math.Sqrt(1+math.Pi*pred.Var[2]/8)
	assert.InDelta(t, 1/(1+math.Exp(-kappa*pred.Mean[2])), pred.Prob[2], 1e-12)
}

// Duplicate inputs make K singular; Algorithm 3.1 never inverts K.
func TestClassifierDuplicateInputs(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 0, 1, 1, 1}, 6, 1)
	c, err := NewClassifier(x, []int{0, 0, 1, 1, 1, 0}, ClassifierOptions{Kernel: kernel.NewScale(kernel.NewRBF(1), 3)})
	require.NoError(t, err)
	lml, err := c.LogMarginalLikelihood()
	require.NoError(t, err)
	assert.False(t, math.IsNaN(lml))
	f, err := c.Mode()
	require.NoError(t, err)
	assert.InDelta(t, f[0], f[2], 1e-12, "equal inputs have equal latents")
}

// Fitting raises the LML and separates two clusters.
func TestClassifierFit(t *testing.T) {
	rng := tensor.NewRNG(3)
	n := 40
	xv := make([]float64, n)
	labels := make([]int, n)
	for i := range xv {
		labels[i] = i % 2
		xv[i] = rng.NormFloat64()*0.7 + 2*float64(labels[i]) - 1
	}
	c, err := NewClassifier(tensor.FromFloat64s(xv, n, 1), labels, ClassifierOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.2), 0.5)})
	require.NoError(t, err)
	before, err := c.LogMarginalLikelihood()
	require.NoError(t, err)
	res, err := c.fit(context.Background(), fitOptions{Restarts: 1, Seed: 1})
	require.NoError(t, err)
	after, err := c.LogMarginalLikelihood()
	require.NoError(t, err)
	assert.Greater(t, after, before)
	assert.InDelta(t, res.LML, after, 1e-9)
	pred, err := c.Predict(tensor.FromFloat64s([]float64{-2, 2}, 2, 1))
	require.NoError(t, err)
	assert.Less(t, pred.Prob[0], 0.2)
	assert.Greater(t, pred.Prob[1], 0.8)
}

func TestClassifierErrors(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1}, 2, 1)
	_, err := NewClassifier(x, []int{0, 2}, ClassifierOptions{Kernel: kernel.NewRBF(1)})
	assert.ErrorContains(t, err, "labels must be 0 or 1")
	_, err = NewClassifier(x, []int{0}, ClassifierOptions{Kernel: kernel.NewRBF(1)})
	assert.ErrorContains(t, err, "2 rows but there are 1 labels")
	c, err := NewClassifier(x, []int{0, 1}, ClassifierOptions{Kernel: kernel.NewRBF(1)})
	require.NoError(t, err)
	func() {
		defer func() {
			e, ok := recover().(*tensor.Error)
			require.True(t, ok)
			assert.Contains(t, e.Error(), "(m, 1) matrix")
		}()
		_, _ = c.Predict(tensor.FromFloat64s([]float64{0, 1}, 1, 2))
	}()
	_, err = c.fit(context.Background(), fitOptions{Optimizer: "adam"})
	assert.ErrorContains(t, err, "not supported")
}

// Bounds on hyperparameters hold during fitting, and a fixed one stays put.
func TestClassifierFitBoundsAndFixed(t *testing.T) {
	c := apxClassifier(t, 1, 0.2)
	c.Hyperparam("scale.variance").SetFixed(true)
	res, err := c.fit(context.Background(), fitOptions{Restarts: 2, Seed: 3, Bounds: map[string][2]float64{"rbf.lengthscale": {0.6, 0.9}}})
	require.NoError(t, err)
	assert.Len(t, res.Restarts, 3)
	ls := c.Hyperparam("rbf.lengthscale").Value()
	// With σ² = 1 the LML of this problem has local maxima near ℓ = 0.1
	// and ℓ = 1.5 and rises over [0.6, 0.9], so the upper bound is active.
	assert.InDelta(t, 0.9, ls, 1e-6)
	assert.InDelta(t, 1, c.Hyperparam("scale.variance").Value(), 1e-12)
	_, err = c.fit(context.Background(), fitOptions{Bounds: map[string][2]float64{"nope": {0, 1}}})
	assert.ErrorContains(t, err, "unknown hyperparameter")
	// A lengthscale must be positive: bounds wholly at or below zero are
	// rejected, as by the exact model's Fit, and leave it untouched.
	before := c.Hyperparam("rbf.lengthscale").Value()
	_, err = c.fit(context.Background(), fitOptions{Bounds: map[string][2]float64{"rbf.lengthscale": {-2, -1}}})
	assert.ErrorContains(t, err, "outside its domain")
	_, err = c.fit(context.Background(), fitOptions{Bounds: map[string][2]float64{"rbf.lengthscale": {math.NaN(), 1}}})
	assert.ErrorContains(t, err, "not an interval")
	assert.Equal(t, before, c.Hyperparam("rbf.lengthscale").Value())
}
