package kerneltest_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/learn/kerneltest"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

func rbf(d2 float64) float64 { return math.Exp(-d2 / 2) } // lengthscale 1

// By hand on a line: x = {0, 1}, y = {2, 3}, RBF with ℓ = 1.
//
//	Kxx = Kyy = [[1, e^{-1/2}], [e^{-1/2}, 1]];  Kxy = [[e^{-2}, e^{-9/2}], [e^{-1/2}, e^{-2}]]
//	biased   = 2·(2 + 2e^{-1/2})/4 − 2·(2e^{-2} + e^{-9/2} + e^{-1/2})/4
//	unbiased = 2·(2e^{-1/2})/2   − 2·(2e^{-2} + e^{-9/2} + e^{-1/2})/4
func TestMMD2ByHand(t *testing.T) {
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{0, 1}, 2, 1))
	y := g.Const(tensor.FromFloat64s([]float64{2, 3}, 2, 1))
	cross := (2*rbf(4) + rbf(9) + rbf(1)) / 4
	biased := (2+2*rbf(1))/2 - 2*cross
	unbiased := 2*rbf(1) - 2*cross
	k := kernel.NewRBF(1)
	assert.InDelta(t, biased, kerneltest.MMD2(k, x, y, kerneltest.Biased).Item(), 1e-15)
	assert.InDelta(t, unbiased, kerneltest.MMD2(k, x, y, kerneltest.Unbiased).Item(), 1e-15)
}

// The permutation test rejects for samples from different distributions
// and not for samples from the same one; TwoSample's statistic equals MMD2's.
func TestTwoSamplePermutationTest(t *testing.T) {
	rng := tensor.NewRNG(1)
	x := rng.Normal(tensor.Float64, 0, 1, 60, 2)
	same := rng.Normal(tensor.Float64, 0, 1, 50, 2)
	shifted := tensor.AddScalar(rng.Normal(tensor.Float64, 0, 1, 50, 2), 0.8)
	ls := kerneltest.MedianHeuristic(x, shifted)
	k := kernel.NewRBF(ls)
	for _, est := range []kerneltest.Estimator{kerneltest.Biased, kerneltest.Unbiased} {
		opts := kerneltest.TwoSampleOptions{Kernel: k, Estimator: est, Permutations: 200, Seed: 2}
		diff, err := kerneltest.TwoSample(context.Background(), x, shifted, opts)
		require.NoError(t, err)
		assert.LessOrEqual(t, diff.PValue, 1.0/201+1e-12, "a shift of 0.8σ")
		null, err := kerneltest.TwoSample(context.Background(), x, same, opts)
		require.NoError(t, err)
		assert.Greater(t, null.PValue, 0.05, "the same distribution")
		g := graph.New()
		direct := kerneltest.MMD2(k, g.Const(x), g.Const(shifted), est).Item()
		assert.InDelta(t, direct, diff.Statistic, 1e-12)
	}
}

// MMD² is a graph: its gradient with respect to the kernel's lengthscale
// (unconstrained) and the samples passes autodiff's check.
func TestMMD2Gradient(t *testing.T) {
	rng := tensor.NewRNG(5)
	k := kernel.NewRBF(0.9)
	raw := k.Hyperparams()[0].Raw().Clone()
	inputs := []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 5, 2), rng.Normal(tensor.Float64, 0.5, 1, 4, 2), raw}
	_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
		xs[0].Graph().Bind(k.Hyperparams()[0].Raw(), xs[2])
		return kerneltest.MMD2(k, xs[0], xs[1], kerneltest.Unbiased)
	}, inputs, autodiff.GradCheckOptions{Name: "mmd2", Order: 2})
	assert.NoError(t, err)
}

// HSIC against the textbook formulas built from the centring matrix H, and
// the independence test on dependent and independent pairs.
func TestHSIC(t *testing.T) {
	rng := tensor.NewRNG(7)
	n := 40
	x := rng.Normal(tensor.Float64, 0, 1, n, 1)
	noise := rng.Normal(tensor.Float64, 0, 0.3, n, 1)
	dependent := tensor.Add(tensor.Mul(x, x), noise) // y = x² + ε: uncorrelated but dependent
	independent := rng.Normal(tensor.Float64, 0, 1, n, 1)
	kx, ky := kernel.NewRBF(1), kernel.NewRBF(1)

	// tr(KHLH)/n² with explicit matrices.
	g := graph.New()
	km := kx.K(g.Const(x), g.Const(x)).Value()
	lm := ky.K(g.Const(dependent), g.Const(dependent)).Value()
	h := tensor.Sub(tensor.Eye(tensor.Float64, n), tensor.MulScalar(tensor.Ones(tensor.Float64, n, n), 1/float64(n)))
	khlh := tensor.MatMul(tensor.MatMul(tensor.MatMul(km, h), lm), h)
	trace := 0.0
	for i := range n {
		trace += khlh.At(i, i)
	}
	got := kerneltest.HSIC(kx, ky, g.Const(x), g.Const(dependent), kerneltest.Biased).Item()
	assert.InDelta(t, trace/float64(n*n), got, 1e-12)

	// The unbiased estimator by its definition as a U-statistic over
	// distinct quadruples is O(n⁴); check it on 6 points against that sum.
	small := 6
	xs, ys := tensor.Slice(x, 0, 0, small, 1).Contiguous(), tensor.Slice(dependent, 0, 0, small, 1).Contiguous()
	ks := kx.K(g.Const(xs), g.Const(xs)).Value()
	ls := ky.K(g.Const(ys), g.Const(ys)).Value()
	assert.InDelta(t, hsicU(ks, ls, small), kerneltest.HSIC(kx, ky, g.Const(xs), g.Const(ys), kerneltest.Unbiased).Item(), 1e-12)

	opts := kerneltest.IndependenceOptions{KernelX: kx, KernelY: ky, Permutations: 200, Seed: 3}
	dep, err := kerneltest.Independence(context.Background(), x, dependent, opts)
	require.NoError(t, err)
	assert.LessOrEqual(t, dep.PValue, 0.01)
	ind, err := kerneltest.Independence(context.Background(), x, independent, opts)
	require.NoError(t, err)
	assert.Greater(t, ind.PValue, 0.05)
}

// hsicU is Song et al.'s unbiased HSIC as the average over ordered
// quadruples of distinct indices of h = k_ij l_ij + k_ij l_kq − 2 k_ij l_ik.
func hsicU(k, l *tensor.Tensor, n int) float64 {
	s, c := 0.0, 0
	for i := range n {
		for j := range n {
			for a := range n {
				for b := range n {
					if i == j || i == a || i == b || j == a || j == b || a == b {
						continue
					}
					kk := k.At(i, j)
					s += kk*l.At(i, j) + kk*l.At(a, b) - 2*kk*l.At(i, a)
					c++
				}
			}
		}
	}
	return s / float64(c)
}

func TestMedianHeuristicAndErrors(t *testing.T) {
	// Distances between 0, 1, 3: 1, 2, 3, median 2.
	assert.Equal(t, 2.0, kerneltest.MedianHeuristic(tensor.FromFloat64s([]float64{0, 1, 3}, 3, 1)))
	_, err := kerneltest.TwoSample(context.Background(), tensor.FromFloat64s([]float64{1, 2}, 1, 2), tensor.FromFloat64s([]float64{1}, 1, 1), kerneltest.TwoSampleOptions{Kernel: kernel.NewRBF(1)})
	assert.ErrorContains(t, err, "2 and 1 columns")
	_, err = kerneltest.Independence(context.Background(), tensor.FromFloat64s([]float64{1, 2}, 2, 1), tensor.FromFloat64s([]float64{1}, 1, 1), kerneltest.IndependenceOptions{KernelX: kernel.NewRBF(1), KernelY: kernel.NewRBF(1)})
	assert.ErrorContains(t, err, "equal rows")
}

// The linear statistic by hand: x = {0, 1, 5, 7}, y = {2, 3, 4, 4} on a
// line pair up as (0, 1) with (2, 3) and (5, 7) with (4, 4):
//
//	h₁ = k(0,1) + k(2,3) − k(0,3) − k(1,2) = 2e^{-1/2} − e^{-9/2} − e^{-1/2}
//	h₂ = k(5,7) + k(4,4) − k(5,4) − k(7,4) = e^{-2} + 1 − e^{-1/2} − e^{-9/2}
//
// and a block boundary (more than 64 pairs) does not change the sum.
func TestLinearMMD2ByHand(t *testing.T) {
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{0, 1, 5, 7}, 4, 1))
	y := g.Const(tensor.FromFloat64s([]float64{2, 3, 4, 4}, 4, 1))
	h1 := rbf(1) - rbf(9)
	h2 := rbf(4) + 1 - rbf(1) - rbf(9)
	k := kernel.NewRBF(1)
	assert.InDelta(t, (h1+h2)/2, kerneltest.MMD2(k, x, y, kerneltest.Linear).Item(), 1e-15)

	rng := tensor.NewRNG(5)
	xs, ys := rng.Normal(tensor.Float64, 0, 1, 301, 2), rng.Normal(tensor.Float64, 0.3, 1, 301, 2)
	xv, yv := xs.Values(), ys.Values()
	k2 := func(a, b []float64) float64 { return rbf((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1])) }
	row := func(v []float64, i int) []float64 { return v[2*i : 2*i+2] }
	sum := 0.0
	for i := range 150 { // the 301st row is dropped
		a, b := 2*i, 2*i+1
		sum += k2(row(xv, a), row(xv, b)) + k2(row(yv, a), row(yv, b)) - k2(row(xv, a), row(yv, b)) - k2(row(xv, b), row(yv, a))
	}
	g2 := graph.New()
	assert.InDelta(t, sum/150, kerneltest.MMD2(k, g2.Const(xs), g2.Const(ys), kerneltest.Linear).Item(), 1e-13)
	res, err := kerneltest.TwoSample(context.Background(), xs, ys, kerneltest.TwoSampleOptions{Kernel: k, Estimator: kerneltest.Linear})
	require.NoError(t, err)
	assert.InDelta(t, sum/150, res.Statistic, 1e-13)
	assert.Empty(t, res.Null)

	_, err = kerneltest.TwoSample(context.Background(), xs, tensor.Slice(ys, 0, 0, 100, 1), kerneltest.TwoSampleOptions{Kernel: k, Estimator: kerneltest.Linear})
	assert.ErrorContains(t, err, "equal size")
}

// Under the null hypothesis a valid test's p-values are uniform: over 200
// seeds, the fraction below α is within three binomial standard errors of
// α for α = 0.1, 0.3, 0.5, and the largest gap between the empirical CDF
// and the uniform's (Kolmogorov–Smirnov) stays under 0.12 (its 1 % critical
// value for 200 draws is 0.115). Checked for the permutation test (small
// samples, so that 200 tests stay fast) and the linear-time normal test.
// Under a shift both reject at 5 % nearly always.
func TestPValuesUniformUnderNull(t *testing.T) {
	const seeds = 200
	k := kernel.NewRBF(1)
	for _, c := range []struct {
		est  kerneltest.Estimator
		n    int
		name string
	}{
		{kerneltest.Unbiased, 20, "permutation"},
		{kerneltest.Linear, 400, "linear"},
	} {
		var null, alt []float64
		for s := range seeds {
			rng := tensor.NewRNG(uint64(1000 + s))
			x := rng.Normal(tensor.Float64, 0, 1, c.n, 2)
			y := rng.Normal(tensor.Float64, 0, 1, c.n, 2)
			shifted := rng.Normal(tensor.Float64, 1, 1, c.n, 2)
			opts := kerneltest.TwoSampleOptions{Kernel: k, Estimator: c.est, Permutations: 99, Seed: uint64(s)}
			r, err := kerneltest.TwoSample(context.Background(), x, y, opts)
			require.NoError(t, err)
			null = append(null, r.PValue)
			if s < 20 {
				r, err = kerneltest.TwoSample(context.Background(), x, shifted, opts)
				require.NoError(t, err)
				alt = append(alt, r.PValue)
			}
		}
		for _, a := range []float64{0.1, 0.3, 0.5} {
			below := 0
			for _, p := range null {
				if p <= a {
					below++
				}
			}
			se := math.Sqrt(a * (1 - a) / seeds)
			assert.InDelta(t, a, float64(below)/seeds, 3*se, "%s: P(p ≤ %g)", c.name, a)
		}
		slices.Sort(null)
		ks := 0.0
		for i, p := range null {
			ks = max(ks, math.Abs(float64(i+1)/seeds-p), math.Abs(float64(i)/seeds-p))
		}
		assert.Less(t, ks, 0.12, "%s: Kolmogorov–Smirnov distance", c.name)
		rejected := 0
		for _, p := range alt {
			if p < 0.05 {
				rejected++
			}
		}
		assert.GreaterOrEqual(t, rejected, 19, "%s: power against a shift of one σ", c.name)
	}
}

// A cancelled context stops the permutation tests before their first
// permutation; the statistic on the data is still there.
func TestPermutationTestsStopOnCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rng := tensor.NewRNG(4)
	x := rng.Normal(tensor.Float64, 0, 1, 20, 1)
	y := rng.Normal(tensor.Float64, 1, 1, 20, 1)
	res, err := kerneltest.TwoSample(ctx, x, y, kerneltest.TwoSampleOptions{})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "cancelled after 0 of 1000 permutations")
	assert.Greater(t, res.Statistic, 0.0)
	assert.Empty(t, res.Null)
	_, err = kerneltest.Independence(ctx, x, y, kerneltest.IndependenceOptions{})
	require.ErrorIs(t, err, context.Canceled)
	_, err = kerneltest.TwoSample(context.Background(), x, y, kerneltest.TwoSampleOptions{Permutations: -1})
	assert.ErrorContains(t, err, "-1 permutations")
}
