// Command dkl compares deep kernel learning (Wilson, Hu, Salakhutdinov and
// Xing 2016, "Deep kernel learning") with the network it is built on and
// with a plain GP, on scikit-learn's handwritten digits (1,797 8×8 images,
// ten classes, shipped with Gradus), split 80/20 (-seed) and standardised
// with the training rows' statistics.
//
//   - net: an MLP 64 → -hidden → -hidden → -features → 10 with a softmax
//     head, trained by Adam on the cross-entropy (-epochs);
//   - dkl: the same network without its head, as the feature extractor of
//     a deep kernel c·RBF(g(x), g(x′)), starting from the trained weights
//     and trained end to end with the kernel's hyperparameters on the exact
//     GP marginal likelihood (-steps Adam steps);
//   - gp: the same GP with c·RBF on the raw (standardised) pixels, its
//     hyperparameters fitted by L-BFGS (-gp-iters).
//
// Both GPs classify by exact GP regression on Dirichlet-transformed labels
// (Milios et al. 2018, "Dirichlet-based Gaussian processes for large-scale
// calibrated classification"; gp.FitDirichletClassifier): one latent
// function per class sharing the kernel, exact inference with one
// Cholesky factor per step, and class probabilities from Monte Carlo draws
// of the softmax of the latent functions. It is the exact-inference route
// (GPyTorch's examples take it too), chosen over a variational softmax
// likelihood, which Gradus does not have, and over ten one-vs-rest
// Bernoulli SVGPs, which would not share one posterior. -alpha-eps sets
// the concentration αε of the classes a digit is not (0.01, the paper's
// choice, by default); smaller values make both GPs more confident.
//
// The program prints each model's held-out accuracy, negative log
// predictive density (the log loss) and expected calibration error (15
// bins; Guo et al. 2017), and draws their reliability diagrams to
// -out/reliability.png.
//
//	go run ./examples/dkl [-hidden 128] [-features 16] [-epochs 40] [-steps 60] [-gp-iters 30] [-alpha-eps 0.01] [-train-n 0] [-seed 1] [-out out/dkl] [-json] [-quiet]
package main

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	Hidden   int     `flag:"hidden" help:"width of the network's two hidden layers"`
	Features int     `flag:"features" help:"width of the feature layer the kernel sees"`
	Epochs   int     `flag:"epochs" help:"training epochs of the network"`
	LR       float64 `flag:"lr" help:"Adam's learning rate for the network"`
	Steps    int     `flag:"steps" help:"Adam steps of deep kernel learning"`
	DKLLR    float64 `flag:"dkl-lr" help:"Adam's learning rate for deep kernel learning"`
	GPIters  int     `flag:"gp-iters" help:"L-BFGS iterations of the plain GP"`
	TrainN   int     `flag:"train-n" help:"use only this many training rows (0: all)"`
	AlphaEps float64 `flag:"alpha-eps" help:"Dirichlet concentration of the classes a digit is not (smaller: more confident)"`
}

// result is what -json prints.
type result struct {
	DKLAccuracy float64 `json:"dkl_accuracy"`
	NetAccuracy float64 `json:"net_accuracy"`
	GPAccuracy  float64 `json:"gp_accuracy"`
	DKLNLPD     float64 `json:"dkl_nlpd"`
	NetNLPD     float64 `json:"net_nlpd"`
	GPNLPD      float64 `json:"gp_nlpd"`
	DKLECE      float64 `json:"dkl_ece"`
	NetECE      float64 `json:"net_ece"`
	GPECE       float64 `json:"gp_ece"`
	NetSeconds  float64 `json:"net_seconds"`
	DKLSeconds  float64 `json:"dkl_seconds"`
	GPSeconds   float64 `json:"gp_seconds"`
	Train       int     `json:"n_train"`
	Test        int     `json:"n_test"`
	Plot        string  `json:"plot"`
}

const (
	classes = 10
	eceBins = 15
)

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "dkl"},
		config{Hidden: 128, Features: 16, Epochs: 40, LR: 0.003, Steps: 60, DKLLR: 0.01, GPIters: 30, AlphaEps: 0.01}, run)
}

// scores is one model's held-out probabilities and figures.
type scores struct {
	name                string
	proba               *tensor.Tensor
	accuracy, nlpd, ece float64
}

func run(c config, env *cli.Env) (res result, err error) {
	if c.Hidden < 1 || c.Features < 1 || c.Epochs < 1 || c.Steps < 0 || c.GPIters < 0 || c.TrainN < 0 || !(c.LR > 0) || !(c.DKLLR > 0) || !(c.AlphaEps > 0) {
		return res, cli.BadFlagf("need -hidden, -features and -epochs ≥ 1, -steps, -gp-iters and -train-n ≥ 0, -lr, -dkl-lr and -alpha-eps > 0")
	}
	x, labels, err := data.Classes("sklearn/digits.csv", "target")
	if err != nil {
		return res, err
	}
	x = x.Cast(tensor.Float32) // well conditioned: the Dirichlet noise keeps K + σ²I far from singular
	trainIdx, testIdx := data.TrainTestSplit(len(labels), 0.2, env.Seed)
	if c.TrainN > 0 && c.TrainN < len(trainIdx) {
		trainIdx = trainIdx[:c.TrainN]
	}
	xTr, lTr := tensor.IndexSelect(x, 0, trainIdx), data.GatherLabels(nil, labels, trainIdx)
	xTe, lTe := tensor.IndexSelect(x, 0, testIdx), data.GatherLabels(nil, labels, testIdx)
	data.Standardise(xTr).Apply(xTe)
	res.Train, res.Test = len(lTr), len(lTe)

	// The network.
	rng := tensor.NewRNG(env.Seed)
	body := nn.NewSequential(
		nn.NewLinear(rng, x.Shape()[1], c.Hidden, true, tensor.Float32), nn.ReLU{},
		nn.NewLinear(rng, c.Hidden, c.Hidden, true, tensor.Float32), nn.ReLU{},
		nn.NewLinear(rng, c.Hidden, c.Features, true, tensor.Float32))
	net := nn.NewSequential(body, nn.ReLU{}, nn.NewLinear(rng, c.Features, classes, true, tensor.Float32))
	forward := func(g *graph.Graph, xb *tensor.Tensor) *graph.Node { return net.Forward(g.Const(xb)) }
	start := time.Now()
	if _, err := mnist.FitClassifier(env.Context(), net, forward, xTr, lTr, xTe, lTe,
		mnist.Config{Epochs: c.Epochs, Batch: 64, LR: c.LR, Seed: env.Seed, Progress: env.Log}); err != nil {
		return res, err
	}
	res.NetSeconds = time.Since(start).Seconds()
	_, netProba := train.Predict(xTe, 500, forward)
	netScores, err := score("net", netProba, lTe)
	if err != nil {
		return res, err
	}

	// Deep kernel learning from the trained feature layers, then the plain
	// GP on the pixels.
	ls := featureScale(body, xTr)
	dklKernel := kernel.NewScale(kernel.NewDeep(nn.NewSequential(body, nn.ReLU{}), kernel.NewRBF(ls)), 1)
	dklScores, err := fitGP(env, "dkl", c.AlphaEps, xTr, lTr, xTe, lTe, gp.DirichletOptions{Kernel: dklKernel, MaxIter: c.Steps, LR: c.DKLLR}, &res.DKLSeconds)
	if err != nil {
		return res, err
	}
	rbf := kernel.NewScale(kernel.NewRBF(math.Sqrt(float64(x.Shape()[1]))), 1)
	gpScores, err := fitGP(env, "gp", c.AlphaEps, xTr, lTr, xTe, lTe, gp.DirichletOptions{Kernel: rbf, Optimizer: "lbfgs", MaxIter: c.GPIters}, &res.GPSeconds)
	if err != nil {
		return res, err
	}

	res.NetAccuracy, res.NetNLPD, res.NetECE = netScores.accuracy, netScores.nlpd, netScores.ece
	res.DKLAccuracy, res.DKLNLPD, res.DKLECE = dklScores.accuracy, dklScores.nlpd, dklScores.ece
	res.GPAccuracy, res.GPNLPD, res.GPECE = gpScores.accuracy, gpScores.nlpd, gpScores.ece
	all := []scores{netScores, dklScores, gpScores}
	for _, s := range all {
		env.Printf("%-4s held-out accuracy %.4f, NLPD %.4f, ECE %.4f\n", s.name, s.accuracy, s.nlpd, s.ece)
	}
	env.Printf("seconds: net %.1f, dkl %.1f, gp %.1f (%d training and %d test digits)\n", res.NetSeconds, res.DKLSeconds, res.GPSeconds, res.Train, res.Test)
	res.Plot = env.Path("reliability.png")
	if err := plotReliability(res.Plot, all, lTe); err != nil {
		return res, err
	}
	env.Printf("wrote %s\n", res.Plot)
	return res, nil
}

// fitGP fits a Dirichlet GP classifier with opts (Seed and Progress set
// here), scores it on the test rows and stores the seconds taken, fit and
// prediction, in seconds. An L-BFGS fit out of iterations is kept.
func fitGP(env *cli.Env, name string, alphaEps float64, xTr *tensor.Tensor, lTr []int, xTe *tensor.Tensor, lTe []int, opts gp.DirichletOptions, seconds *float64) (scores, error) {
	start := time.Now()
	opts.Seed, opts.Progress = env.Seed, progress(env, name)
	opts.AlphaEpsilon = alphaEps
	m, err := gp.FitDirichletClassifier(env.Context(), xTr, lTr, opts)
	if err != nil && !errors.Is(err, tensor.ErrNotConverged) {
		return scores{}, fmt.Errorf("%s: %w", name, err)
	}
	proba, err := m.PredictProba(xTe)
	if err != nil {
		return scores{}, fmt.Errorf("%s: %w", name, err)
	}
	*seconds = time.Since(start).Seconds()
	return score(name, proba, lTe)
}

// score returns a model's held-out accuracy, log loss and ECE.
func score(name string, proba *tensor.Tensor, labels []int) (s scores, err error) {
	s.name, s.proba = name, proba
	if s.accuracy, err = metrics.Accuracy(tensor.ArgMax(proba, 1), labels); err != nil {
		return s, err
	}
	if s.nlpd, err = metrics.LogLoss(proba, labels); err != nil {
		return s, err
	}
	s.ece, err = metrics.ECE(proba, labels, eceBins)
	return s, err
}

// featureScale returns the root mean square distance between the
// (rectified) features of the training rows and their mean, a starting
// lengthscale of the same order as the distances the kernel will see.
func featureScale(body nn.Layer, x *tensor.Tensor) float64 {
	g := graph.New()
	f := graph.Relu(body.Forward(g.Const(x))).Value()
	v := tensor.Variance(f, []int{0}, false, 0).Values()
	s := 0.0
	for _, vi := range v {
		s += vi
	}
	return math.Max(math.Sqrt(s), 1e-3)
}

func progress(env *cli.Env, name string) func(gp.FitEvent) {
	return func(e gp.FitEvent) {
		if e.Iteration%10 == 0 {
			env.Printf("%s %v\n", name, e)
		}
	}
}

// plotReliability draws, for each model, the accuracy against the mean
// confidence of the rows in each confidence bin, with the diagonal of
// perfect calibration.
func plotReliability(path string, all []scores, labels []int) error {
	panel := plot.Panel{Title: "reliability on held-out digits", XLabel: "confidence", YLabel: "accuracy",
		Curves: []plot.Curve{{Name: "calibrated", X: []float64{0, 1}, Y: []float64{0, 1}, Style: plot.Line}}}
	for _, s := range all {
		conf, acc := make([]float64, eceBins), make([]float64, eceBins)
		count := make([]int, eceBins)
		pred := tensor.ArgMax(s.proba, 1)
		for i, p := range pred {
			top := s.proba.At(i, p)
			b := min(int(top*eceBins), eceBins-1)
			conf[b] += top
			if p == labels[i] {
				acc[b]++
			}
			count[b]++
		}
		var xs, ys []float64
		for b := range eceBins {
			if count[b] > 0 {
				xs, ys = append(xs, conf[b]/float64(count[b])), append(ys, acc[b]/float64(count[b]))
			}
		}
		panel.Curves = append(panel.Curves, plot.Curve{Name: fmt.Sprintf("%s (ECE %.3f)", s.name, s.ece), X: xs, Y: ys, Style: plot.LinePoints})
	}
	return plot.WritePNG(path, panel)
}
