// Command nuts samples two posteriors with NUTS (package inference) and
// checks them against independent numbers.
//
// Bayesian logistic regression on the breast-cancer set shipped with
// Gradus: all 30 features standardised by the population standard
// deviation, a column of ones first, the prior N(0, I) on all 31 weights
// (intercept included); 4 chains of 1,000 warm-up and 1,000 kept draws.
// It prints the summary table (means, quantiles, R̂, bulk and tail ESS)
// and the posterior mean and covariance next to the Laplace approximation
// of probabilistic/logreg, and draws trace and density plots (trace_k.png
// in -out).
//
// The eight-schools hierarchical model (Rubin 1981; Gelman et al., BDA
// §5.5) in its non-centred form: μ ~ N(0, 5), τ ~ half-Cauchy(0, 5),
// θ̃ⱼ ~ N(0, 1), yⱼ ~ N(μ + τθ̃ⱼ, σⱼ).
//
//	go run ./examples/nuts [-seed 1] [-chains 4] [-warmup 1000] [-draws 1000] [-out out/nuts] [-json] [-quiet]
//
// -json prints {"rhat_max", "ess_bulk_min", "divergences",
// "posterior_mean" (31 values, intercept first), "seconds", ...}.
package main

import (
	"fmt"
	"math"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/probabilistic/logreg"
	"github.com/gradus-ml/gradus/tensor"
)

type config struct {
	Chains      int `flag:"chains" help:"chains"`
	Warmup      int `flag:"warmup" help:"warm-up iterations per chain"`
	Draws       int `flag:"draws" help:"kept draws per chain"`
	SkipSchools bool
}

// schools is the eight-schools model's summary.
type schools struct {
	MuMean      float64 `json:"mu_mean"`
	TauMean     float64 `json:"tau_mean"`
	RhatMax     float64 `json:"rhat_max"`
	Divergences int     `json:"divergences"`
}

type result struct {
	RhatMax       float64   `json:"rhat_max"`
	ESSBulkMin    float64   `json:"ess_bulk_min"`
	Divergences   int       `json:"divergences"`
	PosteriorMean []float64 `json:"posterior_mean"` // intercept first
	Seconds       float64   `json:"seconds"`
	PosteriorSD   []float64 `json:"posterior_sd"`
	LaplaceMean   []float64 `json:"laplace_mean"`
	LaplaceSD     []float64 `json:"laplace_sd"`
	// CovRelDiff is max |Σ_NUTS − Σ_Laplace| over entries, divided by the
	// largest Laplace variance.
	CovRelDiff   float64  `json:"cov_rel_diff"`
	EightSchools *schools `json:"eight_schools,omitempty"`
	Plots        []string `json:"plots,omitempty"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "nuts"}, config{Chains: 4, Warmup: 1000, Draws: 1000}, run) // -seed: of the chains
}

// design returns the standardised features with a column of ones first,
// and the labels (1 benign, 0 malignant).
func design() (*tensor.Tensor, *tensor.Tensor, []int, error) {
	x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
	if err != nil {
		return nil, nil, nil, err
	}
	data.Standardise(x)
	y := make([]float64, len(labels))
	for i, l := range labels {
		y[i] = float64(l)
	}
	return data.WithIntercept(x), tensor.FromFloat64s(y, len(y), 1), labels, nil
}

func run(cfg config, env *cli.Env) (res result, err error) {
	start := time.Now()
	x, yt, labels, err := design()
	if err != nil {
		return res, err
	}
	n, p := x.Shape()[0], x.Shape()[1]
	model := inference.Model{
		Params: []inference.Param{{Name: "w", Shape: []int{p, 1}}},
		LogDensity: func(g *graph.Graph, q map[string]*graph.Node) *graph.Node {
			w := q["w"]
			eta := graph.MatMul(g.Const(x), w) // (n, 1)
			// Σ y·η − softplus(η): the Bernoulli log-likelihood in logits.
			ll := graph.Sum(graph.Sub(graph.Mul(g.Const(yt), eta), graph.Softplus(eta)), nil, false)
			return graph.Add(ll, graph.MulScalar(graph.Sum(graph.Square(w), nil, false), -0.5))
		},
	}
	env.Printf("NUTS: %d chains × (%d warm-up + %d draws) on %d tumours, 30 features + intercept\n", cfg.Chains, cfg.Warmup, cfg.Draws, n)
	r, err := inference.NUTS(env.Context(), model, inference.NUTSOptions{Chains: cfg.Chains, Warmup: cfg.Warmup, Draws: cfg.Draws, Seed: env.Seed})
	if err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	for _, v := range r.Divergences {
		res.Divergences += v
	}
	res.ESSBulkMin = math.Inf(1)
	var all [][]float64 // all[k] holds every draw of weight k
	for _, name := range r.Names {
		ch := r.Column(name)
		res.RhatMax = max(res.RhatMax, inference.Rhat(ch))
		res.ESSBulkMin = min(res.ESSBulkMin, inference.BulkESS(ch))
		var flat []float64
		for _, c := range ch {
			flat = append(flat, c...)
		}
		all = append(all, flat)
		m, sd := meanSD(flat)
		res.PosteriorMean = append(res.PosteriorMean, m)
		res.PosteriorSD = append(res.PosteriorSD, sd)
	}
	// The Laplace fit adds its own intercept: give it the features only.
	post, err := logreg.FitLaplace(env.Context(), tensor.Slice(x, 1, 1, p, 1).Contiguous(), labels, logreg.LaplaceOptions{Alpha: 1})
	if err != nil {
		return res, err
	}
	lmean, lcov := post.MAP.Theta(), post.Cov().Values() // weights then intercept
	// logreg orders weights then intercept; the sampler has the intercept first.
	order := append([]int{p - 1}, seq(p-1)...)
	maxVar, maxDiff := 0.0, 0.0
	for a := range p {
		res.LaplaceMean = append(res.LaplaceMean, lmean[order[a]])
		res.LaplaceSD = append(res.LaplaceSD, math.Sqrt(lcov[order[a]*p+order[a]]))
		maxVar = max(maxVar, lcov[order[a]*p+order[a]])
		for b := range p {
			maxDiff = max(maxDiff, math.Abs(covariance(all[a], all[b])-lcov[order[a]*p+order[b]]))
		}
	}
	res.CovRelDiff = maxDiff / maxVar
	env.Printf("%s", r.Summary())
	env.Printf("\nR̂ max %.4f, bulk ESS min %.0f, %d divergences, %.1f s\n", res.RhatMax, res.ESSBulkMin, res.Divergences, res.Seconds)
	env.Printf("%-6s %10s %10s %10s %10s\n", "weight", "NUTS mean", "Laplace", "NUTS sd", "Laplace")
	for k := range p {
		env.Printf("%-6d %10.4f %10.4f %10.4f %10.4f\n", k, res.PosteriorMean[k], res.LaplaceMean[k], res.PosteriorSD[k], res.LaplaceSD[k])
	}
	env.Printf("covariance: max |Σ_NUTS − Σ_Laplace| = %.3f of the largest Laplace variance\n", res.CovRelDiff)
	if !cfg.SkipSchools {
		s, err := eightSchools(cfg, env)
		if err != nil {
			return res, err
		}
		res.EightSchools = s
	}
	for k, name := range r.Names[:min(6, len(r.Names))] { // the intercept and the first five weights
		path := env.Path(fmt.Sprintf("trace_%d.png", k))
		if err := tracePlot(path, name, r.Column(name)); err != nil {
			return res, err
		}
		res.Plots = append(res.Plots, path)
	}
	env.Printf("trace and density plots in %s\n", env.Out)
	return res, nil
}

// eightSchools samples the non-centred eight-schools model.
func eightSchools(cfg config, env *cli.Env) (*schools, error) {
	y := []float64{28, 8, -3, 7, -1, 1, 18, 12}
	sigma := []float64{15, 10, 16, 11, 9, 11, 10, 18}
	model := inference.Model{
		Params: []inference.Param{
			{Name: "mu", Shape: []int{}},
			{Name: "tau", Shape: []int{}, Bijector: probabilistic.Exp{}},
			{Name: "theta_tilde", Shape: []int{8}},
		},
		LogDensity: func(g *graph.Graph, q map[string]*graph.Node) *graph.Node {
			mu, tau, tt := q["mu"], q["tau"], q["theta_tilde"]
			theta := graph.Add(mu, graph.Mul(tau, tt))
			z := graph.Div(graph.Sub(g.Const(tensor.FromFloat64s(y, 8)), theta), g.Const(tensor.FromFloat64s(sigma, 8)))
			ll := graph.MulScalar(graph.Sum(graph.Square(z), nil, false), -0.5)
			priorMu := graph.MulScalar(graph.Square(mu), -0.5/25)
			// half-Cauchy(0, 5): −log(1 + (τ/5)²) up to a constant.
			priorTau := graph.Neg(graph.Log1p(graph.Square(graph.MulScalar(tau, 0.2))))
			priorTT := graph.MulScalar(graph.Sum(graph.Square(tt), nil, false), -0.5)
			return graph.Add(graph.Add(ll, priorMu), graph.Add(priorTau, priorTT))
		},
	}
	r, err := inference.NUTS(env.Context(), model, inference.NUTSOptions{Chains: cfg.Chains, Warmup: cfg.Warmup, Draws: cfg.Draws, Seed: env.Seed + 1, TargetAccept: 0.95})
	if err != nil {
		return nil, err
	}
	s := &schools{}
	for _, v := range r.Divergences {
		s.Divergences += v
	}
	for _, name := range r.Names {
		s.RhatMax = max(s.RhatMax, inference.Rhat(r.Column(name)))
	}
	mean := func(name string) float64 {
		var all []float64
		for _, c := range r.Column(name) {
			all = append(all, c...)
		}
		m, _ := meanSD(all)
		return m
	}
	s.MuMean, s.TauMean = mean("mu"), mean("tau")
	env.Printf("\neight schools (non-centred): E[μ] = %.2f, E[τ] = %.2f, R̂ max %.4f, %d divergences\n", s.MuMean, s.TauMean, s.RhatMax, s.Divergences)
	return s, nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func covariance(a, b []float64) float64 {
	ma, _ := meanSD(a)
	mb, _ := meanSD(b)
	s := 0.0
	for i := range a {
		s += (a[i] - ma) * (b[i] - mb)
	}
	return s / float64(len(a)-1)
}

func meanSD(x []float64) (float64, float64) {
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)-1))
}

// tracePlot draws each chain's draws against the iteration and, on the
// right, a histogram of all draws.
func tracePlot(path, title string, chains [][]float64) error {
	trace := plot.Panel{Title: "trace: " + title, XLabel: "iteration"}
	density := plot.Curve{Name: "all chains", Style: plot.Histogram, Bins: 40}
	for c, ch := range chains {
		trace.Curves = append(trace.Curves, plot.Curve{Name: fmt.Sprintf("chain %d", c+1), Y: ch, Style: plot.Line})
		density.Y = append(density.Y, ch...)
	}
	return plot.WritePNG(path, trace, plot.Panel{Title: "density: " + title, Curves: []plot.Curve{density}})
}
