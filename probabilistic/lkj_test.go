package probabilistic

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Log densities against PyTorch's LKJCholesky (testdata/make_lkj.py),
// including d = 2, η = 1, uniform correlation: log ½.
func TestLKJCholeskyAgainstPyTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/lkj.json")
	require.NoError(t, err)
	var rows []struct {
		D       int
		Eta     float64
		L       []float64
		LogProb float64 `json:"log_prob"`
	}
	require.NoError(t, json.Unmarshal(raw, &rows))
	require.Len(t, rows, 3)
	g := graph.New()
	for _, r := range rows {
		d := NewLKJCholesky(r.D, g.Scalar(tensor.Float64, r.Eta))
		assert.InDelta(t, r.LogProb, d.LogProb(g.Const(tensor.FromFloat64s(r.L, r.D, r.D))).Item(), 1e-12, "d = %d, η = %g", r.D, r.Eta)
	}
	assert.InDelta(t, math.Log(0.5), rows[0].LogProb, 1e-15)
	assert.Panics(t, func() { NewLKJCholesky(1, g.Scalar(tensor.Float64, 1)) })
}

// Samples are Cholesky factors of correlation matrices (unit rows,
// positive diagonal), each correlation has mean 0 and variance
// 1/(2η + d − 1) within 5 standard errors; the log density's gradient in
// η passes GradCheck.
func TestLKJCholeskySample(t *testing.T) {
	g := graph.New()
	const d, eta, n = 4, 2.5, 20000
	s := NewLKJCholesky(d, g.Scalar(tensor.Float64, eta)).Sample(tensor.NewRNG(6), n).Values()
	var m, m2 [d][d]float64
	for k := range n {
		l := s[k*d*d : (k+1)*d*d]
		for i := range d {
			norm := 0.0
			for j := range d {
				norm += l[i*d+j] * l[i*d+j]
			}
			require.InDelta(t, 1, norm, 1e-12)
			require.Greater(t, l[i*d+i], 0.0)
		}
		for i := range d {
			for j := range i {
				c := 0.0 // C_ij = Σₖ L_ik L_jk
				for q := range d {
					c += l[i*d+q] * l[j*d+q]
				}
				m[i][j] += c / n
				m2[i][j] += c * c / n
			}
		}
	}
	want := 1 / (2*eta + d - 1)
	for i := range d {
		for j := range i {
			assert.InDelta(t, 0, m[i][j], 5*math.Sqrt(want/n), "mean C[%d][%d]", i, j)
			assert.InDelta(t, want, m2[i][j], 5*math.Sqrt(2*want*want/n), "var C[%d][%d]", i, j)
		}
	}
	l := tensor.FromFloat64s([]float64{1, 0, 0, 0.6, 0.8, 0, -0.3, 0.4, math.Sqrt(0.75)}, 3, 3)
	_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
		return NewLKJCholesky(3, graph.Exp(xs[0])).LogProb(xs[0].Graph().Const(l))
	}, []*tensor.Tensor{tensor.Scalar(tensor.Float64, 0.3)}, autodiff.GradCheckOptions{Name: "lkj", Order: 2})
	require.NoError(t, err)
}
