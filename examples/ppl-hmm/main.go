// Command ppl-hmm fits a hidden Markov model with Gaussian emissions to a
// series generated from known parameters, with the discrete states summed
// out by the forward algorithm of probabilistic/hmm, and decodes the
// states with the Viterbi algorithm (Rabiner 1989, "A tutorial on hidden
// Markov models and selected applications in speech recognition").
//
// Three states with means −2, 0 and 2.5, standard deviations 0.5, 0.7 and
// 0.6, and sticky transitions (0.9 to stay, 0.05 to each other state)
// generate -t observations. The parameters are fitted by maximum
// likelihood with Adam in unconstrained space: the initial distribution
// and each row of the transition matrix through softmax, the means as
// they are, the scales through exp. The means start at the quartiles of
// the data, ordered, so the fitted states carry the true states' labels;
// the accuracy is still taken under the best of the 3! relabellings. With
// -draws > 0, NUTS (probabilistic/inference) then samples the posterior
// under weakly informative priors (N(0, 3²) on the logits, N(0, 5²) on the
// means, N(0, 1) on the log scales), two chains started at the fit, and
// the Viterbi path uses the parameters at the posterior means of the
// unconstrained values (slow: minutes at the default -t). It prints the fitted against the true parameters, the
// log-likelihoods at both, and the share of time steps whose decoded state
// is the true one; it draws the series coloured by decoded state, and the
// posterior state probabilities p(zₜ = k | x) of forward-backward, to
// -out/hmm.png.
//
//	go run ./examples/ppl-hmm [-t 500] [-steps 400] [-lr 0.05] [-draws 0] [-seed 1] [-out out/ppl-hmm] [-json] [-quiet]
//
// -json prints {"viterbi_accuracy", "log_likelihood" (at the fitted
// parameters), "true_log_likelihood", "means", "scales", "transition",
// "seconds", "plot"}.
package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/hmm"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/tensor"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	T     int     `flag:"t" help:"length of the generated series"`
	Steps int     `flag:"steps" help:"Adam steps"`
	LR    float64 `flag:"lr" help:"Adam's learning rate"`
	Draws int     `flag:"draws" help:"NUTS draws (and as many warm-up iterations) after the fit; 0: none"`
}

// result is what -json prints.
type result struct {
	ViterbiAccuracy   float64     `json:"viterbi_accuracy"`
	LogLikelihood     float64     `json:"log_likelihood"`
	TrueLogLikelihood float64     `json:"true_log_likelihood"`
	Means             []float64   `json:"means"`
	Scales            []float64   `json:"scales"`
	Transition        [][]float64 `json:"transition"`
	RhatMax           float64     `json:"rhat_max,omitempty"` // with -draws
	Seconds           float64     `json:"seconds"`
	Plot              string      `json:"plot"`
}

// params is one set of HMM parameters in the constrained space.
type params struct {
	init, means, scales []float64
	trans               [][]float64
}

var truth = params{
	init:   []float64{1.0 / 3, 1.0 / 3, 1.0 / 3},
	means:  []float64{-2, 0, 2.5},
	scales: []float64{0.5, 0.7, 0.6},
	trans:  [][]float64{{0.9, 0.05, 0.05}, {0.05, 0.9, 0.05}, {0.05, 0.05, 0.9}},
}

const k = 3

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "ppl-hmm"}, config{T: 500, Steps: 400, LR: 0.05}, run)
}

func run(cfg config, env *cli.Env) (res result, err error) {
	if cfg.T < 10 || cfg.Steps < 1 || !(cfg.LR > 0) || cfg.Draws < 0 {
		return res, cli.BadFlagf("need -t ≥ 10, -steps ≥ 1, -lr > 0, -draws ≥ 0, got %d, %d, %g, %d", cfg.T, cfg.Steps, cfg.LR, cfg.Draws)
	}
	start := time.Now()
	states, x := generate(tensor.NewRNG(env.Seed), cfg.T)
	env.Printf("%d observations from a 3-state HMM with Gaussian emissions\n", cfg.T)
	fit, err := fitAdam(env, x, cfg)
	if err != nil {
		return res, err
	}
	if cfg.Draws > 0 {
		if fit, res.RhatMax, err = sample(env, x, fit, cfg.Draws); err != nil {
			return res, err
		}
	}
	res.Seconds = time.Since(start).Seconds()
	g := graph.New()
	logInit, logTrans, emit := nodes(g, fit, x)
	path, _ := hmm.Viterbi(logInit, logTrans, emit)
	res.ViterbiAccuracy = bestAccuracy(states, path)
	res.LogLikelihood = hmm.LogLikelihood(logInit, logTrans, emit).Item()
	ti, tt, te := nodes(g, truth, x)
	res.TrueLogLikelihood = hmm.LogLikelihood(ti, tt, te).Item()
	res.Means, res.Scales, res.Transition = fit.means, fit.scales, fit.trans
	env.Printf("%-6s %14s %14s\n", "state", "mean (true)", "scale (true)")
	for j := range k {
		env.Printf("%-6d %6.3f (%4.1f) %6.3f (%4.1f)   transitions %s\n", j, fit.means[j], truth.means[j], fit.scales[j], truth.scales[j], fmtRow(fit.trans[j]))
	}
	env.Printf("log-likelihood %.2f at the fit, %.2f at the true parameters\n", res.LogLikelihood, res.TrueLogLikelihood)
	env.Printf("Viterbi path: %.1f %% of the states right\n", 100*res.ViterbiAccuracy)
	marg := hmm.Marginals(logInit, logTrans, emit).Value().Values()
	res.Plot, err = env.WritePNG("hmm.png", panels(x, path, marg)...)
	return res, err
}

// generate draws a state path and its observations from truth.
func generate(rng *tensor.RNG, t int) ([]int, []float64) {
	states, x := make([]int, t), make([]float64, t)
	draw := func(p []float64) int {
		u, acc := rng.Float64(), 0.0
		for j, pj := range p {
			if acc += pj; u < acc {
				return j
			}
		}
		return len(p) - 1
	}
	for s := range t {
		if s == 0 {
			states[s] = draw(truth.init)
		} else {
			states[s] = draw(truth.trans[states[s-1]])
		}
		x[s] = truth.means[states[s]] + truth.scales[states[s]]*rng.NormFloat64()
	}
	return states, x
}

// nodes returns the model's log initial probabilities, log transition
// matrix and (T, K) emission log-likelihoods as constants of g.
func nodes(g *graph.Graph, p params, x []float64) (logInit, logTrans, emit *graph.Node) {
	c := func(v []float64, shape ...int) *graph.Node { return g.Const(tensor.FromFloat64s(v, shape...)) }
	logInit = graph.Log(c(p.init, k))
	logTrans = graph.Log(c(slices.Concat(p.trans...), k, k))
	emit = hmm.GaussianEmissions(c(x, len(x)), c(p.means, k), c(p.scales, k))
	return
}

// logLikelihood is the HMM's log-likelihood in the unconstrained
// parameters: initial logits (K), transition logits (K, K), means (K) and
// log scales (K).
func logLikelihood(g *graph.Graph, x *graph.Node, initLogits, transLogits, means, logScales *graph.Node) *graph.Node {
	emit := hmm.GaussianEmissions(x, means, graph.Exp(logScales))
	return hmm.LogLikelihood(graph.LogSoftmax(initLogits, -1), graph.LogSoftmax(transLogits, -1), emit)
}

// fitAdam maximises the log-likelihood by Adam from the quartiles of the
// data, stopping after a step when the run is cancelled.
func fitAdam(env *cli.Env, xs []float64, cfg config) (params, error) {
	q := slices.Clone(xs)
	slices.Sort(q)
	means := make([]float64, k)
	for j := range means {
		means[j] = q[(2*j+1)*len(q)/(2*k)]
	}
	sd := math.Sqrt(variance(xs))
	theta := []*tensor.Tensor{
		tensor.Zeros(tensor.Float64, k),
		tensor.FromFloat64s([]float64{2, 0, 0, 0, 2, 0, 0, 0, 2}, k, k),
		tensor.FromFloat64s(means, k),
		tensor.Full(tensor.Float64, math.Log(sd/k), k),
	}
	opt := optim.NewAdam(theta, optim.AdamOptions{LR: cfg.LR})
	g := graph.New()
	for step := range cfg.Steps {
		if err := env.Context().Err(); err != nil {
			return params{}, fmt.Errorf("ppl-hmm: fit stopped after %d steps: %w", step, err)
		}
		g.Reset()
		vars := make([]*graph.Node, len(theta))
		for i, t := range theta {
			vars[i] = g.VarOf(t)
		}
		ll := logLikelihood(g, g.Const(tensor.FromFloat64s(xs, len(xs))), vars[0], vars[1], vars[2], vars[3])
		grads := autodiff.Grad(graph.Neg(ll), vars...)
		gt := make([]*tensor.Tensor, len(grads))
		for i, gr := range grads {
			gt[i] = gr.Value()
		}
		if err := opt.Step(gt); err != nil {
			return params{}, err
		}
		if step%100 == 0 || step == cfg.Steps-1 {
			env.Printf("step %4d: log-likelihood %.3f\n", step, ll.Item())
		}
	}
	return constrain(theta[0].Values(), theta[1].Values(), theta[2].Values(), theta[3].Values()), nil
}

// constrain maps unconstrained values to params.
func constrain(initLogits, transLogits, means, logScales []float64) params {
	p := params{init: softmax(initLogits), means: means, scales: make([]float64, k), trans: make([][]float64, k)}
	for j := range k {
		p.scales[j] = math.Exp(logScales[j])
		p.trans[j] = softmax(transLogits[j*k : (j+1)*k])
	}
	return p
}

// sample runs two NUTS chains on the unconstrained parameters, started at
// the fit, and returns the parameters at the posterior means and the
// largest R̂.
func sample(env *cli.Env, xs []float64, fit params, draws int) (params, float64, error) {
	logit := func(p []float64) []float64 {
		out := make([]float64, len(p))
		for i, v := range p {
			out[i] = math.Log(v)
		}
		return out
	}
	logScales := make([]float64, k)
	for j, s := range fit.scales {
		logScales[j] = math.Log(s)
	}
	m := inference.Model{
		Params: []inference.Param{
			{Name: "init", Shape: []int{k}, Init: logit(fit.init)},
			{Name: "trans", Shape: []int{k, k}, Init: logit(slices.Concat(fit.trans...))},
			{Name: "means", Shape: []int{k}, Init: fit.means},
			{Name: "log_scales", Shape: []int{k}, Init: logScales},
		},
		LogDensity: func(g *graph.Graph, q map[string]*graph.Node) *graph.Node {
			x := g.Const(tensor.FromFloat64s(xs, len(xs)))
			ll := logLikelihood(g, x, q["init"], q["trans"], q["means"], q["log_scales"])
			// Weakly informative priors keep the posterior proper: logits are
			// defined up to a constant per row (N(0, 3²) on each), and the
			// likelihood grows without bound as a scale shrinks onto one
			// observation (N(0, 1) on the log scales, N(0, 5²) on the means).
			lp := ll
			for i, n := range []string{"init", "trans", "means", "log_scales"} {
				sd := []float64{3, 3, 5, 1}[i]
				lp = graph.Add(lp, graph.MulScalar(graph.Sum(graph.Square(q[n]), nil, false), -0.5/(sd*sd)))
			}
			return lp
		},
	}
	env.Printf("NUTS: 2 chains × (%d warm-up + %d draws)\n", draws, draws)
	r, err := inference.NUTS(env.Context(), m, inference.NUTSOptions{Chains: 2, Warmup: draws, Draws: draws, Seed: env.Seed})
	if err != nil {
		return fit, 0, err
	}
	mean := func(name string) float64 {
		s, n := 0.0, 0
		for _, ch := range r.Column(name) {
			for _, v := range ch {
				s += v
				n++
			}
		}
		return s / float64(n)
	}
	rhat := 0.0
	for _, name := range r.Names {
		rhat = max(rhat, inference.Rhat(r.Column(name)))
	}
	col := func(prefix string, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = mean(r.Names[slices.Index(r.Names, fmt.Sprintf("%s[%d]", prefix, i))])
		}
		return out
	}
	post := constrain(col("init", k), col("trans", k*k), col("means", k), col("log_scales", k))
	env.Printf("R̂ max %.3f\n", rhat)
	return post, rhat, nil
}

// bestAccuracy returns the share of steps where path equals states under
// the relabelling of path's states that matches best.
func bestAccuracy(states, path []int) float64 {
	best := 0
	for _, perm := range [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
		hits := 0
		for i, z := range path {
			if perm[z] == states[i] {
				hits++
			}
		}
		best = max(best, hits)
	}
	return float64(best) / float64(len(states))
}

// panels draws the series coloured by decoded state and the posterior
// state probabilities.
func panels(x []float64, path []int, marg []float64) []plot.Panel {
	series := plot.Panel{Title: "series coloured by Viterbi state", XLabel: "t", YLabel: "x"}
	probs := plot.Panel{Title: "p(state | all data), forward-backward", XLabel: "t", YLabel: "probability"}
	for j := range k {
		var ts, ys []float64
		for t, z := range path {
			if z == j {
				ts, ys = append(ts, float64(t)), append(ys, x[t])
			}
		}
		name := fmt.Sprintf("state %d", j)
		series.Curves = append(series.Curves, plot.Curve{Name: name, X: ts, Y: ys, Style: plot.Scatter})
		p := make([]float64, len(x))
		for t := range p {
			p[t] = marg[t*k+j]
		}
		probs.Curves = append(probs.Curves, plot.Curve{Name: name, Y: p, Style: plot.Line})
	}
	return []plot.Panel{series, probs}
}

func softmax(l []float64) []float64 {
	m := slices.Max(l)
	out := make([]float64, len(l))
	s := 0.0
	for i, v := range l {
		out[i] = math.Exp(v - m)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

func variance(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m += v / float64(len(x))
	}
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x)-1)
}

func fmtRow(r []float64) string {
	s := ""
	for _, v := range r {
		s += fmt.Sprintf(" %.3f", v)
	}
	return s
}
