package logreg

import (
	"errors"
	"fmt"
	"math"

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

// Solver names accepted in Config.Solver.
const (
	LBFGS  = "lbfgs"
	Newton = "newton"
	IRLS   = "irls"
)

// ErrSeparable is returned (wrapped) by a maximum-likelihood fit (L2 = 0) whose
// iterate separates the training classes: the likelihood then increases
// without bound as the weights grow, so no finite estimate exists.
var ErrSeparable = errors.New("classes are separable: the maximum-likelihood weights are infinite (use L2 > 0)")

// ErrNotConverged is returned (wrapped) when a solver stops before meeting
// its tolerance; the model returned with it holds the last iterate.
var ErrNotConverged = errors.New("solver did not converge")

// Config configures Fit. The zero value is L-BFGS maximum likelihood of
// binary logistic regression with an intercept.
type Config struct {
	L2          float64 // λ ≥ 0, the weight penalty (λ/2)‖w‖²; 0 is maximum likelihood
	Solver      string  // LBFGS (default), Newton or IRLS
	Link        Link    // Logit (default), Probit or Softmax
	Classes     int     // Softmax only: the number of classes; 0 means max(y)+1
	NoIntercept bool    // fit without the intercept b
	MaxIter     int     // iterations; 0 means 100 (Newton, IRLS) or 1000 (L-BFGS)
	GradTol     float64 // stop when max |∇E| ≤ GradTol; 0 means 1e-8·max(1, n)
	// Init, if not nil, is the starting θ in the layout of Model.Theta;
	// nil starts from zero.
	Init []float64

	// interceptPrec is the prior precision of the intercepts (0 in Fit,
	// α in FitLaplace).
	interceptPrec float64
}

// Model is a fitted regression.
type Model struct {
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
func (m *Model) Theta() []float64 {
	var th []float64
	for r, w := range m.Coef {
		th = append(th, w...)
		if !m.noIntercept {
			th = append(th, m.Intercept[r])
		}
	}
	return th
}

// Fit fits the model to x (n, d), a float64 (or float32, converted) tensor,
// and integer labels y: 0 or 1 for Logit and Probit, 0..K−1 for Softmax.
// It returns an error for bad input (labels out of range, a length
// mismatch, non-finite features, an unknown solver), ErrSeparable for a
// maximum-likelihood fit of separable classes, and ErrNotConverged (with
// the last iterate's model) when the solver runs out of iterations.
func Fit(x *tensor.Tensor, y []int, cfg Config) (m *Model, err error) {
	defer tensor.Recover(&err)
	p, err := setup(x, y, cfg)
	if err != nil {
		return nil, err
	}
	return p.fit(cfg)
}

// setup validates cfg and the data and returns the problem.
func setup(x *tensor.Tensor, y []int, cfg Config) (*problem, error) {
	if cfg.L2 < 0 || math.IsNaN(cfg.L2) || math.IsInf(cfg.L2, 0) {
		return nil, fmt.Errorf("logreg: L2 = %v must be finite and ≥ 0", cfg.L2)
	}
	switch cfg.Solver {
	case "", LBFGS, Newton, IRLS:
	default:
		return nil, fmt.Errorf("logreg: unknown solver %q (want %q, %q or %q)", cfg.Solver, LBFGS, Newton, IRLS)
	}
	if cfg.Link < Logit || cfg.Link > Softmax {
		return nil, fmt.Errorf("logreg: unknown link %v", cfg.Link)
	}
	classes := cfg.Classes
	if cfg.Link == Softmax && classes == 0 {
		for _, v := range y {
			classes = max(classes, v+1)
		}
		classes = max(classes, 2)
	}
	p, err := newProblem(x, y, cfg.Link, classes, !cfg.NoIntercept)
	if err != nil {
		return nil, err
	}
	p.setPrecision(cfg.L2, cfg.interceptPrec)
	if cfg.Init != nil && len(cfg.Init) != p.size() {
		return nil, fmt.Errorf("logreg: Init has %d values, the model has %d parameters", len(cfg.Init), p.size())
	}
	return p, nil
}

// fit runs the configured solver from cfg.Init (or zero).
func (p *problem) fit(cfg Config) (*Model, error) {
	theta := make([]float64, p.size())
	copy(theta, cfg.Init)
	tol := cfg.GradTol
	if tol == 0 {
		tol = 1e-8 * math.Max(1, float64(p.n))
	}
	var (
		st  solverState
		err error
	)
	switch cfg.Solver {
	case Newton, IRLS:
		iters := cfg.MaxIter
		if iters == 0 {
			iters = 100
		}
		st, err = p.newton(theta, iters, tol, cfg.Solver == IRLS, nil)
	default:
		iters := cfg.MaxIter
		if iters == 0 {
			iters = 1000
		}
		st, err = p.lbfgs(theta, iters, tol)
	}
	if err != nil {
		return nil, err
	}
	m := p.model(theta, st)
	if cfg.L2 == 0 && p.separated(theta) {
		return m, fmt.Errorf("logreg: %s after %d iterations (%s): %w", p.link, st.iters, st.reason, ErrSeparable)
	}
	if !st.converged {
		return m, fmt.Errorf("logreg: %s solver stopped after %d iterations with max |gradient| %.3g > %.3g (%s): %w",
			solverName(cfg.Solver), st.iters, st.gradNorm, tol, st.reason, ErrNotConverged)
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
func (p *problem) newton(theta []float64, maxIter int, tol float64, irls bool, trace func([]float64)) (solverState, error) {
	np := p.size()
	pinv := p.rankDeficient()
	var st solverState
	for {
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
			return st, fmt.Errorf("logreg: objective or gradient is not finite at iteration %d", st.iters)
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

// lbfgs minimises E with optim.Minimize and autodiff gradients.
func (p *problem) lbfgs(theta []float64, maxIter int, tol float64) (solverState, error) {
	th := tensor.FromFloat64s(theta)
	obj := func(x, grad []*tensor.Tensor) (float64, error) {
		return p.valueGrad(x[0].Float64s(), grad[0].Float64s()), nil
	}
	res, err := optim.Minimize(obj, []*tensor.Tensor{th}, optim.LBFGSConfig{MaxIter: maxIter, GradTol: tol, FuncTol: -1})
	if err != nil {
		return solverState{}, fmt.Errorf("logreg: lbfgs: %w", err)
	}
	// L-BFGS can stall a little above a tight tolerance when no step changes
	// x in float64 any more: that is the attainable optimum, so stopping
	// early within 1000·tol counts as converged.
	stalled := res.Iterations < maxIter && res.GradNorm <= 1e3*tol
	st := solverState{f: res.F, gradNorm: res.GradNorm, iters: res.Iterations, converged: res.GradNorm <= tol || stalled, reason: res.Reason}
	return st, nil
}

// model packages θ as a Model.
func (p *problem) model(theta []float64, st solverState) *Model {
	m := &Model{Link: p.link, Classes: 2, Objective: st.f, GradNorm: st.gradNorm, Iterations: st.iters,
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

// Eta returns the linear predictor (n, rows of Coef) for x (n, d).
func (m *Model) Eta(x *tensor.Tensor) [][]float64 {
	if len(x.Shape()) != 2 || x.Shape()[1] != len(m.Coef[0]) {
		tensor.Fail("logreg.Model.Eta", "x has shape %v, the model has %d features", x.Shape(), len(m.Coef[0]))
	}
	n, d := x.Shape()[0], x.Shape()[1]
	v := x.Values()
	out := make([][]float64, n)
	for i := range n {
		out[i] = make([]float64, len(m.Coef))
		for r, w := range m.Coef {
			s := m.Intercept[r]
			for j := range d {
				s += w[j] * v[i*d+j]
			}
			out[i][r] = s
		}
	}
	return out
}

// PredictProba returns the class probabilities (n, Classes) for x (n, d):
// for the binary links, column 1 is P(y = 1) and column 0 its complement.
// It panics with a *tensor.Error if x does not have the model's features.
func (m *Model) PredictProba(x *tensor.Tensor) [][]float64 {
	eta := m.Eta(x)
	out := make([][]float64, len(eta))
	for i, e := range eta {
		out[i] = probs(m.Link, e)
	}
	return out
}

// probs maps one sample's linear predictor to class probabilities.
func probs(link Link, eta []float64) []float64 {
	switch link {
	case Logit:
		p := sigmoid(eta[0])
		return []float64{sigmoid(-eta[0]), p}
	case Probit:
		return []float64{math.Exp(logNdtr(-eta[0])), math.Exp(logNdtr(eta[0]))}
	}
	mx := math.Inf(-1)
	for _, v := range eta {
		mx = math.Max(mx, v)
	}
	out := make([]float64, len(eta))
	var s float64
	for k, v := range eta {
		out[k] = math.Exp(v - mx)
		s += out[k]
	}
	for k := range out {
		out[k] /= s
	}
	return out
}

// Predict returns the most probable class of each row of x.
func (m *Model) Predict(x *tensor.Tensor) []int { return Argmax(m.PredictProba(x)) }

// Argmax returns the index of the largest entry of each row.
func Argmax(p [][]float64) []int {
	out := make([]int, len(p))
	for i, row := range p {
		for k, v := range row {
			if v > row[out[i]] {
				out[i] = k
			}
		}
	}
	return out
}

// LogLoss returns the mean negative log-probability of the labels under
// the predicted probabilities p (n, classes), with probabilities clipped
// at 1e-15 as scikit-learn's log_loss does.
func LogLoss(p [][]float64, y []int) float64 {
	var s float64
	for i, row := range p {
		s -= math.Log(math.Max(row[y[i]], 1e-15))
	}
	return s / float64(len(y))
}

// Accuracy returns the fraction of rows whose most probable class is the label.
func Accuracy(p [][]float64, y []int) float64 {
	var c int
	for i, k := range Argmax(p) {
		if k == y[i] {
			c++
		}
	}
	return float64(c) / float64(len(y))
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
