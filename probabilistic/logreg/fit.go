package logreg

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// Link is the model's link between the linear predictor and the class
// probabilities.
type Link int

const (
	Logit   Link = iota // binary logistic regression: p = σ(η)
	Probit              // binary probit regression: p = Φ(η)
	Softmax             // multiclass logistic regression: p = softmax(η)
)

// String names the link.
func (l Link) String() string {
	switch l {
	case Logit:
		return "logit"
	case Probit:
		return "probit"
	case Softmax:
		return "softmax"
	}
	return fmt.Sprintf("Link(%d)", int(l))
}

// Solver names accepted in RegressionOptions.Solver and
// LaplaceOptions.Solver.
const (
	LBFGS  = "lbfgs"
	Newton = "newton"
	IRLS   = "irls"
)

// ErrSeparable is returned (wrapped) by a maximum-likelihood fit (L2 = 0) whose
// iterate separates the training classes: the likelihood then increases
// without bound as the weights grow, so no finite estimate exists.
var ErrSeparable = errors.New("classes are separable: the maximum-likelihood weights are infinite (use L2 > 0)")

// RegressionOptions configures FitRegression. The zero value is L-BFGS
// maximum likelihood of binary logistic regression with an intercept.
type RegressionOptions struct {
	L2          float64 // λ ≥ 0, the weight penalty (λ/2)‖w‖²; 0 (the default) is maximum likelihood
	Solver      string  // LBFGS (the default), Newton or IRLS
	Link        Link    // Logit (the default), Probit or Softmax
	Classes     int     // Softmax only: the number of classes; 0 means max(label)+1
	NoIntercept bool    // fit without the intercept b
	MaxIter     int     // iterations; 0 means 100 (Newton, IRLS) or 1000 (L-BFGS)
	GradTol     float64 // stop when max |∇E| ≤ GradTol; 0 means 1e-8·max(1, n)
	// Init, if not nil, is the starting θ in the layout of
	// Regression.Theta; nil (the default) starts from zero.
	Init []float64

	// interceptPrec is the prior precision of the intercepts (0 in
	// FitRegression, α in FitLaplace).
	interceptPrec float64
}

// Regression is a fitted logistic (or probit, or softmax) regression: the
// maximum-likelihood or MAP point estimate.
type Regression struct {
	Link      Link
	Classes   int         // 2 for Logit and Probit
	Coef      [][]float64 // one row of weights per class for Softmax, a single row otherwise
	Intercept []float64   // one per row of Coef (zeros without an intercept)

	Objective  float64 // E at the returned parameters
	GradNorm   float64 // max |∇E| there
	Iterations int
	Converged  bool
	Reason     string // why the solver stopped

	noIntercept bool
}

// Theta returns the parameters flattened as the solvers see them: for
// each row of Coef, its weights followed by its intercept (omitted without
// an intercept).
func (m *Regression) Theta() []float64 {
	var th []float64
	for r, w := range m.Coef {
		th = append(th, w...)
		if !m.noIntercept {
			th = append(th, m.Intercept[r])
		}
	}
	return th
}

// FitRegression fits the model to x (n, d), a float64 (or float32,
// converted) tensor, and integer labels: 0 or 1 for Logit and Probit,
// 0 … K−1 for Softmax. It returns an error naming the fit for bad input
// (non-finite features, no rows or no columns, a length mismatch, labels
// out of range or all of one class, an unknown solver or link, L2 < 0),
// ErrSeparable (wrapped, with the last iterate, together with a
// *tensor.NotConvergedError: no maximum exists) for a maximum-likelihood
// fit of separable classes, and a *tensor.NotConvergedError with the last
// iterate when the solver runs out of iterations. When ctx is cancelled it
// stops within an iteration and returns the last iterate with ctx.Err()
// wrapped.
func FitRegression(ctx context.Context, x *tensor.Tensor, labels []int, opts RegressionOptions) (m *Regression, err error) {
	const op = "logreg.FitRegression"
	defer tensor.Recover(&err)
	p, err := setup(op, x, labels, opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return p.fit(ctx, op, opts)
}

// setup validates opts and the data and returns the problem.
func setup(op string, x *tensor.Tensor, y []int, opts RegressionOptions) (*problem, error) {
	if opts.L2 < 0 || math.IsNaN(opts.L2) || math.IsInf(opts.L2, 0) {
		return nil, fmt.Errorf("%s: L2 = %v must be finite and ≥ 0", op, opts.L2)
	}
	switch opts.Solver {
	case "", LBFGS, Newton, IRLS:
	default:
		return nil, fmt.Errorf("%s: unknown solver %q (want %q, %q or %q)", op, opts.Solver, LBFGS, Newton, IRLS)
	}
	if opts.Link < Logit || opts.Link > Softmax {
		return nil, fmt.Errorf("%s: unknown link %v", op, opts.Link)
	}
	classes := opts.Classes
	if opts.Link == Softmax && classes == 0 {
		for _, v := range y {
			classes = max(classes, v+1)
		}
		classes = max(classes, 2)
	}
	p, err := newProblem(op, x, y, opts.Link, classes, !opts.NoIntercept)
	if err != nil {
		return nil, err
	}
	p.setPrecision(opts.L2, opts.interceptPrec)
	if opts.Init != nil && len(opts.Init) != p.size() {
		return nil, fmt.Errorf("%s: Init has %d values, the model has %d parameters", op, len(opts.Init), p.size())
	}
	return p, nil
}

// fit runs the configured solver from opts.Init (or zero).
func (p *problem) fit(ctx context.Context, op string, opts RegressionOptions) (*Regression, error) {
	theta := make([]float64, p.size())
	copy(theta, opts.Init)
	tol := opts.GradTol
	if tol == 0 {
		tol = 1e-8 * math.Max(1, float64(p.n))
	}
	var (
		st  solverState
		err error
	)
	switch opts.Solver {
	case Newton, IRLS:
		iters := opts.MaxIter
		if iters == 0 {
			iters = 100
		}
		st, err = p.newton(ctx, theta, iters, tol, opts.Solver == IRLS, nil)
	default:
		iters := opts.MaxIter
		if iters == 0 {
			iters = 1000
		}
		st, err = p.lbfgs(ctx, theta, iters, tol)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	m := p.model(theta, st)
	if err := ctx.Err(); err != nil {
		return m, fmt.Errorf("%s: stopped after %d iterations: %w", op, st.iters, err)
	}
	if opts.L2 == 0 && p.separated(theta) {
		// No maximum exists: the weights grow without bound, so this is a
		// fit that cannot converge, and says both.
		return m, fmt.Errorf("%s: %s after %d iterations (%s): %w: %w", op, p.link, st.iters, st.reason, ErrSeparable,
			&tensor.NotConvergedError{Op: op, Iterations: st.iters, Change: st.gradNorm, Tol: tol})
	}
	if !st.converged {
		return m, &tensor.NotConvergedError{Op: op + " (" + solverName(opts.Solver) + ": " + st.reason + ")",
			Iterations: st.iters, Change: st.gradNorm, Tol: tol}
	}
	return m, nil
}

func solverName(s string) string {
	if s == "" {
		return LBFGS
	}
	return s
}

// solverState reports how a solver ended.
type solverState struct {
	f, gradNorm float64
	iters       int
	converged   bool
	reason      string
}

// newton runs Newton's method (or IRLS, the same update in weighted
// least-squares form) on θ in place, halving steps that do not decrease E.
// trace, if set, is called with each iterate, starting with the initial one.
func (p *problem) newton(ctx context.Context, theta []float64, maxIter int, tol float64, irls bool, trace func([]float64)) (solverState, error) {
	np := p.size()
	pinv := p.rankDeficient()
	var st solverState
	for {
		if ctx.Err() != nil {
			st.reason = "cancelled"
			return st, nil
		}
		if trace != nil {
			trace(append([]float64(nil), theta...))
		}
		var (
			f     float64
			grad  []float64
			step  []float64
			err   error
			solve []float64
		)
		if irls {
			var a, r []float64
			f, grad, a, r = p.irlsSystem(theta)
			solve, err = solveSym(a, r, np, pinv)
			if err == nil {
				step = make([]float64, np)
				for i := range step {
					step[i] = theta[i] - solve[i]
				}
			}
		} else {
			var h []float64
			f, grad, h = p.hessian(theta)
			step, err = solveSym(h, grad, np, pinv)
		}
		st.f, st.gradNorm = f, maxAbs(grad)
		if !isFinite(f) || !isFinite(st.gradNorm) {
			return st, fmt.Errorf("objective or gradient is not finite at iteration %d", st.iters)
		}
		if st.gradNorm <= tol {
			st.converged, st.reason = true, "gradient below tolerance"
			return st, nil
		}
		if st.iters >= maxIter {
			st.reason = "maximum iterations reached"
			return st, nil
		}
		if err != nil {
			return st, err
		}
		accepted := false
		trial := make([]float64, np)
		for t := 1.0; t > 1e-12; t /= 2 {
			for i := range trial {
				trial[i] = theta[i] - t*step[i]
			}
			if ft := p.value(trial); ft <= f+1e-12*math.Abs(f) {
				accepted = true
				break
			}
		}
		if !accepted {
			st.reason = "no step along the Newton direction decreases the objective"
			return st, nil
		}
		copy(theta, trial)
		st.iters++
	}
}

// lbfgs minimises E with optim.Minimize and autodiff gradients; th wraps
// theta, so the result lands in theta. Once ctx is cancelled the objective refuses to
// evaluate, so the line search fails at once and Minimize returns its
// last good point.
func (p *problem) lbfgs(ctx context.Context, theta []float64, maxIter int, tol float64) (solverState, error) {
	th := tensor.FromFloat64s(theta)
	obj := func(x, grad []*tensor.Tensor) (float64, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return p.valueGrad(x[0].Float64s(), grad[0].Float64s()), nil
	}
	res, err := optim.Minimize(obj, []*tensor.Tensor{th}, optim.LBFGSOptions{MaxIter: maxIter, GradTol: tol, FuncTol: -1})
	if ctx.Err() != nil {
		return solverState{f: res.F, gradNorm: res.GradNorm, iters: res.Iterations, reason: "cancelled"}, nil
	}
	if err != nil {
		return solverState{}, fmt.Errorf("lbfgs: %w", err)
	}
	// L-BFGS can stall a little above a tight tolerance when no step changes
	// x in float64 any more: that is the attainable optimum, so stopping
	// early within 1000·tol counts as converged.
	stalled := res.Iterations < maxIter && res.GradNorm <= 1e3*tol
	st := solverState{f: res.F, gradNorm: res.GradNorm, iters: res.Iterations, converged: res.GradNorm <= tol || stalled, reason: res.Reason}
	return st, nil
}

// model packages θ as a Regression.
func (p *problem) model(theta []float64, st solverState) *Regression {
	m := &Regression{Link: p.link, Classes: 2, Objective: st.f, GradNorm: st.gradNorm, Iterations: st.iters,
		Converged: st.converged, Reason: st.reason, noIntercept: !p.intercept}
	if p.link == Softmax {
		m.Classes = p.rows
	}
	for r := range p.rows {
		row := theta[r*p.cols : (r+1)*p.cols]
		m.Coef = append(m.Coef, append([]float64(nil), row[:p.d]...))
		b := 0.0
		if p.intercept {
			b = row[p.d]
		}
		m.Intercept = append(m.Intercept, b)
	}
	return m
}

// Eta returns the linear predictor, an (n, rows of Coef) float64 tensor,
// for x (n, d) of either dtype. It panics with a *tensor.Error if x is not (n, d) with
// the model's d features.
func (m *Regression) Eta(x *tensor.Tensor) *tensor.Tensor {
	d := len(m.Coef[0])
	v, n := validate.Query("logreg.Regression.Eta", x, d)
	k := len(m.Coef)
	out := make([]float64, n*k)
	for i := range n {
		for r, w := range m.Coef {
			s := m.Intercept[r]
			for j := range d {
				s += w[j] * v[i*d+j]
			}
			out[i*k+r] = s
		}
	}
	return tensor.FromFloat64s(out, n, k)
}

// PredictProba returns the class probabilities, an (n, Classes) float64
// tensor, for x (n, d): for the binary links, column 1 is P(y = 1) and
// column 0 its complement. It panics with a *tensor.Error if x does not
// have the model's features.
func (m *Regression) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	eta := m.Eta(x)
	n, k := eta.Shape()[0], eta.Shape()[1]
	e := eta.Float64s()
	out := make([]float64, n*m.Classes)
	for i := range n {
		probs(m.Link, e[i*k:(i+1)*k], out[i*m.Classes:(i+1)*m.Classes])
	}
	return tensor.FromFloat64s(out, n, m.Classes)
}

// Predict returns the most probable class of each row of x. It panics as
// PredictProba does.
func (m *Regression) Predict(x *tensor.Tensor) []int { return tensor.ArgMax(m.PredictProba(x), 1) }

// probs writes one sample's class probabilities for the linear predictor
// eta into dst.
func probs(link Link, eta, dst []float64) {
	switch link {
	case Logit:
		dst[0], dst[1] = sigmoid(-eta[0]), sigmoid(eta[0])
		return
	case Probit:
		dst[0], dst[1] = math.Exp(logNdtr(-eta[0])), math.Exp(logNdtr(eta[0]))
		return
	}
	mx := math.Inf(-1)
	for _, v := range eta {
		mx = math.Max(mx, v)
	}
	var s float64
	for k, v := range eta {
		dst[k] = math.Exp(v - mx)
		s += dst[k]
	}
	for k := range dst {
		dst[k] /= s
	}
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
