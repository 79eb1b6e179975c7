package main

import (
	"math"

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

// The MNIST mode (-data mnist) follows RealNVP's recipe for images (Dinh
// et al. 2017, §4.1): pixels are dequantised, y = (byte + u)/256 with
// u ~ U[0, 1), and modelled in logit space, x = logit(α + (1 − 2α)·y) with
// α = 0.05 (probabilistic.ScaledSigmoid is the map back, its log-det
// counted in the likelihood). A fixed per-pixel standardisation (the mean
// and sd of x over the training set) comes next, then affine couplings
// with checkerboard masks on the 28×28 grid, alternating with their
// complement, on a standard normal base. With the couplings at their
// initial identity the model is the baseline: independent Gaussians per
// pixel in logit space, fitted to the training set.

const (
	pixels     = 784
	logitAlpha = 0.05
)

// bitsPerDim converts a negative log-likelihood in nats of a dequantised
// image y ∈ [0, 1)^784 into bits per pixel of the discrete 8-bit image:
// the density of v = 256·y = byte + u is p_y(y)/256^784, and
// log P(byte) ≥ E_u log p_v(byte + u) (Theis et al. 2016), so
//
//	bpd = (NLL_y + 784·ln 256)/(784·ln 2)
//
// bounds the discrete model's code length per pixel from above. The
// uniform density on [0, 1)^784 (NLL_y = 0) gives exactly 8 bits.
func bitsPerDim(nllNats float64) float64 {
	return (nllNats + pixels*math.Log(256)) / (pixels * math.Ln2)
}

type mnistResult struct {
	TestBPD     float64   `json:"test_bpd"`          // the flow, bits per pixel on the test split
	BaselineBPD float64   `json:"baseline_test_bpd"` // independent Gaussians per pixel in logit space
	UniformBPD  float64   `json:"uniform_bpd"`       // the uniform model: 8
	Curve       []float64 `json:"train_bpd_per_epoch"`
	Parameters  int       `json:"parameters"`
	Samples     string    `json:"samples,omitempty"`
	Log         string    `json:"log,omitempty"`
}

// stdNormal is the standard normal on ℝᵈ (event shape (d)), the flow's
// base; MVNDiag would carry a d×d factor.
type stdNormal struct {
	g  *graph.Graph
	d  int
	dt tensor.DType
}

func (s stdNormal) LogProb(x *graph.Node) *graph.Node {
	sq := graph.Sum(graph.Square(x), []int{-1}, false)
	return graph.AddScalar(graph.MulScalar(sq, -0.5), -0.5*float64(s.d)*math.Log(2*math.Pi))
}
func (s stdNormal) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	return rng.Normal(s.dt, 0, 1, n, s.d)
}
func (s stdNormal) Entropy() *graph.Node {
	return s.g.Const(tensor.Full(s.dt, 0.5*float64(s.d)*(1+math.Log(2*math.Pi))))
}
func (s stdNormal) Mean() *graph.Node     { return s.g.Const(tensor.Zeros(s.dt, s.d)) }
func (s stdNormal) Variance() *graph.Node { return s.g.Const(tensor.Ones(s.dt, s.d)) }
func (s stdNormal) BatchShape() []int     { return nil }
func (s stdNormal) EventShape() []int     { return []int{s.d} }

// pixelAffine is the fixed elementwise bijector x = loc + scale⊙z.
type pixelAffine struct{ loc, scale, logScale *tensor.Tensor }

func (a pixelAffine) Forward(z *graph.Node) *graph.Node {
	g := z.Graph()
	return graph.Add(graph.Mul(z, g.Const(a.scale)), g.Const(a.loc))
}
func (a pixelAffine) Inverse(x *graph.Node) *graph.Node {
	g := x.Graph()
	return graph.Div(graph.Sub(x, g.Const(a.loc)), g.Const(a.scale))
}
func (a pixelAffine) LogDetJacobian(z *graph.Node) *graph.Node {
	return graph.BroadcastTo(z.Graph().Const(a.logScale), z.Shape()...)
}

// imageFlow holds the couplings and the fitted per-pixel standardisation.
type imageFlow struct {
	flow // the coupling layers, their Params and SetTraining
	norm pixelAffine
	dt   tensor.DType
}

// checkerboard returns the 28×28 checkerboard mask (1 where row + column
// is even), or its complement.
func checkerboard(odd bool) []float64 {
	m := make([]float64, pixels)
	for i := range 28 {
		for j := range 28 {
			if ((i+j)%2 == 0) != odd {
				m[28*i+j] = 1
			}
		}
	}
	return m
}

func (f *imageFlow) dist(g *graph.Graph) *probabilistic.Transformed {
	bs := make([]probabilistic.Bijector, 0, len(f.layers)+2)
	for _, l := range f.layers {
		bs = append(bs, l)
	}
	bs = append(bs, f.norm, probabilistic.ScaledSigmoid{Alpha: logitAlpha})
	return probabilistic.NewTransformed(stdNormal{g: g, d: pixels, dt: f.dt}, bs...)
}

// dequantise returns (byte + u)/256 for MNIST's pixels (byte/255), with
// fresh uniform noise u.
func dequantise(rng *tensor.RNG, x *tensor.Tensor) *tensor.Tensor {
	v := x.Values()
	for i, p := range v {
		v[i] = (math.Round(p*255) + rng.Float64()) / 256
	}
	return tensor.FromValues(x.DType(), v, x.Shape()...)
}

// logitStats returns the per-pixel mean and sd of logit(α + (1 − 2α)·y)
// over the rows of y, and the test NLL (nats per image) of the
// independent Gaussians with those moments, the logit's log-det counted.
func logitStats(yTrain, yTest *tensor.Tensor) (mean, sd []float64, testNLL float64) {
	logit := func(y float64) (x, logDet float64) {
		p := logitAlpha + (1-2*logitAlpha)*y
		// dy/dx = p(1 − p)/(1 − 2α), the Jacobian of ScaledSigmoid
		return math.Log(p / (1 - p)), math.Log(p * (1 - p) / (1 - 2*logitAlpha))
	}
	n, v := yTrain.Shape()[0], yTrain.Values()
	mean, sd = make([]float64, pixels), make([]float64, pixels)
	for i := range n {
		for j := range pixels {
			x, _ := logit(v[i*pixels+j])
			mean[j] += x / float64(n)
		}
	}
	for i := range n {
		for j := range pixels {
			x, _ := logit(v[i*pixels+j])
			sd[j] += (x - mean[j]) * (x - mean[j]) / float64(n)
		}
	}
	for j := range sd {
		sd[j] = math.Max(math.Sqrt(sd[j]), 1e-3)
	}
	m, w := yTest.Shape()[0], yTest.Values()
	for i := range m {
		for j := range pixels {
			x, ld := logit(w[i*pixels+j])
			z := (x - mean[j]) / sd[j]
			// −log p_y = −log N(x; μ, σ) + log |dy/dx|
			testNLL += (0.5*z*z + math.Log(sd[j]) + 0.5*math.Log(2*math.Pi) + ld) / float64(m)
		}
	}
	return mean, sd, testNLL
}

func runMNIST(cfg config, env *cli.Env) (res mnistResult, err error) {
	if cfg.Epochs < 1 || cfg.Layers < 2 || cfg.Hidden < 1 || cfg.Batch < 1 {
		return res, cli.BadFlagf("need -epochs ≥ 1, -layers ≥ 2, -hidden ≥ 1, got %d, %d, %d", cfg.Epochs, cfg.Layers, cfg.Hidden)
	}
	xTrain, _, xTest, _, err := mnist.LoadMNIST("", []int{pixels}, cfg.Subset)
	if err != nil {
		return res, err
	}
	rng := tensor.NewRNG(env.Seed)
	// One fixed dequantisation of the test set, for the flow and the
	// baseline alike; training draws fresh noise for every batch.
	yTest := dequantise(rng, xTest)
	mean, sd, baseNLL := logitStats(dequantise(rng, xTrain), yTest)
	res.BaselineBPD, res.UniformBPD = bitsPerDim(baseNLL), bitsPerDim(0)
	dt := xTrain.DType()
	logSD := make([]float64, pixels)
	for j, s := range sd {
		logSD[j] = math.Log(s)
	}
	f := &imageFlow{dt: dt, norm: pixelAffine{loc: tensor.FromValues(dt, mean, pixels),
		scale: tensor.FromValues(dt, sd, pixels), logScale: tensor.FromValues(dt, logSD, pixels)}}
	for k := range cfg.Layers {
		f.layers = append(f.layers, probabilistic.NewAffineCoupling(rng, checkerboard(k%2 == 1), cfg.Hidden, dt))
	}
	ps := f.Params()
	for _, p := range ps {
		res.Parameters += p.Value.Size()
	}
	opt := optim.NewAdam(nn.Values(ps), optim.AdamOptions{LR: cfg.LR})
	n := xTrain.Shape()[0]
	gather := data.NewGatherer(xTrain)
	noise := tensor.NewRNG(env.Seed + 1)
	loader := data.NewLoader(data.TensorDataset{X: xTrain}, data.LoaderOptions{
		BatchSize: cfg.Batch, DropLast: true, Sampler: data.Random{N: n, Seed: env.Seed},
		Collate: func(_ []data.Example, idx []int) data.Batch {
			return data.Batch{X: dequantise(noise, gather.Gather(idx)), Index: idx}
		}})
	// The loss is the batch's bits per pixel: an affine function of the
	// mean NLL, so the progress line and the log read in bpd.
	loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
		nllNats := nll(f.dist(g), g.Const(b.X))
		return graph.MulScalar(graph.AddScalar(nllNats, pixels*math.Log(256)), 1/(pixels*math.Ln2))
	}
	tc := train.Options{Epochs: cfg.Epochs, Seed: env.Seed}
	hist, logPath, err := fitLogged(env, "flow-mnist.jsonl", f, opt, loss, loader, tc)
	res.Log = logPath
	if err != nil {
		return res, err
	}
	for _, r := range hist.Records {
		res.Curve = append(res.Curve, r.TrainLoss)
	}
	// Test NLL in chunks of 500 images, each on a fresh graph.
	m, total := yTest.Shape()[0], 0.0
	for lo := 0; lo < m; lo += 500 {
		hi := min(lo+500, m)
		g := graph.New()
		chunk := tensor.FromValues(dt, yTest.Values()[lo*pixels:hi*pixels], hi-lo, pixels)
		lp := f.dist(g).LogProb(g.Const(chunk)).Value().Values()
		for _, v := range lp {
			total -= v
		}
	}
	res.TestBPD = bitsPerDim(total / float64(m))
	env.Printf("test %.3f bits per pixel (per-pixel logit-Gaussian baseline %.3f, uniform %.0f); %d parameters\n",
		res.TestBPD, res.BaselineBPD, res.UniformBPD, res.Parameters)
	g := graph.New()
	s := f.dist(g).Sample(rng, 64)
	res.Samples = env.Path("flow-mnist.png")
	if err := plot.ImageGrid(res.Samples, tensor.Reshape(s, 64, 28, 28), 8, 3, 0, 1); err != nil {
		return res, err
	}
	env.Println("samples:", res.Samples)
	return res, nil
}
