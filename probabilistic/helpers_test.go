package probabilistic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// c returns a constant node of dtype dt with the given values and shape
// (a 0-d scalar when no shape is given and there is one value).
func c(g *graph.Graph, dt tensor.DType, vals []float64, shape ...int) *graph.Node {
	if shape == nil && len(vals) == 1 {
		shape = []int{} // 0-d
	}
	return g.Const(tensor.FromValues(dt, vals, shape...))
}

// v is c for a variable.
func v(g *graph.Graph, dt tensor.DType, vals []float64, shape ...int) *graph.Node {
	if shape == nil && len(vals) == 1 {
		shape = []int{} // 0-d
	}
	return g.Var(tensor.FromValues(dt, vals, shape...))
}

func s(x float64) []float64 { return []float64{x} }

// requireValues compares a node's values with want elementwise; infinities
// must match exactly.
func requireValues(t *testing.T, want []float64, got *graph.Node, tol float64, msg ...any) {
	t.Helper()
	gv := got.Value().Values()
	require.Len(t, gv, len(want), msg...)
	for i := range want {
		if math.IsInf(want[i], 0) {
			require.Equal(t, want[i], gv[i], msg...)
			continue
		}
		require.InDelta(t, want[i], gv[i], tol*math.Max(1, math.Abs(want[i])), msg...)
	}
}

// requirePanicsWith checks that f panics with a *tensor.Error whose message
// contains every fragment.
func requirePanicsWith(t *testing.T, f func(), fragments ...string) {
	t.Helper()
	var err error
	func() {
		defer tensor.Recover(&err)
		f()
	}()
	require.Error(t, err, "want a *tensor.Error panic")
	for _, fr := range fragments {
		require.Contains(t, err.Error(), fr)
	}
}

// meanSE returns the mean of xs and its standard error.
func meanSE(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}
