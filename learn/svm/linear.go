package svm

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// Loss is the margin loss of the primal linear SVM.
type Loss int

const (
	// Hinge is max(0, 1 − y·f(x)): the C-SVM.
	Hinge Loss = iota
	// SquaredHinge is max(0, 1 − y·f(x))², smooth, as LIBLINEAR's L2-loss SVM.
	SquaredHinge
)

// hingeLR and hingeDecay set Adam's step for the hinge: LR/√(1 + t/decay).
const hingeLR, hingeDecay = 0.05, 100.0

// LinearSVM is f(x) = w·x + b fitted in the primal.
type LinearSVM struct {
	W        []float64
	B        float64
	Positive int // the label with y = +1 (the larger one)
	Negative int
	// Objective is ½‖w‖² + C·Σᵢ loss(yᵢ f(xᵢ)) at the returned w, b.
	Objective float64
}

// FitLinearSVM trains the linear SVM in the primal by gradient, as
// regularised empirical risk minimisation (Schölkopf and Smola 2002,
// Learning with Kernels, §7.5): ½‖w‖² + C·Σᵢ loss(yᵢ(w·xᵢ + b)) on the
// graph, minimised by L-BFGS for the smooth squared hinge and by Adam with
// a decaying step (averaging the last half of the iterates) for the hinge,
// whose kink L-BFGS cannot cross. Two distinct labels are required; the
// larger is the positive class.
//
// Bad data (NaN or ±Inf, zero rows or columns, not two classes) or options
// (negative C or MaxIter, an unknown Loss) return an error and no model.
// With SquaredHinge, L-BFGS out of MaxIter returns the model so far with a
// *tensor.NotConvergedError; Hinge's MaxIter is the length of its step
// schedule, which it always runs, so it has no convergence to miss.
// ctx is checked at every step; when it is cancelled FitLinearSVM returns
// promptly with the model at the current iterate and the error wrapping
// ctx.Err().
func FitLinearSVM(ctx context.Context, x *tensor.Tensor, labels []int, opts LinearSVMOptions) (*LinearSVM, error) {
	const op = "svm.FitLinearSVM"
	ctx = orBackground(ctx)
	x64, err := checkData(op, x, len(labels))
	if err != nil {
		return nil, err
	}
	c, loss, steps := opts.C, opts.Loss, opts.MaxIter
	if c == 0 {
		c = 1
	}
	if err := checkOptions(op, solverOptions{C: c, Tol: 1}); err != nil {
		return nil, err
	}
	if steps < 0 || (loss != Hinge && loss != SquaredHinge) {
		return nil, fmt.Errorf("%s: MaxIter %d is negative or Loss %d unknown", op, steps, loss)
	}
	classes := unique(labels)
	if len(classes) != 2 {
		return nil, fmt.Errorf("%s: need exactly two classes, got %v", op, classes)
	}
	m := &LinearSVM{Positive: max(classes[0], classes[1]), Negative: min(classes[0], classes[1])}
	n, d := x64.Shape()[0], x64.Shape()[1]
	y := make([]float64, n)
	for i, l := range labels {
		y[i] = -1
		if l == m.Positive {
			y[i] = 1
		}
	}
	yt := tensor.FromFloat64s(y, n, 1)
	w, b := tensor.Zeros(tensor.Float64, d, 1), tensor.Zeros(tensor.Float64)
	g := graph.New()
	objective := func(wn, bn *graph.Node) *graph.Node {
		margin := graph.Mul(g.Const(yt), graph.Add(graph.MatMul(g.Const(x64), wn), bn))
		slack := graph.Relu(graph.Neg(graph.AddScalar(margin, -1))) // max(0, 1 − m)
		if loss == SquaredHinge {
			slack = graph.Square(slack)
		}
		reg := graph.MulScalar(graph.Sum(graph.Square(wn), nil, false), 0.5)
		return graph.Add(reg, graph.MulScalar(graph.Sum(slack, nil, false), c))
	}
	eval := func(p, grad []*tensor.Tensor) (v float64, err error) {
		defer tensor.Recover(&err)
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		g.Reset()
		wn, bn := g.Var(p[0]), g.Var(p[1])
		obj := objective(wn, bn)
		for i, gr := range autodiff.Grad(obj, wn, bn) {
			tensor.CopyInto(grad[i], gr.Value())
		}
		return obj.Item(), nil
	}
	if steps <= 0 {
		steps = 2000
	}
	finish := func() *LinearSVM {
		g.Reset()
		m.Objective = objective(g.Const(w), g.Const(b)).Item()
		m.W, m.B = w.Values(), b.Item()
		return m
	}
	if loss == SquaredHinge {
		const gradTol = 1e-10
		res, err := optim.Minimize(eval, []*tensor.Tensor{w, b}, optim.LBFGSOptions{MaxIter: steps, GradTol: gradTol})
		if cerr := ctx.Err(); cerr != nil {
			return finish(), cancelled(op, res.Iterations, cerr)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if !res.Converged {
			return finish(), notConverged(op, res.Iterations, res.GradNorm, gradTol)
		}
	} else {
		grads := []*tensor.Tensor{tensor.Zeros(tensor.Float64, d, 1), tensor.Zeros(tensor.Float64)}
		adam := optim.NewAdam([]*tensor.Tensor{w, b}, optim.AdamOptions{LR: hingeLR})
		avgW, avgB := make([]float64, d), 0.0
		count := 0
		for t := 1; t <= steps; t++ {
			if _, err := eval([]*tensor.Tensor{w, b}, grads); err != nil {
				if cerr := ctx.Err(); cerr != nil {
					return finish(), cancelled(op, t-1, cerr)
				}
				return nil, fmt.Errorf("%s: %w", op, err)
			}
			adam.SetLR(hingeLR / math.Sqrt(1+float64(t)/hingeDecay))
			if err := adam.Step(grads); err != nil {
				return nil, fmt.Errorf("%s: %w", op, err)
			}
			if t > steps/2 {
				count++
				for i, v := range w.Values() {
					avgW[i] += (v - avgW[i]) / float64(count)
				}
				avgB += (b.Item() - avgB) / float64(count)
			}
		}
		copy(w.Float64s(), avgW)
		b.Fill(avgB)
	}
	return finish(), nil
}

// Decision returns w·x + b for the rows of x (m, d), shaped (m). It panics
// with a *tensor.Error unless x is an (m, d) matrix.
func (m *LinearSVM) Decision(x *tensor.Tensor) *tensor.Tensor {
	if x == nil || x.Dim() != 2 || x.Shape()[1] != len(m.W) {
		tensor.Fail("svm.LinearSVM.Decision", "want an (m, %d) matrix, got %v", len(m.W), x)
	}
	z := tensor.MatMul(x.Cast(tensor.Float64), tensor.FromFloat64s(m.W, len(m.W), 1)).Values()
	for i := range z {
		z[i] += m.B
	}
	return tensor.FromFloat64s(z, len(z))
}

// Predict returns each row's label: Positive where w·x + b > 0, Negative
// elsewhere. It panics as Decision does.
func (m *LinearSVM) Predict(x *tensor.Tensor) []int {
	z := m.Decision(x).Values()
	out := make([]int, len(z))
	for i, v := range z {
		out[i] = m.Negative
		if v > 0 {
			out[i] = m.Positive
		}
	}
	return out
}
