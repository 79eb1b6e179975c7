package gp

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Predict returns the posterior predictive mean and variances at the
// inputs xs (m, d). With tasks nil it predicts every task, and Mean, Var
// and NoisyVar are shaped (m, T); otherwise tasks[i] is the task of row i
// and they are shaped (m). NoisyVar adds the task's noise variance.
//
// It returns an error for inputs of the wrong shape or dtype, a task index
// outside [0, T), or a training covariance that cannot be factored.
func (m *Multitask) Predict(xs *tensor.Tensor, tasks []int) (pred *Prediction, err error) {
	defer tensor.Recover(&err)
	const op = "gp.Multitask.Predict"
	if xs == nil {
		return nil, errors.New(op + ": nil inputs")
	}
	d := m.x.Shape()[1]
	if xs.Dim() != 2 || xs.Shape()[1] != d {
		return nil, fmt.Errorf("%s: test inputs must be an (m, %d) matrix, got shape %v", op, d, xs.Shape())
	}
	if xs.DType() != m.x.DType() {
		return nil, fmt.Errorf("%s: test inputs are %v but the training inputs are %v", op, xs.DType(), m.x.DType())
	}
	ms := xs.Shape()[0]
	rows, ts := xs, tasks
	if tasks == nil {
		// Every task at every input, task-major.
		rows = tensor.Concat(0, repeatTensor(xs, m.t)...)
		ts = make([]int, 0, m.t*ms)
		for k := 0; k < m.t; k++ {
			for i := 0; i < ms; i++ {
				ts = append(ts, k)
			}
		}
	} else {
		if len(tasks) != ms {
			return nil, fmt.Errorf("%s: %d task indices for %d test inputs", op, len(tasks), ms)
		}
		if err := checkTasks(op, tasks, m.t); err != nil {
			return nil, err
		}
	}
	g := graph.New()
	xr := g.Const(rows)
	cross := m.cross(g, xr, ts) // (N, M)
	var solve func(*graph.Node) *graph.Node
	if m.kron {
		f, err := m.kronFactor(g)
		if err != nil {
			return nil, err
		}
		solve = f.solve
	} else {
		l, err := choleskyJitter(m.denseCov(g), nil)
		if err != nil {
			return nil, err
		}
		solve = func(b *graph.Node) *graph.Node { return graph.CholeskySolve(l, b) }
	}
	alpha := solve(m.residual(g))                                            // (N, 1)
	mean := graph.Reshape(graph.MatMulT(cross, alpha, true, false), len(ts)) // (M)
	if m.mean != nil {
		mean = graph.Add(mean, graph.IndexSelect(vecT(m.mean, g, m.t), 0, ts))
	}
	var prior *graph.Node
	for q, kq := range m.kernels {
		bd := graph.IndexSelect(graph.Diagonal(m.taskCov(g, q)), 0, ts)
		term := graph.Mul(bd, kq.Diag(xr))
		if prior == nil {
			prior = term
		} else {
			prior = graph.Add(prior, term)
		}
	}
	variance := graph.Sub(prior, graph.Sum(graph.Mul(cross, solve(cross)), []int{0}, false))
	variance = graph.Clamp(variance, 0, math.Inf(1))
	noisy := graph.Add(variance, graph.IndexSelect(vecT(m.noise, g, m.t), 0, ts))
	out := func(n *graph.Node) *tensor.Tensor {
		if tasks != nil {
			return n.Value().Clone()
		}
		return tensor.Transpose(graph.Reshape(n, m.t, ms).Value()).Contiguous()
	}
	return &Prediction{Mean: out(mean), Var: out(variance), NoisyVar: out(noisy)}, nil
}

// repeatTensor returns k references to t.
func repeatTensor(t *tensor.Tensor, k int) []*tensor.Tensor {
	out := make([]*tensor.Tensor, k)
	for i := range out {
		out[i] = t
	}
	return out
}

// cross returns the covariance between the training observations (rows,
// in m.y's order) and the latent values at the test rows xr with tasks ts,
// shaped (N, M).
func (m *Multitask) cross(g *graph.Graph, xr *graph.Node, ts []int) *graph.Node {
	x := g.Const(m.x)
	var c *graph.Node
	for q, kq := range m.kernels {
		b := graph.IndexSelect(m.taskCov(g, q), 1, ts) // (T, M)
		k := kq.K(x, xr)                               // (n, M)
		var term *graph.Node
		if m.tasks == nil {
			n, mr := k.Shape()[0], k.Shape()[1]
			term = graph.Reshape(graph.Mul(graph.Unsqueeze(b, 1), graph.Unsqueeze(k, 0)), m.t*n, mr)
		} else {
			term = graph.Mul(graph.IndexSelect(b, 0, m.tasks), k)
		}
		if c == nil {
			c = term
		} else {
			c = graph.Add(c, term)
		}
	}
	return c
}
