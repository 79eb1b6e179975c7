package optim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// Training w in y ≈ Xw by minimising mean((Xw − y)²) on a graph, with the
// gradient from autodiff and the update from an optimiser, must reach the
// least-squares solution of the normal equations XᵀXw = Xᵀy.
func TestTrainLeastSquares(t *testing.T) {
	const n, d = 40, 3
	opts := []struct {
		name  string
		make  func(w *tensor.Tensor) Optimizer
		sched Schedule
		steps int
	}{
		{"Adam", func(w *tensor.Tensor) Optimizer { return NewAdam([]*tensor.Tensor{w}, AdamOptions{LR: 0.05}) },
			CosineAnnealingLR(0.05, 500, 0), 500},
		{"SGD nesterov", func(w *tensor.Tensor) Optimizer {
			return NewSGD([]*tensor.Tensor{w}, SGDOptions{LR: 0.05, Momentum: 0.9, Nesterov: true})
		}, Constant(0.05), 500},
		{"RMSProp", func(w *tensor.Tensor) Optimizer { return NewRMSProp([]*tensor.Tensor{w}, RMSPropOptions{LR: 0.01}) },
			CosineAnnealingLR(0.02, 500, 0), 500},
	}
	rng := tensor.NewRNG(11)
	x64 := rng.Normal(tensor.Float64, 0, 1, n, d)
	y64 := tensor.Add(tensor.MatMul(x64, tensor.FromFloat64s([]float64{1.5, -2, 0.5}, d)), rng.Normal(tensor.Float64, 0, 0.3, n))
	want, err := tensor.Solve(tensor.MatMulT(x64, x64, true, false), tensor.Reshape(tensor.MatMulT(x64, tensor.Reshape(y64, n, 1), true, false), d, 1))
	require.NoError(t, err)

	for _, o := range opts {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", o.name, dt), func(t *testing.T) {
				x, y := x64.Cast(dt), y64.Cast(dt)
				w := tensor.Zeros(dt, d)
				opt := o.make(w)
				g := graph.New()
				for step := 0; step < o.steps; step++ {
					g.Reset()
					wv := g.Var(w)
					r := graph.Sub(graph.MatMul(g.Const(x), wv), g.Const(y))
					loss := graph.Mean(graph.Square(r), nil, false)
					grad := autodiff.Grad(loss, wv)[0].Value()
					opt.SetLR(o.sched.LR(step))
					require.NoError(t, opt.Step([]*tensor.Tensor{grad}))
				}
				acc := 1e-4
				if dt == tensor.Float32 {
					acc = 1e-3
				}
				require.InDeltaSlice(t, want.Values(), w.Values(), acc)
			})
		}
	}
}
