// Command flow trains a RealNVP normalizing flow (Dinh et al. 2017) by
// maximum likelihood on the two-moons toy set: eight affine coupling
// layers with alternating masks (probabilistic.AffineCoupling) on a
// standard normal base, as a probabilistic.Transformed distribution, with
// Adam on mini-batches drawn with replacement, by train.Trainer (a progress
// line and a JSON-lines log record every 100 steps). It prints the mean negative log-likelihood per
// point on held-out moons against the standard normal's, and draws a PNG
// with the data, the flow's samples and its density (flow.png in -out,
// beside the log flow.jsonl).
//
// With -data mnist it trains a RealNVP on dequantised MNIST instead (see
// mnist.go): six checkerboard couplings of hidden width 256 in logit
// space, -epochs passes over the embedded 8,000 training digits; it prints
// the test bits per pixel against independent per-pixel Gaussians in
// logit space and the uniform model's 8, and writes a grid of 64 samples
// (flow-mnist.png, beside the log flow-mnist.jsonl).
//
//	go run ./examples/flow [-steps 3000] [-layers 8] [-hidden 64] [-seed 1] [-out out/flow] [-json] [-quiet]
//	go run ./examples/flow -data mnist [-epochs 8] [-layers 6] [-hidden 256] [-train-n 0] [-test-n 0] [-out out/flow]
package main

import (
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// config holds the settings of both modes; the tagged fields are the
// flags. -seed draws the data, the initialisation and the batches.
type config struct {
	Steps        int `flag:"steps" help:"Adam steps"`
	Layers       int `flag:"layers" help:"coupling layers (-data mnist: 6 unless given)"`
	Hidden       int `flag:"hidden" help:"hidden width of each conditioner (-data mnist: 256 unless given)"`
	Epochs       int `flag:"epochs" help:"passes over the MNIST training split (-data mnist)"`
	mnist.Subset     // -train-n, -test-n (-data mnist)
	Batch        int
	LR           float64
}

type result struct {
	TestNLL     float64   `json:"test_nll"`      // nats per point, the flow
	BaseNLL     float64   `json:"base_test_nll"` // the standard normal on the same points
	Curve       []float64 `json:"train_nll_per_100_steps"`
	SampleMean  []float64 `json:"sample_mean"`
	DataMean    []float64 `json:"data_mean"`
	SampleStd   []float64 `json:"sample_std"`
	DataStd     []float64 `json:"data_std"`
	Plot        string    `json:"plot,omitempty"`
	Log         string    `json:"log,omitempty"` // the JSON-lines training log
	Parameters  int       `json:"parameters"`
	SecondsStep float64   `json:"-"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	p := cli.Program{Name: "flow", Data: "moons", DataUsage: "data set: moons or mnist"}
	defaults := config{Steps: 3000, Layers: 8, Hidden: 64, Epochs: 8, Batch: 256, LR: 1e-3}
	return cli.Configured(p, defaults, func(c config, env *cli.Env) (any, error) {
		switch env.Data {
		case "moons":
			return run(c, env)
		case "mnist":
			return runMNIST(cli.Preset(env, c, mnistSizes), env)
		}
		return nil, cli.BadFlagf("-data %q: want moons or mnist", env.Data)
	})
}

// mnistSizes are the sizes of -data mnist, where -layers and -hidden are
// not given.
func mnistSizes(c config) config {
	c.Layers, c.Hidden, c.Batch = 6, 256, 64
	return c
}

// moons returns n points of scikit-learn's make_moons (two interleaved
// half circles, Gaussian noise of sd 0.05), shifted and scaled to roughly
// zero mean and unit spread: x ← (x − (0.5, 0.25))/(0.87, 0.5).
func moons(rng *tensor.RNG, n int) *tensor.Tensor {
	v := make([]float64, 0, 2*n)
	for i := range n {
		t := math.Pi * rng.Float64()
		x, y := math.Cos(t), math.Sin(t)
		if i%2 == 1 {
			x, y = 1-x, 0.5-y
		}
		x += 0.05 * rng.NormFloat64()
		y += 0.05 * rng.NormFloat64()
		v = append(v, (x-0.5)/0.87, (y-0.25)/0.5)
	}
	return tensor.FromFloat64s(v, n, 2)
}

// flow holds the coupling layers; dist builds the distribution on a graph.
type flow struct {
	layers []*probabilistic.AffineCoupling
}

func newFlow(rng *tensor.RNG, layers, hidden int) *flow {
	f := &flow{}
	for k := range layers {
		mask := []float64{1, 0}
		if k%2 == 1 {
			mask = []float64{0, 1}
		}
		f.layers = append(f.layers, probabilistic.NewAffineCoupling(rng, mask, hidden, tensor.Float64))
	}
	return f
}

// Params lists the coupling layers' parameters under "coupling0.", ….
func (f *flow) Params() []nn.NamedParam {
	var ps []nn.NamedParam
	for k, l := range f.layers {
		ps = append(ps, nn.Prefix(fmt.Sprintf("coupling%d", k), l.Params())...)
	}
	return ps
}

// SetTraining does nothing: the flow has no train/eval differences.
func (f *flow) SetTraining(bool) {}

func (f *flow) dist(g *graph.Graph) *probabilistic.Transformed {
	base := probabilistic.NewMVNDiag(g.Const(tensor.Zeros(tensor.Float64, 2)), g.Const(tensor.Ones(tensor.Float64, 2)))
	bs := make([]probabilistic.Bijector, len(f.layers))
	for i, l := range f.layers {
		bs[i] = l
	}
	return probabilistic.NewTransformed(base, bs...)
}

// nll is the mean negative log-likelihood of x under d.
func nll(d probabilistic.Distribution, x *graph.Node) *graph.Node {
	return graph.Neg(graph.Mean(d.LogProb(x), nil, false))
}

func run(cfg config, env *cli.Env) (res result, err error) {
	if cfg.Steps < 1 || cfg.Layers < 2 || cfg.Hidden < 1 || cfg.Batch < 1 {
		return res, cli.BadFlagf("need -steps ≥ 1, -layers ≥ 2, -hidden ≥ 1, got %d, %d, %d", cfg.Steps, cfg.Layers, cfg.Hidden)
	}
	rng := tensor.NewRNG(env.Seed)
	xTrain, test := moons(rng, 4096), moons(rng, 2048)
	f := newFlow(rng, cfg.Layers, cfg.Hidden)
	ps := f.Params()
	for _, p := range ps {
		res.Parameters += p.Value.Size()
	}
	opt := optim.NewAdam(nn.Values(ps), optim.AdamOptions{LR: cfg.LR})
	// Each batch draws its points with replacement from the training set;
	// an "epoch" of the Trainer is 100 such steps, so its log and
	// progress line come every 100 steps.
	const perEpoch = 100
	n := xTrain.Shape()[0]
	gather := data.NewGatherer(xTrain)
	loader := data.NewLoader(data.TensorDataset{X: xTrain}, data.LoaderOptions{
		BatchSize: cfg.Batch,
		Sampler:   data.Weighted{Weights: slices.Repeat([]float64{1}, n), Count: perEpoch * cfg.Batch, Seed: env.Seed},
		Collate: func(_ []data.Example, idx []int) data.Batch {
			return data.Batch{X: gather.Gather(idx), Index: idx}
		}})
	loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node { return nll(f.dist(g), g.Const(b.X)) }
	tc := train.Options{Epochs: (cfg.Steps + perEpoch - 1) / perEpoch, MaxSteps: cfg.Steps, Seed: env.Seed}
	hist, logPath, err := fitLogged(env, "flow.jsonl", f, opt, loss, loader, tc)
	res.Log = logPath
	if err != nil {
		return res, err
	}
	// The training curve: the mean loss of each full window of 100 steps.
	for lo := 0; lo+perEpoch <= len(hist.StepLoss); lo += perEpoch {
		w := 0.0
		for _, l := range hist.StepLoss[lo : lo+perEpoch] {
			w += l
		}
		res.Curve = append(res.Curve, w/perEpoch)
	}
	g := graph.New()
	g.Reset()
	tx := g.Const(test)
	res.TestNLL = nll(f.dist(g), tx).Item()
	base := probabilistic.NewMVNDiag(g.Const(tensor.Zeros(tensor.Float64, 2)), g.Const(tensor.Ones(tensor.Float64, 2)))
	res.BaseNLL = nll(base, tx).Item()
	samples := f.dist(g).Sample(rng, 2048)
	res.SampleMean, res.SampleStd = moments(samples)
	res.DataMean, res.DataStd = moments(test)
	env.Printf("held-out NLL %.4f nats per point (standard normal %.4f); %d parameters\n", res.TestNLL, res.BaseNLL, res.Parameters)
	env.Printf("samples: mean %.3f, sd %.3f; data: mean %.3f, sd %.3f\n", res.SampleMean, res.SampleStd, res.DataMean, res.DataStd)
	res.Plot = env.Path("flow.png")
	if err := draw3(res.Plot, f, test, samples); err != nil {
		return res, err
	}
	env.Println("plot:", res.Plot)
	return res, nil
}

func moments(x *tensor.Tensor) (mean, sd []float64) {
	n := x.Shape()[0]
	v := x.Values()
	mean, sd = make([]float64, 2), make([]float64, 2)
	for i := range n {
		for j := range 2 {
			mean[j] += v[2*i+j] / float64(n)
		}
	}
	for i := range n {
		for j := range 2 {
			d := v[2*i+j] - mean[j]
			sd[j] += d * d / float64(n-1)
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j])
	}
	return mean, sd
}

// draw3 draws the held-out data, the flow's samples and its density on
// [−3, 3]².
func draw3(path string, f *flow, data, samples *tensor.Tensor) error {
	const n = 120
	d := &plot.Map{X: make([]float64, n), Y: make([]float64, n), Z: make([][]float64, n)}
	for i := range n {
		d.X[i] = -3 + 6*(float64(i)+0.5)/n
		d.Y[i] = d.X[i]
	}
	pts := make([]float64, 0, 2*n*n)
	for r := range n {
		for c := range n {
			pts = append(pts, d.X[c], d.Y[r])
		}
	}
	g := graph.New()
	lp := f.dist(g).LogProb(g.Const(tensor.FromFloat64s(pts, n*n, 2))).Value().Values()
	for r := range n {
		d.Z[r] = make([]float64, n)
		for c := range n {
			d.Z[r][c] = math.Exp(lp[r*n+c])
		}
	}
	points := func(x *tensor.Tensor) []plot.Curve {
		return plot.ByLabel(x, make([]int, x.Shape()[0]), []string{""})
	}
	return plot.WritePNG(path,
		plot.Panel{Title: "held-out two moons", Curves: points(data)},
		plot.Panel{Title: "RealNVP samples", Curves: points(samples)},
		plot.Panel{Title: "RealNVP density", Map: d})
}

// fitLogged trains f as tc says, with progress lines to env.Log and a
// JSON-lines record of every epoch in the file name in -out (for gradus
// plot); it returns the history and that file's path.
func fitLogged(env *cli.Env, name string, f nn.Module, opt optim.Optimizer, loss train.LossFunc, loader *data.Loader, tc train.Options) (train.History, string, error) {
	lf, err := os.Create(env.Path(name))
	if err != nil {
		return train.History{}, "", err
	}
	defer lf.Close()
	tc.Log, tc.Progress = lf, env.Log
	hist, err := train.New(f, opt, loss, loader, tc).Fit(env.Context())
	return hist, lf.Name(), err
}
