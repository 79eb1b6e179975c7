package bayeslinear

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Two overlapping Gaussian classes in 2-D (centres 2.5 apart, unit
// spread), an RBF basis function on each of 100 training points plus a
// bias: the classifier keeps a handful of relevance vectors (Tipping's
// Ripley example keeps 4 of 250), classifies held-out points nearly as
// well as the Bayes rule does, and its weights are a stationary point of
// the penalised log-likelihood, Φᵀ(y − σ) = Aw.
func TestRVCTwoGaussians(t *testing.T) {
	rng := tensor.NewRNG(2)
	draw := func(n int) ([]float64, []int) {
		var xs []float64
		var ys []int
		for i := range n {
			c := i % 2
			xs = append(xs, 1.25*float64(2*c-1)+rng.NormFloat64(), rng.NormFloat64())
			ys = append(ys, c)
		}
		return xs, ys
	}
	xtr, ytr := draw(100)
	xte, yte := draw(400)
	basis := tensor.FromFloat64s(xtr, 100, 2)
	design := func(q []float64) *tensor.Tensor {
		g := graph.New()
		k := kernel.NewRBF(1).K(g.Const(tensor.FromFloat64s(q, len(q)/2, 2)), g.Const(basis)).Value()
		return tensor.Concat(1, tensor.Ones(tensor.Float64, len(q)/2, 1), k)
	}
	phi := design(xtr)
	// A few precisions creep towards the pruning threshold by about 1 % per
	// re-estimation (the slow tail of the fixed-point updates), so the
	// default 1000 end before Tol is met: the classifier comes back with a
	// NotConvergedError and is usable.
	r, err := FitRVC(ctx, phi, ytr, RVCOptions{})
	require.ErrorIs(t, err, tensor.ErrNotConverged)
	assert.Less(t, len(r.Relevant), 15, "relevance vectors %v", r.Relevant)
	pt := r.PredictProba(design(xte))
	assert.Equal(t, []int{400, 2}, pt.Shape())
	p := tensor.Slice(pt, 1, 1, 2, 1).Contiguous().Float64s()
	pred := r.Predict(design(xte))
	right, bayes := 0, 0
	for i, pr := range p {
		if (pr > 0.5) == (yte[i] == 1) {
			right++
		}
		assert.Equal(t, pred[i] == 1, pr > 0.5)
		if (xte[2*i] > 0) == (yte[i] == 1) { // the Bayes rule for equal spreads
			bayes++
		}
	}
	t.Logf("RVC accuracy %.3f, Bayes rule %.3f, %d relevance vectors", float64(right)/400, float64(bayes)/400, len(r.Relevant))
	assert.Greater(t, float64(right), float64(bayes)-0.04*400)
	// Stationarity at the mode.
	pv := phi.Values()
	ptr := tensor.Slice(r.PredictProba(phi), 1, 1, 2, 1).Contiguous().Float64s()
	for j, c := range r.Relevant {
		g := -r.Alpha[j] * r.Weights[j]
		for i := range 100 {
			g += pv[i*101+c] * (float64(ytr[i]) - ptr[i])
		}
		assert.Less(t, math.Abs(g), 1e-7, "gradient of weight %d", j)
	}
	_, err = FitRVC(ctx, phi, append([]int{2}, ytr[1:]...), RVCOptions{})
	assert.ErrorContains(t, err, "label 0 is 2")
}
