package inference

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// Family is the variational family of ADVI, a Gaussian on the
// unconstrained parameters.
type Family int

const (
	// MeanField is N(μ, diag(σ²)) with σ = exp(ω).
	MeanField Family = iota
	// FullRank is N(μ, LLᵀ) with L lower triangular, its diagonal exp(·).
	FullRank
)

// ADVIOptions configures ADVI. Zero fields take the defaults given.
type ADVIOptions struct {
	Family        Family
	Samples       int     // Monte Carlo draws per gradient (default 1)
	MaxSteps      int     // Adam steps (default 10000)
	LR            float64 // Adam's learning rate (default 0.1), decayed as LR/√(1 + t/1000)
	Tol           float64 // stop when the relative change of the windowed mean ELBO is below Tol (default 0.01)
	Window        int     // steps per ELBO window (default 100)
	ScoreFunction bool    // the score-function gradient instead of the reparameterised one
	Seed          uint64
}

// ADVIResult is the fitted Gaussian q on the unconstrained space.
type ADVIResult struct {
	Family Family
	Mean   []float64 // μ
	// Cov is q's covariance (dim × dim, row-major): diagonal for MeanField.
	Cov       []float64
	ELBO      []float64 // the mean ELBO estimate of each window
	Steps     int
	Converged bool
	ev        *evaluator
	chol      []float64
}

// ADVI fits automatic differentiation variational inference (Kucukelbir
// et al. 2017): a Gaussian q(θ) on the unconstrained parameters maximising
// the ELBO E_q[log p(θ) + log|J|] + H[q], by Adam on Monte Carlo
// gradients. The default gradient is the reparameterised one (θ = μ + Lε,
// ε ~ N(0, I), differentiated through the model's graph); ScoreFunction
// uses E[(log p − log q)·∇log q] with the batch mean as a baseline
// (Ranganath, Gerrish and Blei 2014, "Black box variational inference"),
// which needs no gradient of the model but many more samples.
//
// ADVI checks ctx before every step: when ctx is cancelled it returns
// promptly with q as it stands (Steps says how far it got, Converged is
// false) and ctx.Err() wrapped. When MaxSteps run out before the windowed
// ELBO settles, it returns q with a *tensor.NotConvergedError
// (errors.Is(err, tensor.ErrNotConverged)). Negative options are an
// error.
func ADVI(ctx context.Context, m Model, opts ADVIOptions) (*ADVIResult, error) {
	if opts.Samples < 0 || opts.MaxSteps < 0 || opts.Window < 0 || !(opts.LR >= 0) || math.IsInf(opts.LR, 0) || !(opts.Tol >= 0) {
		return nil, fmt.Errorf("inference.ADVI: Samples %d, MaxSteps %d, Window %d, LR %v and Tol %v must not be negative (LR finite)",
			opts.Samples, opts.MaxSteps, opts.Window, opts.LR, opts.Tol)
	}
	ev, err := newEvaluator(m)
	if err != nil {
		return nil, err
	}
	if opts.Samples == 0 {
		opts.Samples = 1
	}
	if opts.MaxSteps == 0 {
		opts.MaxSteps = 10000
	}
	if opts.LR == 0 {
		opts.LR = 0.1
	}
	if opts.Tol == 0 {
		opts.Tol = 0.01
	}
	if opts.Window == 0 {
		opts.Window = 100
	}
	d := ev.dim
	mu := tensor.Zeros(tensor.Float64, d)
	var scale *tensor.Tensor // ω (d) or the raw lower triangle (d, d)
	if opts.Family == FullRank {
		scale = tensor.Zeros(tensor.Float64, d, d)
	} else {
		scale = tensor.Zeros(tensor.Float64, d)
	}
	params := []*tensor.Tensor{mu, scale}
	adam := optim.NewAdam(params, optim.AdamOptions{LR: opts.LR})
	rng := tensor.NewRNG(opts.Seed)
	g := graph.New()
	res := &ADVIResult{Family: opts.Family, ev: ev}
	var (
		windowSum float64
		stopped   error
	)
	for step := 1; step <= opts.MaxSteps; step++ {
		if err := ctx.Err(); err != nil {
			stopped = fmt.Errorf("inference.ADVI: stopped after %d steps: %w", step-1, err)
			break
		}
		g.Reset()
		eps := rng.Normal(tensor.Float64, 0, 1, opts.Samples, d)
		elbo, grads, err := adviStep(g, ev, mu, scale, eps, opts)
		if err != nil {
			return nil, fmt.Errorf("inference.ADVI: step %d: %w", step, err)
		}
		adam.SetLR(opts.LR / math.Sqrt(1+float64(step)/1000))
		if err := adam.Step(grads); err != nil {
			return nil, fmt.Errorf("inference.ADVI: step %d: %w", step, err)
		}
		windowSum += elbo
		res.Steps = step
		if step%opts.Window == 0 {
			res.ELBO = append(res.ELBO, windowSum/float64(opts.Window))
			windowSum = 0
			if k := len(res.ELBO); k >= 2 {
				prev, cur := res.ELBO[k-2], res.ELBO[k-1]
				if math.Abs(cur-prev)/math.Max(math.Abs(cur), 1e-12) < opts.Tol {
					res.Converged = true
					break
				}
			}
		}
	}
	res.Mean = mu.Values()
	res.chol = choleskyOf(scale, opts.Family, d)
	res.Cov = make([]float64, d*d)
	for i := range d {
		for j := range d {
			for k := range d {
				res.Cov[i*d+j] += res.chol[i*d+k] * res.chol[j*d+k]
			}
		}
	}
	if stopped == nil && !res.Converged {
		change := math.Inf(1)
		if k := len(res.ELBO); k >= 2 {
			change = math.Abs(res.ELBO[k-1]-res.ELBO[k-2]) / math.Max(math.Abs(res.ELBO[k-1]), 1e-12)
		}
		return res, &tensor.NotConvergedError{Op: "inference.ADVI", Iterations: res.Steps, Change: change, Tol: opts.Tol}
	}
	return res, stopped
}

// adviStep returns one ELBO estimate and the (negated, for minimising)
// gradients with respect to μ and the scale parameters.
func adviStep(g *graph.Graph, ev *evaluator, mu, scale, eps *tensor.Tensor, opts ADVIOptions) (elbo float64, grads []*tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	d, s := ev.dim, eps.Shape()[0]
	mn, sn := g.Var(mu), g.Var(scale)
	l, logDiag := lowerFactor(g, sn, opts.Family, d)
	entropy := graph.AddScalar(graph.Sum(logDiag, nil, false), float64(d)/2*(1+math.Log(2*math.Pi)))
	e := g.Const(eps)
	// θ_s = μ + L·ε_s for each draw (rows of e).
	theta := graph.Add(graph.MatMulT(e, l, false, true), mn) // (S, d)
	var objective *graph.Node
	total := 0.0
	var lps []float64
	var logqs []*graph.Node
	for k := range s {
		th := graph.Reshape(graph.Slice(theta, 0, k, k+1, 1), d)
		if !opts.ScoreFunction {
			lp := ev.density(th)
			total += lp.Item()
			objective = add(objective, lp)
			continue
		}
		// Score function: log q(θ) as a function of μ and L, θ held fixed.
		fixed := g.Const(th.Value().Clone())
		lp := ev.density(fixed).Item()
		z := graph.TriSolve(l, graph.Unsqueeze(graph.Sub(fixed, mn), 1), true, false)
		logq := graph.Sub(graph.MulScalar(graph.Sum(graph.Square(z), nil, false), -0.5), graph.Sum(logDiag, nil, false))
		total += lp
		lps, logqs = append(lps, lp), append(logqs, logq)
	}
	if opts.ScoreFunction {
		// ∇E_q[log p] = E_q[(log p − b)·∇log q] for any constant b, as
		// E_q[∇log q] = 0; the batch mean as b lowers the variance. The
		// entropy's gradient is exact.
		b := total / float64(s)
		for k, logq := range logqs {
			objective = add(objective, graph.MulScalar(logq, lps[k]-b))
		}
	}
	loss := graph.Neg(graph.Add(graph.MulScalar(objective, 1/float64(s)), entropy))
	gs := autodiff.Grad(loss, mn, sn)
	elbo = total/float64(s) + entropy.Item()
	if math.IsNaN(elbo) || math.IsInf(elbo, 0) {
		return 0, nil, fmt.Errorf("the ELBO is %v", elbo)
	}
	return elbo, []*tensor.Tensor{gs[0].Value(), gs[1].Value()}, nil
}

// lowerFactor returns q's Cholesky factor L as a node and the logs of its
// diagonal: diag(exp(ω)) for MeanField, or the raw matrix's strict lower
// triangle plus exp of its diagonal for FullRank.
func lowerFactor(g *graph.Graph, scale *graph.Node, f Family, d int) (l, logDiag *graph.Node) {
	eye := g.Const(tensor.Eye(tensor.Float64, d))
	if f == MeanField {
		return graph.Mul(eye, graph.Unsqueeze(graph.Exp(scale), 0)), scale
	}
	strict := graph.Sub(graph.Tril(scale), graph.Mul(scale, eye))
	return graph.Add(strict, graph.Mul(graph.Exp(scale), eye)), graph.Diagonal(scale)
}

// choleskyOf is lowerFactor on values: L row-major (d × d).
func choleskyOf(scale *tensor.Tensor, f Family, d int) []float64 {
	v := scale.Values()
	l := make([]float64, d*d)
	for i := range d {
		if f == MeanField {
			l[i*d+i] = math.Exp(v[i])
			continue
		}
		for j := 0; j < i; j++ {
			l[i*d+j] = v[i*d+j]
		}
		l[i*d+i] = math.Exp(v[i*d+i])
	}
	return l
}

// Draw returns n draws from q mapped to the constrained space, in the
// layout of Result.Names (draws[i] is one draw).
func (r *ADVIResult) Draw(n int, seed uint64) [][]float64 {
	rng := tensor.NewRNG(seed)
	d := len(r.Mean)
	out := make([][]float64, n)
	theta := make([]float64, d)
	for k := range out {
		eps := make([]float64, d)
		for i := range eps {
			eps[i] = rng.NormFloat64()
		}
		for i := range d {
			theta[i] = r.Mean[i]
			for j := 0; j <= i; j++ {
				theta[i] += r.chol[i*d+j] * eps[j]
			}
		}
		out[k] = r.ev.constrain(theta)
	}
	return out
}

// Names labels the constrained scalars of Draw's rows, e.g. "beta[2]".
func (r *ADVIResult) Names() []string { return r.ev.names(make([]float64, len(r.Mean))) }
