// Command ppl-schools fits the eight-schools model (Rubin 1981; Gelman et
// al. 2013, "Bayesian data analysis", §5.5) written as a generative
// program for package ppl, by NUTS, in two forms:
//
//   - centred: μ ~ N(0, 5), τ ~ half-Cauchy(0, 5), θⱼ ~ N(μ, τ),
//     yⱼ ~ N(θⱼ, σⱼ): the posterior is a funnel in (θ, log τ), whose neck
//     the sampler cannot follow with one step size, so it reports
//     divergent transitions;
//   - non-centred: θ̃ⱼ ~ N(0, 1), θⱼ = μ + τθ̃ⱼ (a Deterministic site),
//     the same model with a geometry NUTS samples easily.
//
// The model functions are all the program writes: site constraints (τ > 0)
// are moved to an unconstrained space by the ppl layer, and the results are
// keyed by site with θ kept as a vector. Stan's case study reports E[μ] ≈
// 4.4 and E[τ] ≈ 3.6. The program prints both summaries and draws log τ
// against θ₁ for both forms to -out/funnel.png.
//
//	go run ./examples/ppl-schools [-chains 4] [-warmup 1000] [-draws 1000] [-target 0.8] [-seed 1] [-out out/ppl-schools] [-json] [-quiet]
//
// -json prints {"mu_mean", "tau_mean", "rhat_max", "divergences_centered",
// "divergences_noncentered", ...} for the non-centred fit.
package main

import (
	"math"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/probabilistic/ppl"
	"github.com/gradus-ml/gradus/tensor"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	Chains int     `flag:"chains" help:"chains"`
	Warmup int     `flag:"warmup" help:"warm-up iterations per chain"`
	Draws  int     `flag:"draws" help:"kept draws per chain"`
	Target float64 `flag:"target" help:"NUTS's target acceptance statistic"`
}

// result is what -json prints.
type result struct {
	MuMean                 float64   `json:"mu_mean"`
	TauMean                float64   `json:"tau_mean"`
	RhatMax                float64   `json:"rhat_max"`
	ESSBulkMin             float64   `json:"ess_bulk_min"`
	DivergencesCentered    int       `json:"divergences_centered"`
	DivergencesNoncentered int       `json:"divergences_noncentered"`
	ThetaMean              []float64 `json:"theta_mean"` // the non-centred fit's θⱼ
	CenteredMuMean         float64   `json:"centered_mu_mean"`
	CenteredTauMean        float64   `json:"centered_tau_mean"`
	Plot                   string    `json:"plot"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "ppl-schools"}, config{Chains: 4, Warmup: 1000, Draws: 1000, Target: 0.8}, run)
}

var (
	schoolY     = []float64{28, 8, -3, 7, -1, 1, 18, 12}
	schoolSigma = []float64{15, 10, 16, 11, 9, 11, 10, 18}
)

// priors declares μ and τ.
func priors(c *ppl.Ctx) (mu, tau *graph.Node) {
	mu = ppl.Sample(c, "mu", probabilistic.NewNormal(c.Scalar(0), c.Scalar(5)))
	tau = ppl.Sample(c, "tau", probabilistic.NewHalfCauchy(c.Scalar(5)))
	return mu, tau
}

// likelihood observes the schools' estimates given θ.
func likelihood(c *ppl.Ctx, theta *graph.Node) {
	sigma := c.Const(tensor.FromValues(tensor.Float64, schoolSigma, 8))
	ppl.Observe(c, "y", probabilistic.NewNormal(theta, sigma), tensor.FromValues(tensor.Float64, schoolY, 8))
}

// centred is the model as it is usually written.
func centred(c *ppl.Ctx) {
	mu, tau := priors(c)
	ppl.Plate(c, "schools", 8, ppl.PlateOptions{}, func([]int) {
		theta := ppl.Sample(c, "theta", probabilistic.NewNormal(mu, tau))
		likelihood(c, theta)
	})
}

// nonCentred draws standardised effects and scales them.
func nonCentred(c *ppl.Ctx) {
	mu, tau := priors(c)
	ppl.Plate(c, "schools", 8, ppl.PlateOptions{}, func([]int) {
		tt := ppl.Sample(c, "theta_tilde", probabilistic.NewNormal(c.Scalar(0), c.Scalar(1)))
		theta := ppl.Deterministic(c, "theta", graph.Add(mu, graph.Mul(tau, tt)))
		likelihood(c, theta)
	})
}

// run fits both forms and draws the funnel.
func run(cfg config, env *cli.Env) (res result, err error) {
	if cfg.Chains < 1 || cfg.Warmup < 1 || cfg.Draws < 4 || !(cfg.Target > 0 && cfg.Target < 1) {
		return res, cli.BadFlagf("need -chains ≥ 1, -warmup ≥ 1, -draws ≥ 4 and 0 < -target < 1")
	}
	opts := inference.NUTSOptions{Chains: cfg.Chains, Warmup: cfg.Warmup, Draws: cfg.Draws, TargetAccept: cfg.Target, Seed: env.Seed}
	env.Printf("centred form: NUTS, %d chains × (%d warm-up + %d draws)\n", cfg.Chains, cfg.Warmup, cfg.Draws)
	cp, err := ppl.NUTS(env.Context(), centred, opts)
	if err != nil {
		return res, err
	}
	env.Printf("%s", cp.Summary())
	env.Printf("non-centred form\n")
	np, err := ppl.NUTS(env.Context(), nonCentred, opts)
	if err != nil {
		return res, err
	}
	env.Printf("%s", np.Summary())
	res.DivergencesCentered, res.DivergencesNoncentered = cp.DivergenceCount(), np.DivergenceCount()
	res.MuMean, res.TauMean = np.Mean("mu").Item(), np.Mean("tau").Item()
	res.CenteredMuMean, res.CenteredTauMean = cp.Mean("mu").Item(), cp.Mean("tau").Item()
	res.ThetaMean = np.Mean("theta").Values()
	res.ESSBulkMin = math.Inf(1)
	for _, site := range []string{"mu", "tau", "theta_tilde"} {
		for k, r := range np.Rhat(site).Values() {
			res.RhatMax = max(res.RhatMax, r)
			res.ESSBulkMin = min(res.ESSBulkMin, np.ESS(site).Values()[k])
		}
	}
	env.Printf("non-centred: E[μ] = %.2f, E[τ] = %.2f (Stan: 4.4, 3.6), R̂ max %.4f, bulk ESS min %.0f\n", res.MuMean, res.TauMean, res.RhatMax, res.ESSBulkMin)
	env.Printf("divergent transitions after warm-up: centred %d, non-centred %d\n", res.DivergencesCentered, res.DivergencesNoncentered)
	res.Plot, err = env.WritePNG("funnel.png", funnel("centred", cp), funnel("non-centred", np))
	return res, err
}

// funnel is the panel of log τ against θ₁, the funnel's two axes.
func funnel(name string, p *ppl.Posterior) plot.Panel {
	s := p.Samples()
	tau, theta := s["tau"].Values(), s["theta"].Values()
	x, y := make([]float64, len(tau)), make([]float64, len(tau))
	for i := range tau {
		x[i], y[i] = theta[8*i], math.Log(tau[i])
	}
	return plot.Panel{Title: name + " form", XLabel: "θ₁", YLabel: "log τ", Curves: []plot.Curve{{Name: "draws", X: x, Y: y, Style: plot.Scatter}}}
}
