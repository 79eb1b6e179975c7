package autodiff_test

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// derivatives builds a small model on its own graph from seed and returns
// its value, gradient, a Hessian-vector product and a Jacobian, flattened.
func derivatives(dt tensor.DType, seed uint64) []float64 {
	rng := tensor.NewRNG(seed)
	g := graph.New()
	x := g.Const(rng.Normal(dt, 0, 1, 5, 3))
	w := g.Var(rng.Normal(dt, 0, 0.5, 3, 2))
	b := g.Var(rng.Normal(dt, 0, 0.5, 2))
	h := graph.Tanh(graph.Add(graph.MatMul(x, w), b))
	y := graph.Sum(graph.Mul(h, h), nil, false)
	out := []float64{y.Item()}
	grads := autodiff.Grad(y, w, b)
	for _, gr := range grads {
		out = append(out, gr.Value().Values()...)
	}
	hv := autodiff.HVP(y, []*graph.Node{w, b}, []*graph.Node{g.Const(tensor.Ones(dt, 3, 2)), nil})
	out = append(out, hv[0].Value().Values()...)
	out = append(out, autodiff.Jacobian(h, b).Values()...)
	g.Reset()
	return out
}

func TestSeparateGraphsConcurrently(t *testing.T) {
	const workers = 8
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			want := make([][]float64, workers)
			for i := range want {
				want[i] = derivatives(d.dt, uint64(i))
			}
			got := make([][]float64, workers)
			var wg sync.WaitGroup
			for i := 0; i < workers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Repeat so the goroutines overlap for real.
					for rep := 0; rep < 5; rep++ {
						got[i] = derivatives(d.dt, uint64(i))
					}
				}()
			}
			wg.Wait()
			for i := range want {
				require.Len(t, got[i], len(want[i]))
				for k := range want[i] {
					assert.InDelta(t, want[i][k], got[i][k], 1e-12*math.Max(1, math.Abs(want[i][k])), "worker %d value %d", i, k)
				}
			}
		})
	}
}
