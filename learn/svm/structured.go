package svm

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// StructuredModel is the user's side of a structured output SVM over
// inputs X and outputs Y: a joint feature map ψ(x, y) ∈ ℝ^Dim, a loss
// Δ(y, ŷ) and the two argmaxes over outputs that the cutting-plane method
// needs. Chain (sequence labelling) implements it.
type StructuredModel[X, Y any] interface {
	// Dim returns the length of ψ(x, y).
	Dim() int
	// Features returns ψ(x, y), Dim values (the caller does not keep it).
	Features(x X, y Y) []float64
	// Loss returns Δ(y, ŷ) ≥ 0, zero when ŷ = y.
	Loss(y, yhat Y) float64
	// LossAugmented returns argmax_ŷ Δ(y, ŷ) + wᵀψ(x, ŷ), the most
	// violated output ("margin rescaling").
	LossAugmented(w []float64, x X, y Y) Y
	// Predict returns argmax_y wᵀψ(x, y).
	Predict(w []float64, x X) Y
	// Check returns an error if the example does not fit the model
	// (lengths, label ranges, non-finite values).
	Check(x X, y Y) error
}

// StructuredOptions configures FitStructured. The zero value, with a
// Model, means the defaults stated on each field.
type StructuredOptions[X, Y any] struct {
	// Model is the joint feature map, loss and argmaxes; it is required.
	Model StructuredModel[X, Y]
	// C weighs the slack against ½‖w‖²; zero means 1. The 1-slack slack
	// ξ bounds the average loss-augmented margin violation, so C here is
	// n times the C of the n-slack form (½‖w‖² + C/n·Σξᵢ … + C·Σξᵢ in
	// Crammer and Singer's).
	C float64
	// Eps is the tolerance ε: the fit stops when the most violated
	// constraint exceeds the working set's slack by at most ε (in units
	// of the average loss); zero means 1e-3.
	Eps float64
	// MaxIter bounds the cutting-plane iterations; zero means 1000.
	MaxIter int
}

// Structured is a fitted structured output SVM: the weights w of the
// score wᵀψ(x, y), and what the fit reached.
type Structured[X, Y any] struct {
	Model StructuredModel[X, Y]
	W     []float64
	// Primal is ½‖w‖² + C·ξ(w) with ξ(w) the exact 1-slack violation
	// (from the loss-augmented argmaxes); Dual is the working-set QP's
	// dual value; Gap = Primal − Dual ≥ 0 is at most C·ε at convergence.
	Primal, Dual, Gap float64
	Iterations        int // cutting-plane iterations
	Constraints       int // constraints in the final working set
	Converged         bool
}

// FitStructured trains a structured output SVM with margin rescaling
// (Tsochantaridis, Joachims, Hofmann and Altun 2005, "Large Margin
// Methods for Structured and Interdependent Output Variables") by the
// 1-slack cutting-plane method of Joachims, Finley and Yu (2009),
// "Cutting-Plane Training of Structural SVMs":
//
//	min ½‖w‖² + C ξ  s.t.  (1/n) Σᵢ [Δ(yᵢ, ȳᵢ) − wᵀ(ψ(xᵢ, yᵢ) − ψ(xᵢ, ȳᵢ))] ≤ ξ  for all (ȳ₁ … ȳₙ).
//
// Each iteration solves the dual QP over the working set of constraints
// (by pairwise coordinate ascent, warm-started), calls LossAugmented once
// per example to find the most violated constraint, and stops when it is
// violated by at most ξ + ε; the number of iterations is O(1/ε)
// whatever n is.
//
// A nil Model or x and y of different lengths panic with a *tensor.Error.
// Examples the model rejects (Check), non-finite features, no examples,
// or a negative or non-finite C, Eps or MaxIter return an error and no
// model. If MaxIter runs out it returns the model with a
// *tensor.NotConvergedError (its Change is the last excess violation of
// the most violated constraint over ξ); if ctx is cancelled (checked every
// iteration) it returns promptly with the current model and the error
// wrapping ctx.Err().
func FitStructured[X, Y any](ctx context.Context, x []X, y []Y, opts StructuredOptions[X, Y]) (*Structured[X, Y], error) {
	const op = "svm.FitStructured"
	ctx = orBackground(ctx)
	mod := opts.Model
	if mod == nil {
		tensor.Fail(op, "nil Model")
	}
	if len(x) != len(y) {
		tensor.Fail(op, "%d inputs but %d outputs", len(x), len(y))
	}
	n := len(x)
	if n == 0 {
		return nil, fmt.Errorf("%s: no examples", op)
	}
	c, eps, maxIter := opts.C, opts.Eps, opts.MaxIter
	if c == 0 {
		c = 1
	}
	if eps == 0 {
		eps = 1e-3
	}
	if maxIter == 0 {
		maxIter = 1000
	}
	if !(c > 0) || math.IsInf(c, 0) || !(eps > 0) || math.IsInf(eps, 0) || maxIter < 0 {
		return nil, fmt.Errorf("%s: C %g and Eps %g must be positive and finite, MaxIter %d not negative", op, c, eps, maxIter)
	}
	dim := mod.Dim()
	if dim < 1 {
		tensor.Fail(op, "the model's Dim is %d", dim)
	}
	truth := make([][]float64, n) // ψ(xᵢ, yᵢ)
	for i := range x {
		if err := mod.Check(x[i], y[i]); err != nil {
			return nil, fmt.Errorf("%s: example %d: %w", op, i, err)
		}
		f, err := features(op, mod, x[i], y[i])
		if err != nil {
			return nil, fmt.Errorf("%s: example %d: %w", op, i, err)
		}
		truth[i] = f
	}
	ws := &workingSet{c: c, w: make([]float64, dim)}
	ws.add(make([]float64, dim), 0) // the dummy constraint: Σα = C with α₀ ≥ 0 is Σα ≤ C
	ws.alpha[0] = c
	m := &Structured[X, Y]{Model: mod, W: ws.w}
	excess := math.Inf(1)
	for it := 1; it <= maxIter; it++ {
		if err := ctx.Err(); err != nil {
			return m, fmt.Errorf("%s: cancelled after %d iterations: %w", op, it-1, err)
		}
		m.Iterations = it
		g, b := make([]float64, dim), 0.0
		for i := range x {
			yb := mod.LossAugmented(ws.w, x[i], y[i])
			f, err := features(op, mod, x[i], yb)
			if err != nil {
				return nil, fmt.Errorf("%s: example %d, loss-augmented output: %w", op, i, err)
			}
			for j := range g {
				g[j] += (truth[i][j] - f[j]) / float64(n)
			}
			b += mod.Loss(y[i], yb) / float64(n)
		}
		viol := b - dot(ws.w, g)
		xi := ws.slack()
		excess = viol - xi
		m.Primal = 0.5*dot(ws.w, ws.w) + c*math.Max(viol, 0)
		m.Dual = ws.dual()
		m.Gap = m.Primal - m.Dual
		if viol <= xi+eps {
			m.Converged = true
			break
		}
		ws.add(g, b)
		ws.solve(1e-10, 100000)
	}
	m.Constraints = len(ws.b) - 1
	if !m.Converged {
		return m, &tensor.NotConvergedError{Op: op, Iterations: maxIter, Change: excess, Tol: eps}
	}
	return m, nil
}

// features returns ψ(x, y), checking its length and values.
func features[X, Y any](op string, mod StructuredModel[X, Y], x X, y Y) ([]float64, error) {
	f := mod.Features(x, y)
	if len(f) != mod.Dim() {
		tensor.Fail(op, "the model's Features returned %d values, its Dim is %d", len(f), mod.Dim())
	}
	for j, v := range f {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("feature %d is %g", j, v)
		}
	}
	return f, nil
}

// Predict returns argmax_y wᵀψ(x, y) by the model's Predict.
func (m *Structured[X, Y]) Predict(x X) Y { return m.Model.Predict(m.W, x) }

// workingSet is the dual of the 1-slack QP over the constraints found,
//
//	max_α Σⱼ αⱼbⱼ − ½‖Σⱼ αⱼgⱼ‖²  s.t. α ≥ 0, Σⱼ αⱼ = C,
//
// with constraint 0 the dummy (g = 0, b = 0) that turns Σα ≤ C into an
// equality; w = Σⱼ αⱼgⱼ.
type workingSet struct {
	c     float64
	g     [][]float64 // constraint vectors
	b     []float64   // constraint offsets
	h     [][]float64 // Gram matrix gⱼᵀgₖ
	alpha []float64
	w     []float64
}

// add appends the constraint (g, b) with α = 0.
func (s *workingSet) add(g []float64, b float64) {
	row := make([]float64, len(s.g)+1)
	for j, gj := range s.g {
		row[j] = dot(gj, g)
		s.h[j] = append(s.h[j], row[j])
	}
	row[len(s.g)] = dot(g, g)
	s.g, s.b, s.h, s.alpha = append(s.g, g), append(s.b, b), append(s.h, row), append(s.alpha, 0)
}

// grad returns the dual's gradient bⱼ − wᵀgⱼ.
func (s *workingSet) grad() []float64 {
	out := make([]float64, len(s.b))
	for j := range out {
		out[j] = s.b[j] - dot(s.w, s.g[j])
	}
	return out
}

// slack returns ξ = maxⱼ (bⱼ − wᵀgⱼ), at least 0 by the dummy.
func (s *workingSet) slack() float64 {
	xi := 0.0
	for _, v := range s.grad() {
		xi = math.Max(xi, v)
	}
	return xi
}

// dual returns Σⱼ αⱼbⱼ − ½‖w‖².
func (s *workingSet) dual() float64 { return dot(s.alpha, s.b) - 0.5*dot(s.w, s.w) }

// solve maximises the dual by pairwise steps (as SMO): mass moves from the
// constraint of least gradient with α > 0 to the one of greatest gradient,
// by the exact line maximum clipped to what is there, until the gradients
// of the support agree within tol (or steps run out).
func (s *workingSet) solve(tol float64, steps int) {
	gr := s.grad()
	for range steps {
		up, down := 0, -1
		for j, v := range gr {
			if v > gr[up] {
				up = j
			}
			if s.alpha[j] > 0 && (down < 0 || v < gr[down]) {
				down = j
			}
		}
		if down < 0 || gr[up]-gr[down] <= tol*(1+math.Abs(gr[up])) {
			return
		}
		eta := s.h[up][up] + s.h[down][down] - 2*s.h[up][down]
		t := s.alpha[down]
		if eta > 0 {
			t = math.Min(t, (gr[up]-gr[down])/eta)
		}
		s.alpha[up] += t
		s.alpha[down] -= t
		for k := range s.w {
			s.w[k] += t * (s.g[up][k] - s.g[down][k])
		}
		for j := range gr {
			gr[j] -= t * (s.h[j][up] - s.h[j][down])
		}
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
