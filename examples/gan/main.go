// Command gan trains a DCGAN (Radford et al. 2016) on the embedded MNIST
// digits, with the standard GAN loss (-loss bce: binary cross entropy, the
// non-saturating generator loss, Adam 2e-4 with β₁ = 0.5) or as a
// Wasserstein GAN with gradient penalty (-loss wgan-gp, Gulrajani et al.
// 2017: no batch norm in the critic, PyTorch's default initialisation in
// both networks, λ = 10, five critic steps per generator step, Adam 5e-4
// with β = (0.5, 0.9); the paper's 1e-4 and β₁ = 0 are -lr 1e-4 -beta1 0).
// The networks are gan.NewGenerator (transposed convolutions, batch norm,
// ReLU, tanh) and gan.NewDiscriminator (strided convolutions, leaky ReLU).
//
// It prints the epoch's mean losses, writes a grid of 64 samples from
// fixed noise as a PNG, and measures the samples against held-out digits
// with the unbiased MMD² under an RBF kernel (lengthscale by the median
// heuristic): the trained generator's, the untrained one's, and that of
// 1,000 training digits (the floor a perfect generator would reach).
//
//	go run ./examples/gan [-loss bce|wgan-gp] [-epochs 5] [-seed 1]
//	    [-out out/gan] [-n 8000] [-width 32] [-lr 2e-4]
//	    [-beta1 0.5] [-ncritic 5] [-quick] [-json] [-quiet]
//
// It writes the sample grid (samples-<loss>.png) and one JSON line per
// epoch (run.jsonl, train.Record) into -out.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/learn/kerneltest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/gan"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// config holds the settings of a run; the tagged fields are its flags.
// -lr 0 (the default) means 2e-4 for bce and 5e-4 for wgan-gp.
type config struct {
	cli.Training         // -epochs (one discriminator or critic step per batch), -batch, -lr
	Loss         string  `flag:"loss" help:"bce (standard DCGAN) or wgan-gp"`
	TrainN       int     `flag:"n" help:"training digits (0: all 8,000)"`
	Width        int     `flag:"width" help:"feature maps of the outer layers (the middle ones have twice as many)"`
	NCritic      int     `flag:"ncritic" help:"critic steps per generator step (wgan-gp)"`
	Beta1        float64 `flag:"beta1" help:"Adam's β₁ (negative: 0.5)"`
	Quick        bool    `flag:"quick" help:"a small run for tests: 2,048 digits, width 8, 3 epochs"`
	Latent       int
	Lambda       float64 // gradient-penalty weight (wgan-gp)
	EvalN        int     // samples and held-out digits in the MMD² (0: skip)
}

// result is what -json prints; losses are the last epoch's means.
type result struct {
	Loss            string  `json:"loss"`
	Epochs          int     `json:"epochs"`
	DLoss           float64 `json:"d_loss"`               // discriminator BCE, or critic loss with the penalty
	GLoss           float64 `json:"g_loss"`               // generator loss
	Penalty         float64 `json:"gradient_penalty"`     // wgan-gp: λ·mean(‖∇D‖ − 1)²
	WDistance       float64 `json:"wasserstein_estimate"` // wgan-gp: mean D(real) − mean D(fake)
	MMD2            float64 `json:"mmd2"`                 // samples against held-out digits
	MMD2Untrained   float64 `json:"mmd2_untrained"`       // the generator before training
	MMD2Reference   float64 `json:"mmd2_train_vs_test"`   // training digits against held-out digits
	SecondsPerEpoch float64 `json:"seconds_per_epoch"`
	Samples         string  `json:"samples,omitempty"`
}

func defaults() config {
	return config{Training: cli.Training{Epochs: 5, Batch: 64}, Loss: "bce", Width: 32, Latent: 64, NCritic: 5, Beta1: -1, Lambda: 10, EvalN: 1000}
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "gan", DataUsage: mnist.DataUsage}, defaults(), func(c config, env *cli.Env) (result, error) {
		if c.Quick {
			c = cli.Preset(env, c, quickConfig)
		}
		return run(c, env)
	})
}

// quickConfig shrinks cfg to a run of a few seconds.
func quickConfig(cfg config) config {
	cfg.TrainN, cfg.Width, cfg.Latent, cfg.Epochs, cfg.EvalN = 2048, 8, 16, 3, 300
	return cfg
}

// digits returns a split (from -data, else the embedded subset) as images
// (n, 1, 28, 28) scaled to [−1, 1], the generator's tanh range.
func digits(dir, split string, n int) (*tensor.Tensor, error) {
	x, _, err := mnist.Split(dir, split, []int{1, 28, 28}, n)
	if err != nil {
		return nil, err
	}
	x = x.Clone()
	v := x.Float32s()
	for i := range v {
		v[i] = 2*v[i] - 1
	}
	return x, nil
}

// stepLosses are one step's figures.
type stepLosses struct{ d, g, penalty, w float64 }

// model is the pair being trained and its optimisers.
type model struct {
	cfg        config
	gen        *gan.Generator
	disc       *gan.Discriminator
	optG, optD *optim.Adam
	g          *graph.Graph
	rng        *tensor.RNG
	steps      int // discriminator steps taken
}

func newModel(cfg config, seed uint64) (*model, error) {
	m := &model{cfg: cfg, g: graph.New(), rng: tensor.NewRNG(seed)}
	gc := gan.Options{Size: 28, Channels: 1, Latent: cfg.Latent, Width: cfg.Width}
	var ac optim.AdamOptions
	switch cfg.Loss {
	case "bce":
		gc.BatchNorm = true
		ac = optim.AdamOptions{LR: 2e-4, Beta1: 0.5, Beta2: 0.999, Eps: 1e-8, NoDefaults: true}
	case "wgan-gp":
		// The paper's Adam(1e-4, β = (0, 0.9)) needs far more steps than a
		// run of a few minutes gives; 5e-4 with β₁ = 0.5 reaches digits in
		// a few epochs.
		gc.DefaultInit = true
		ac = optim.AdamOptions{LR: 5e-4, Beta1: 0.5, Beta2: 0.9, Eps: 1e-8, NoDefaults: true}
	default:
		return nil, fmt.Errorf("unknown loss %q: want bce or wgan-gp", cfg.Loss)
	}
	if cfg.LR > 0 {
		ac.LR = cfg.LR
	}
	if cfg.Beta1 >= 0 {
		ac.Beta1 = cfg.Beta1
	}
	m.gen = gan.NewGenerator(m.rng, gc, tensor.Float32)
	m.disc = gan.NewDiscriminator(m.rng, gc, tensor.Float32)
	m.optG = optim.NewAdam(nn.Values(m.gen.Params()), ac)
	m.optD = optim.NewAdam(nn.Values(m.disc.Params()), ac)
	return m, nil
}

// step trains on one real batch: a discriminator (critic) step and, for
// bce every time and for wgan-gp every NCritic-th time, a generator step
// on the same fakes, scored by the updated discriminator. Both steps live
// on one graph: the discriminator's update changes its weights in place,
// so the generator step's new forward pass sees them.
func (m *model) step(xb *tensor.Tensor) (l stepLosses, genStep bool, err error) {
	defer tensor.Recover(&err)
	g := m.g
	g.Reset()
	n := xb.Shape()[0]
	real := g.Const(xb)
	fake := m.gen.Forward(g.Const(m.rng.Normal(tensor.Float32, 0, 1, n, m.cfg.Latent)))
	var dLoss *graph.Node
	if m.cfg.Loss == "bce" {
		dLoss = gan.DiscriminatorLoss(m.disc.Forward(real), m.disc.Forward(graph.StopGradient(fake)))
	} else {
		w := gan.CriticLoss(m.disc.Forward(real), m.disc.Forward(graph.StopGradient(fake)))
		pen := gan.GradientPenalty(m.disc.Forward, real, fake, m.rng.Uniform(tensor.Float32, 0, 1, n), m.cfg.Lambda)
		l.w, l.penalty = -w.Item(), pen.Item()
		dLoss = graph.Add(w, pen)
	}
	l.d = dLoss.Item()
	if err := m.optD.Step(nn.Gradients(dLoss, m.disc.Params())); err != nil {
		return l, false, fmt.Errorf("discriminator step: %w", err)
	}
	m.steps++
	if m.cfg.Loss == "wgan-gp" && m.steps%m.cfg.NCritic != 0 {
		return l, false, nil
	}
	var gLoss *graph.Node
	if m.cfg.Loss == "bce" {
		gLoss = gan.GeneratorLoss(m.disc.Forward(fake))
	} else {
		gLoss = gan.WassersteinGeneratorLoss(m.disc.Forward(fake))
	}
	l.g = gLoss.Item()
	if err := m.optG.Step(nn.Gradients(gLoss, m.gen.Params())); err != nil {
		return l, true, fmt.Errorf("generator step: %w", err)
	}
	return l, true, nil
}

// sample draws images from the generator in evaluation mode (running
// batch-norm statistics) for the noise z.
func (m *model) sample(z *tensor.Tensor) *tensor.Tensor {
	m.gen.SetTraining(false)
	defer m.gen.SetTraining(true)
	g := graph.New()
	return m.gen.Forward(g.Const(z)).Value().Clone()
}

// run trains the pair, writing the JSON-lines log run.jsonl and the sample
// grid into -out; -seed draws the weights, batches and noise.
func run(cfg config, env *cli.Env) (res result, err error) {
	x, err := digits(env.Data, "train", cfg.TrainN)
	if err != nil {
		return res, err
	}
	m, err := newModel(cfg, env.Seed)
	if err != nil {
		return res, err
	}
	res.Loss, res.Epochs = cfg.Loss, cfg.Epochs
	var ev *evaluator
	var zEval *tensor.Tensor
	if cfg.EvalN > 0 {
		if ev, err = newEvaluator(env.Data, cfg.EvalN); err != nil {
			return res, err
		}
		zEval = tensor.NewRNG(env.Seed+2).Normal(tensor.Float32, 0, 1, cfg.EvalN, cfg.Latent)
		res.MMD2Untrained = ev.mmd2(m.sample(zEval))
		train1k, err := digits(env.Data, "train", cfg.EvalN)
		if err != nil {
			return res, err
		}
		res.MMD2Reference = ev.mmd2(train1k)
	}
	logf, err := os.Create(env.Path("run.jsonl"))
	if err != nil {
		return res, err
	}
	defer logf.Close()
	enc := json.NewEncoder(logf)
	prog := train.NewProgress(env.Log)
	n := x.Shape()[0]
	batches := n / cfg.Batch
	var total time.Duration
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		t0 := time.Now()
		prog.StartEpoch(fmt.Sprintf("epoch %d/%d", epoch, cfg.Epochs), batches)
		perm := m.rng.Perm(n)
		var sum stepLosses
		gSteps := 0
		for b := range batches {
			xb := tensor.IndexSelect(x, 0, perm[b*cfg.Batch:(b+1)*cfg.Batch])
			l, gen, err := m.step(xb)
			if err != nil {
				return res, fmt.Errorf("epoch %d: %w", epoch, err)
			}
			sum.d += l.d
			sum.penalty += l.penalty
			sum.w += l.w
			if gen {
				sum.g += l.g
				gSteps++
			}
			prog.Step(l.d)
		}
		dt := time.Since(t0)
		total += dt
		nb := float64(batches)
		res.DLoss, res.GLoss = sum.d/nb, sum.g/float64(max(gSteps, 1))
		rec := train.Record{Epoch: epoch, Step: m.steps, LR: m.optD.LR(), TrainLoss: res.DLoss, Seconds: dt.Seconds(),
			Metrics: map[string]float64{"d_loss": res.DLoss, "g_loss": res.GLoss}}
		if cfg.Loss == "wgan-gp" {
			res.Penalty, res.WDistance = sum.penalty/nb, sum.w/nb
			rec.Metrics["gradient_penalty"], rec.Metrics["wasserstein_estimate"] = res.Penalty, res.WDistance
			prog.EndEpoch("critic %.4f (W estimate %.4f, penalty %.4f), generator %.4f, %.1f s",
				res.DLoss, res.WDistance, res.Penalty, res.GLoss, dt.Seconds())
		} else {
			prog.EndEpoch("discriminator %.4f, generator %.4f, %.1f s", res.DLoss, res.GLoss, dt.Seconds())
		}
		if ev != nil {
			res.MMD2 = ev.mmd2(m.sample(zEval))
			rec.Metrics["mmd2"] = res.MMD2
			prog.Printf("MMD² to held-out digits %.4f (untrained %.4f, training digits %.4f)", res.MMD2, res.MMD2Untrained, res.MMD2Reference)
		}
		if err := enc.Encode(rec); err != nil {
			return res, err
		}
		// The grid is rewritten after every epoch, so a long run can be
		// watched and stopped.
		if res.Samples, err = m.writeSamples(env.Path("samples-"+cfg.Loss+".png"), env.Seed+1); err != nil {
			return res, err
		}
	}
	res.SecondsPerEpoch = total.Seconds() / float64(max(cfg.Epochs, 1))
	if res.Samples != "" {
		prog.Printf("samples: %s", res.Samples)
	}
	return res, nil
}

// writeSamples draws 64 digits from the noise the seed gives (the same
// every epoch) as an 8×8 grid into path and returns path.
func (m *model) writeSamples(path string, seed uint64) (string, error) {
	z := tensor.NewRNG(seed).Normal(tensor.Float32, 0, 1, 64, m.cfg.Latent)
	return path, plot.ImageGrid(path, m.sample(z), 8, 2, -1, 1)
}

// evaluator holds held-out digits and the kernel of the MMD².
type evaluator struct {
	test   *tensor.Tensor // (n, 784) float64
	kernel kernel.Kernel
}

func newEvaluator(dir string, n int) (*evaluator, error) {
	x, err := digits(dir, "test", n)
	if err != nil {
		return nil, err
	}
	t := flat64(x)
	return &evaluator{test: t, kernel: kernel.NewRBF(kerneltest.MedianHeuristic(t))}, nil
}

func flat64(x *tensor.Tensor) *tensor.Tensor {
	return tensor.Reshape(x.Cast(tensor.Float64).Contiguous(), x.Shape()[0], -1)
}

// mmd2 is the unbiased MMD² between images x and the held-out digits.
func (e *evaluator) mmd2(x *tensor.Tensor) float64 {
	g := graph.New()
	return kerneltest.MMD2(e.kernel, g.Const(flat64(x)), g.Const(e.test), kerneltest.Unbiased).Item()
}
