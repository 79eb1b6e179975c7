// Command advi fits the Bayesian logistic regression of examples/nuts
// (breast cancer, 30 standardised features and an intercept, N(0, I) on
// all 31 weights) by automatic differentiation variational inference
// (inference.ADVI; Kucukelbir et al. 2017) with the mean-field and the
// full-rank Gaussian families, and compares each with the Laplace
// approximation of probabilistic/logreg. Mean-field ADVI is known to
// underestimate posterior variances when the weights are correlated (they
// are here: the 30 features hold many near-copies); full rank does not.
// It draws the ELBO of both fits against the Adam steps (elbo.png in -out).
//
//	go run ./examples/advi [-seed 1] [-samples 8] [-steps 20000] [-out out/advi] [-json] [-quiet]
package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/probabilistic/logreg"
	"github.com/gradus-ml/gradus/tensor"
)

type config struct {
	Samples int `flag:"samples" help:"draws per ELBO gradient"`
	Steps   int `flag:"steps" help:"maximum Adam steps"`
}

// fit summarises one family against Laplace.
type fit struct {
	Family string  `json:"family"`
	ELBO   float64 `json:"final_elbo"`
	Steps  int     `json:"steps"`
	// MeanErr is max |μ_q − μ_Laplace| / sd_Laplace over the weights.
	MeanErr float64 `json:"mean_err_in_sd"`
	// SDRatio is the median of sd_q / sd_Laplace over the weights.
	SDRatio float64   `json:"sd_ratio_median"`
	Seconds float64   `json:"seconds"`
	Curve   []float64 `json:"-"`
	Window  int       `json:"-"`
}

type result struct {
	Fits []fit  `json:"fits"`
	Plot string `json:"plot,omitempty"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "advi"}, config{Samples: 8, Steps: 20000}, run)
}

func run(cfg config, env *cli.Env) (res result, err error) {
	const window = 100 // Adam steps per ELBO estimate, ADVI's default
	if cfg.Steps < window {
		return res, cli.BadFlagf("-steps %d: need at least %d, one window of the ELBO", cfg.Steps, window)
	}
	x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
	if err != nil {
		return res, err
	}
	data.Standardise(x)
	y := make([]float64, len(labels))
	for i, l := range labels {
		y[i] = float64(l)
	}
	design, yt := data.WithIntercept(x), tensor.FromFloat64s(y, len(y), 1)
	p := design.Shape()[1]
	model := inference.Model{
		Params: []inference.Param{{Name: "w", Shape: []int{p, 1}, Init: make([]float64, p)}},
		LogDensity: func(g *graph.Graph, q map[string]*graph.Node) *graph.Node {
			eta := graph.MatMul(g.Const(design), q["w"])
			ll := graph.Sum(graph.Sub(graph.Mul(g.Const(yt), eta), graph.Softplus(eta)), nil, false)
			return graph.Add(ll, graph.MulScalar(graph.Sum(graph.Square(q["w"]), nil, false), -0.5))
		},
	}
	post, err := logreg.FitLaplace(env.Context(), x, labels, logreg.LaplaceOptions{Alpha: 1})
	if err != nil {
		return res, err
	}
	theta, cov := post.MAP.Theta(), post.Cov() // weights then intercept
	lmean, lsd := make([]float64, p), make([]float64, p)
	for a := range p {
		src := a - 1 // the sampler's weight a is logreg's a − 1; its 0 is the intercept
		if a == 0 {
			src = p - 1
		}
		lmean[a], lsd[a] = theta[src], math.Sqrt(cov.At(src, src))
	}
	for _, fam := range []struct {
		f    inference.Family
		name string
	}{{inference.MeanField, "mean-field"}, {inference.FullRank, "full-rank"}} {
		start := time.Now()
		r, err := inference.ADVI(env.Context(), model, inference.ADVIOptions{Family: fam.f, Samples: cfg.Samples, MaxSteps: cfg.Steps, LR: 0.02, Tol: 1e-3, Seed: env.Seed})
		if err != nil && !errors.Is(err, tensor.ErrNotConverged) { // a fixed budget of steps is the usual way to run ADVI
			return res, fmt.Errorf("%s: %w", fam.name, err)
		}
		f := fit{Family: fam.name, ELBO: r.ELBO[len(r.ELBO)-1], Steps: r.Steps, Seconds: time.Since(start).Seconds(), Curve: r.ELBO, Window: window}
		ratios := make([]float64, p)
		for a := range p {
			f.MeanErr = max(f.MeanErr, math.Abs(r.Mean[a]-lmean[a])/lsd[a])
			ratios[a] = math.Sqrt(r.Cov[a*p+a]) / lsd[a]
		}
		f.SDRatio = median(ratios)
		res.Fits = append(res.Fits, f)
		env.Printf("%-10s ADVI: ELBO %.2f after %d steps (%.1f s); means within %.2f Laplace sds; median sd ratio to Laplace %.2f\n",
			f.Family, f.ELBO, f.Steps, f.Seconds, f.MeanErr, f.SDRatio)
	}
	res.Plot = env.Path("elbo.png")
	if err := plotELBO(res.Plot, res.Fits); err != nil {
		return res, err
	}
	env.Println("ELBO curves:", res.Plot)
	return res, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// plotELBO draws each fit's ELBO, averaged over windows of steps, against
// the step.
func plotELBO(path string, fits []fit) error {
	pn := plot.Panel{Title: "ADVI on Bayesian logistic regression (breast cancer): ELBO",
		XLabel: "Adam step", YLabel: "mean ELBO over 100 steps"}
	for _, f := range fits {
		c := plot.Curve{Name: f.Family, Style: plot.Line}
		for i, v := range f.Curve[1:] { // the first window starts far from the optimum and flattens the rest
			c.X, c.Y = append(c.X, float64((i+2)*f.Window)), append(c.Y, v)
		}
		pn.Curves = append(pn.Curves, c)
	}
	return plot.WritePNG(path, pn)
}
