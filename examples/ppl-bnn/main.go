// Command ppl-bnn fits a Bayesian neural network for regression on the
// diabetes set shipped with Gradus (Efron et al. 2004: 442 patients, 10
// features, disease progression after a year), written once as a ppl
// model and fitted two ways (Neal 1996, "Bayesian learning for neural
// networks"; Blundell et al. 2015, "Weight uncertainty in neural
// networks"):
//
//   - SVI with the mean-field normal guide (ppl.AutoNormal) on a network
//     with -hidden tanh units;
//   - NUTS on a smaller network with -nuts-hidden units.
//
// The network is y ~ N(tanh(xW₁ + b₁)·w₂ + b₂, σ²) with W₁, b₁, b₂ ~ N(0,
// 1), w₂ ~ N(0, 1/H) and σ ~ Gamma(2, 4), on features and target
// standardised by the training rows' statistics (an 80/20 split by -seed).
// For each fit it reports, on the held-out rows, the log predictive
// density per row (log of the likelihood averaged over posterior draws,
// through ppl.LogLikelihood) and the coverage of the central 90 %
// predictive intervals (from ppl.Predictive), and draws the predictive
// means and intervals against the truth to -out/bnn.png.
//
//	go run ./examples/ppl-bnn [-hidden 16] [-steps 4000] [-lr 0.01] [-nuts-hidden 4] [-chains 2] [-warmup 300] [-draws 300] [-seed 1] [-out out/ppl-bnn] [-json] [-quiet]
package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/gradus-ml/gradus/data"
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
	Hidden     int     `flag:"hidden" help:"hidden units of the SVI network"`
	Steps      int     `flag:"steps" help:"SVI steps"`
	LR         float64 `flag:"lr" help:"Adam's learning rate"`
	NUTSHidden int     `flag:"nuts-hidden" help:"hidden units of the NUTS network"`
	Chains     int     `flag:"chains" help:"NUTS chains"`
	Warmup     int     `flag:"warmup" help:"NUTS warm-up iterations per chain"`
	Draws      int     `flag:"draws" help:"NUTS draws per chain (and SVI guide draws: chains × draws)"`
}

// fit is one method's held-out summary.
type fit struct {
	TestLPD    float64 `json:"test_lpd"`   // mean over held-out rows of log mean_s p(y | θₛ)
	Coverage90 float64 `json:"coverage90"` // share of held-out y inside the central 90 % interval
	TestRMSE   float64 `json:"test_rmse"`  // of the predictive mean, standardised units
	Seconds    float64 `json:"seconds"`
	RhatMax    float64 `json:"rhat_max,omitempty"`
	Divergent  int     `json:"divergences,omitempty"`
}

// result is what -json prints.
type result struct {
	SVI   fit    `json:"svi"`
	NUTS  fit    `json:"nuts"`
	Train int    `json:"n_train"`
	Test  int    `json:"n_test"`
	Plot  string `json:"plot"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "ppl-bnn"},
		config{Hidden: 16, Steps: 4000, LR: 0.01, NUTSHidden: 4, Chains: 2, Warmup: 300, Draws: 300}, run)
}

// split holds the standardised rows.
type split struct{ xTrain, yTrain, xTest, yTest *tensor.Tensor }

// load reads the diabetes set, splits it and standardises it with the
// training rows' means and standard deviations.
func load(seed uint64) (split, error) {
	tab, err := data.LoadCSV("sklearn/diabetes.csv")
	if err != nil {
		return split{}, err
	}
	rows, target, err := tab.Split("target")
	if err != nil {
		return split{}, err
	}
	train, test := data.TrainTestSplit(len(rows), 0.2, seed)
	d := len(rows[0])
	col := func(j int) []float64 {
		var v []float64
		for _, i := range train {
			if j < d {
				v = append(v, rows[i][j])
			} else {
				v = append(v, target[i])
			}
		}
		return v
	}
	means, sds := make([]float64, d+1), make([]float64, d+1)
	for j := range d + 1 {
		means[j], sds[j] = stat.PopMeanStdDev(col(j), nil)
	}
	take := func(idx []int) (*tensor.Tensor, *tensor.Tensor) {
		xs, ys := make([]float64, 0, len(idx)*d), make([]float64, 0, len(idx))
		for _, i := range idx {
			for j, v := range rows[i] {
				xs = append(xs, (v-means[j])/sds[j])
			}
			ys = append(ys, (target[i]-means[d])/sds[d])
		}
		return tensor.FromFloat64s(xs, len(idx), d), tensor.FromFloat64s(ys, len(idx))
	}
	var s split
	s.xTrain, s.yTrain = take(train)
	s.xTest, s.yTest = take(test)
	return s, nil
}

// network returns the model: a one-hidden-layer tanh network with
// Gaussian noise, observing y at inputs x.
func network(x, y *tensor.Tensor, hidden int) ppl.Model {
	n, d := x.Shape()[0], x.Shape()[1]
	std := func(c *ppl.Ctx, s float64, shape ...int) *probabilistic.Normal {
		return probabilistic.NewNormal(c.Const(tensor.Zeros(tensor.Float64, shape...)), c.Scalar(s))
	}
	return func(c *ppl.Ctx) {
		w1 := ppl.Sample(c, "w1", std(c, 1, d, hidden))
		b1 := ppl.Sample(c, "b1", std(c, 1, hidden))
		w2 := ppl.Sample(c, "w2", std(c, 1/math.Sqrt(float64(hidden)), hidden, 1))
		b2 := ppl.Sample(c, "b2", std(c, 1))
		sigma := ppl.Sample(c, "sigma", probabilistic.NewGamma(c.Scalar(2), c.Scalar(4)))
		h := graph.Tanh(graph.Add(graph.MatMul(c.Const(x), w1), b1))
		mean := graph.Add(graph.Reshape(graph.MatMul(h, w2), n), b2)
		ppl.Plate(c, "patients", n, ppl.PlateOptions{}, func([]int) {
			ppl.Observe(c, "y", probabilistic.NewNormal(mean, sigma), y)
		})
	}
}

// run fits the network by SVI and by NUTS and scores both on the held-out
// rows.
func run(cfg config, env *cli.Env) (res result, err error) {
	if cfg.Hidden < 1 || cfg.NUTSHidden < 1 || cfg.Steps < 1 || !(cfg.LR > 0) || cfg.Chains < 1 || cfg.Warmup < 1 || cfg.Draws < 4 {
		return res, cli.BadFlagf("need -hidden, -nuts-hidden, -steps, -chains, -warmup ≥ 1, -draws ≥ 4 and -lr > 0")
	}
	s, err := load(env.Seed)
	if err != nil {
		return res, err
	}
	res.Train, res.Test = s.yTrain.Size(), s.yTest.Size()
	start := time.Now()
	model := network(s.xTrain, s.yTrain, cfg.Hidden)
	svi, err := ppl.FitSVI(env.Context(), model, ppl.AutoNormal(model, ppl.AutoGuideOptions{Seed: env.Seed}),
		ppl.SVIOptions{Steps: cfg.Steps, LR: cfg.LR, Seed: env.Seed})
	if err != nil {
		return res, fmt.Errorf("SVI: %w", err)
	}
	draws, err := svi.Sample(cfg.Chains*cfg.Draws, env.Seed+1)
	if err != nil {
		return res, err
	}
	res.SVI.Seconds = time.Since(start).Seconds()
	sviBands, err := score(&res.SVI, network(s.xTest, s.yTest, cfg.Hidden), draws, s.yTest, env.Seed)
	if err != nil {
		return res, err
	}
	env.Printf("SVI (mean field, %d hidden, %d steps): held-out lpd %.3f per row, 90%% coverage %.2f, RMSE %.3f (%.1f s)\n",
		cfg.Hidden, cfg.Steps, res.SVI.TestLPD, res.SVI.Coverage90, res.SVI.TestRMSE, res.SVI.Seconds)
	start = time.Now()
	post, err := ppl.NUTS(env.Context(), network(s.xTrain, s.yTrain, cfg.NUTSHidden),
		inference.NUTSOptions{Chains: cfg.Chains, Warmup: cfg.Warmup, Draws: cfg.Draws, Seed: env.Seed})
	if err != nil {
		return res, fmt.Errorf("NUTS: %w", err)
	}
	res.NUTS.Seconds = time.Since(start).Seconds()
	res.NUTS.Divergent = post.DivergenceCount()
	for _, r := range post.Rhat("sigma").Values() {
		res.NUTS.RhatMax = math.Max(res.NUTS.RhatMax, r)
	}
	nutsBands, err := score(&res.NUTS, network(s.xTest, s.yTest, cfg.NUTSHidden), post.Samples(), s.yTest, env.Seed)
	if err != nil {
		return res, err
	}
	env.Printf("NUTS (%d hidden, %d × (%d + %d)): held-out lpd %.3f per row, 90%% coverage %.2f, RMSE %.3f, R̂(σ) %.3f, %d divergences (%.1f s)\n",
		cfg.NUTSHidden, cfg.Chains, cfg.Warmup, cfg.Draws, res.NUTS.TestLPD, res.NUTS.Coverage90, res.NUTS.TestRMSE, res.NUTS.RhatMax, res.NUTS.Divergent, res.NUTS.Seconds)
	res.Plot, err = env.WritePNG("bnn.png", panel("SVI, mean field", sviBands, s.yTest), panel("NUTS", nutsBands, s.yTest))
	return res, err
}

// bands are the predictive mean and central 90 % interval of each row.
type bands struct{ mean, lo, hi []float64 }

// score fills f with the held-out lpd, coverage and RMSE of the posterior
// draws, and returns the predictive bands.
func score(f *fit, test ppl.Model, draws ppl.Samples, y *tensor.Tensor, seed uint64) (bands, error) {
	ll, err := ppl.LogLikelihood(test, draws)
	if err != nil {
		return bands{}, err
	}
	for _, v := range ppl.PointwiseLPD(ll["y"]).Values() {
		f.TestLPD += v / float64(y.Size())
	}
	pred, err := ppl.Predictive(test, draws, ppl.PredictiveOptions{Seed: seed})
	if err != nil {
		return bands{}, err
	}
	yv, p := y.Values(), pred["y"].Values()
	n, k := len(yv), pred["y"].Shape()[0]
	var b bands
	col := make([]float64, k)
	for i := range n {
		for s := range k {
			col[s] = p[s*n+i]
		}
		slices.Sort(col)
		lo, hi := stat.Quantile(0.05, stat.Empirical, col, nil), stat.Quantile(0.95, stat.Empirical, col, nil)
		m := stat.Mean(col, nil)
		b.mean, b.lo, b.hi = append(b.mean, m), append(b.lo, lo), append(b.hi, hi)
		if yv[i] >= lo && yv[i] <= hi {
			f.Coverage90 += 1 / float64(n)
		}
		f.TestRMSE += (m - yv[i]) * (m - yv[i]) / float64(n)
	}
	f.TestRMSE = math.Sqrt(f.TestRMSE)
	return b, nil
}

// panel draws the predictive means against the truth, with the 90 %
// intervals as vertical bars, rows sorted by the mean.
func panel(title string, b bands, y *tensor.Tensor) plot.Panel {
	order := make([]int, len(b.mean))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return int(math.Copysign(1, b.mean[i]-b.mean[j])) })
	x, m, lo, hi, obs := make([]float64, len(order)), make([]float64, len(order)), make([]float64, len(order)), make([]float64, len(order)), make([]float64, len(order))
	for r, i := range order {
		x[r], m[r], lo[r], hi[r], obs[r] = float64(r), b.mean[i], b.lo[i], b.hi[i], y.Values()[i]
	}
	return plot.Panel{Title: title, XLabel: "held-out row (by predictive mean)", YLabel: "standardised progression",
		Bands:  []plot.Band{{Name: "90 % interval", X: x, Lo: lo, Hi: hi}},
		Curves: []plot.Curve{{Name: "predictive mean", X: x, Y: m, Style: plot.Line}, {Name: "observed", X: x, Y: obs, Style: plot.Scatter}}}
}
