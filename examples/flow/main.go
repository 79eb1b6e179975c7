// Command flow trains a RealNVP normalizing flow (Dinh et al. 2017) by
// maximum likelihood on the two-moons toy set: eight affine coupling
// layers with alternating masks (probabilistic.AffineCoupling) on a
// standard normal base, as a probabilistic.Transformed distribution, with
// Adam on mini-batches drawn with replacement, by train.Trainer (a progress
// line and a JSON-lines log record every 100 steps). It prints the mean negative log-likelihood per
// point on held-out moons against the standard normal's, and draws a PNG
// with the data, the flow's samples and its density.
//
// With -data mnist it trains a RealNVP on dequantised MNIST instead (see
// mnist.go): six checkerboard couplings of hidden width 256 in logit
// space, -epochs passes over the embedded 8,000 training digits; it prints
// the test bits per pixel against independent per-pixel Gaussians in
// logit space and the uniform model's 8, and writes a grid of 64 samples.
//
//	go run ./examples/flow [-steps 3000] [-layers 8] [-hidden 64] [-seed 1] [-out out/flow.png] [-json]
//	go run ./examples/flow -data mnist [-epochs 8] [-layers 6] [-hidden 256] [-train 0] [-out out/flow-mnist.png]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

type config struct {
	Steps, Layers, Hidden, Batch int
	LR                           float64
	Seed                         uint64
	Out                          string
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

func main() {
	cfg := config{Batch: 256, LR: 1e-3}
	flag.IntVar(&cfg.Steps, "steps", 3000, "Adam steps")
	flag.IntVar(&cfg.Layers, "layers", 8, "coupling layers (-data mnist: 6 unless given)")
	flag.IntVar(&cfg.Hidden, "hidden", 64, "hidden width of each conditioner (-data mnist: 256 unless given)")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of the data, initialisation and batches")
	flag.StringVar(&cfg.Out, "out", "out/flow.png", "PNG of data, samples and density (empty: none)")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	set := flag.String("data", "moons", "data set: moons or mnist")
	mc := mnistConfig{Batch: 64, LR: 1e-3}
	flag.IntVar(&mc.Epochs, "epochs", 8, "passes over the MNIST training split (-data mnist)")
	flag.IntVar(&mc.Train, "train", 0, "MNIST training images used (0: all 8,000)")
	flag.Parse()
	if *set == "mnist" {
		mc.Seed, mc.Out = cfg.Seed, cfg.Out
		given := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
		if !given["out"] {
			mc.Out = "out/flow-mnist.png"
		}
		mc.Layers, mc.Hidden = 6, 256
		if given["layers"] {
			mc.Layers = cfg.Layers
		}
		if given["hidden"] {
			mc.Hidden = cfg.Hidden
		}
		res, err := runMNIST(mc, !*asJSON)
		if err != nil {
			fmt.Fprintln(os.Stderr, "flow:", err)
			os.Exit(1)
		}
		if *asJSON {
			json.NewEncoder(os.Stdout).Encode(res)
		}
		return
	}
	if *set != "moons" {
		fmt.Fprintf(os.Stderr, "flow: -data %q: want moons or mnist\n", *set)
		os.Exit(2)
	}
	res, err := run(cfg, !*asJSON)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flow:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
	}
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

func run(cfg config, verbose bool) (res result, err error) {
	if cfg.Steps < 1 || cfg.Layers < 2 || cfg.Hidden < 1 || cfg.Batch < 1 {
		return res, fmt.Errorf("need -steps ≥ 1, -layers ≥ 2, -hidden ≥ 1, got %d, %d, %d", cfg.Steps, cfg.Layers, cfg.Hidden)
	}
	rng := tensor.NewRNG(cfg.Seed)
	xTrain, test := moons(rng, 4096), moons(rng, 2048)
	f := newFlow(rng, cfg.Layers, cfg.Hidden)
	ps := f.Params()
	for _, p := range ps {
		res.Parameters += p.Value.Size()
	}
	opt := optim.NewAdam(nn.Values(ps), optim.AdamConfig{LR: cfg.LR})
	// Each batch draws its points with replacement from the training set;
	// an "epoch" of the Trainer is 100 such steps, so its log and
	// progress line come every 100 steps.
	const perEpoch = 100
	n := xTrain.Shape()[0]
	gather := data.NewGatherer(xTrain)
	loader := data.NewLoader(data.TensorDataset{X: xTrain}, data.LoaderOptions{
		BatchSize: cfg.Batch,
		Sampler:   data.Weighted{Weights: slices.Repeat([]float64{1}, n), Count: perEpoch * cfg.Batch, Seed: cfg.Seed},
		Collate: func(_ []data.Example, idx []int) data.Batch {
			return data.Batch{X: gather.Gather(idx), Index: idx}
		}})
	loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node { return nll(f.dist(g), g.Const(b.X)) }
	tc := train.Config{Epochs: (cfg.Steps + perEpoch - 1) / perEpoch, MaxSteps: cfg.Steps, Seed: cfg.Seed}
	if cfg.Out != "" {
		lf, err := createLog(cfg.Out)
		if err != nil {
			return res, err
		}
		defer lf.Close()
		res.Log, tc.Log = lf.Name(), lf
	}
	if verbose {
		tc.Progress = os.Stdout
	}
	hist, err := train.New(f, opt, loss, loader, tc).Fit(context.Background())
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
	if verbose {
		fmt.Printf("held-out NLL %.4f nats per point (standard normal %.4f); %d parameters\n", res.TestNLL, res.BaseNLL, res.Parameters)
		fmt.Printf("samples: mean %.3f, sd %.3f; data: mean %.3f, sd %.3f\n", res.SampleMean, res.SampleStd, res.DataMean, res.DataStd)
	}
	if cfg.Out == "" {
		return res, nil
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Out), 0o755); err != nil {
		return res, err
	}
	if err := draw3(cfg.Out, f, test, samples); err != nil {
		return res, err
	}
	res.Plot = cfg.Out
	if verbose {
		fmt.Println("plot:", cfg.Out)
	}
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

// density is the flow's density on a grid, for the heat map.
type density struct {
	n      int
	lo, hi float64
	p      []float64
}

func (d density) Dims() (c, r int)   { return d.n, d.n }
func (d density) Z(c, r int) float64 { return d.p[r*d.n+c] }
func (d density) X(c int) float64    { return d.lo + (d.hi-d.lo)*(float64(c)+0.5)/float64(d.n) }
func (d density) Y(r int) float64    { return d.lo + (d.hi-d.lo)*(float64(r)+0.5)/float64(d.n) }

func scatter(title string, x *tensor.Tensor, c color.Color) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	v := x.Values()
	pts := make(plotter.XYs, x.Shape()[0])
	for i := range pts {
		pts[i] = plotter.XY{X: v[2*i], Y: v[2*i+1]}
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Shape: draw.CircleGlyph{}, Radius: vg.Points(1)}
	p.Add(s)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -3, 3, -3, 3
	return p, nil
}

func draw3(path string, f *flow, data, samples *tensor.Tensor) error {
	pd, err := scatter("held-out two moons", data, color.RGBA{R: 31, G: 119, B: 180, A: 255})
	if err != nil {
		return err
	}
	ps, err := scatter("RealNVP samples", samples, color.RGBA{R: 214, G: 39, B: 40, A: 255})
	if err != nil {
		return err
	}
	const n = 120
	d := density{n: n, lo: -3, hi: 3}
	pts := make([]float64, 0, 2*n*n)
	for r := range n {
		for c := range n {
			pts = append(pts, d.X(c), d.Y(r))
		}
	}
	g := graph.New()
	lp := f.dist(g).LogProb(g.Const(tensor.FromFloat64s(pts, n*n, 2))).Value().Values()
	d.p = make([]float64, len(lp))
	for i, v := range lp {
		d.p[i] = math.Exp(v)
	}
	ph := plot.New()
	ph.Title.Text = "RealNVP density"
	ph.Add(plotter.NewHeatMap(d, palette.Heat(64, 1)))
	img := vgimg.New(15*vg.Inch, 5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 3, PadX: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{pd, ps, ph}}, tiles, dc)
	pd.Draw(canvases[0][0])
	ps.Draw(canvases[0][1])
	ph.Draw(canvases[0][2])
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// createLog creates the JSON-lines training log beside the PNG out (the
// same name with .jsonl), for gradus plot, and out's directory with it.
func createLog(out string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	return os.Create(strings.TrimSuffix(out, filepath.Ext(out)) + ".jsonl")
}
