// Command diffusion trains a small DDPM (Ho et al. 2020) on the embedded
// MNIST digits: the linear β schedule from 1e-4 to 0.02 over T steps, the
// ε-prediction loss, a diffusion.UNet (residual GroupNorm/SiLU blocks at
// 28×28, 14×14 and 7×7, self-attention at 7×7, transposed convolutions up,
// a sinusoidal time embedding), Adam with train.Trainer. Pixels are scaled
// to [−1, 1]. It prints the training loss and the held-out ε-MSE per epoch
// and draws a grid of samples by the ancestral sampler (Algorithm 2) or by
// DDIM (η = 0).
//
//	go run ./examples/diffusion [-epochs 4] [-sampler ancestral|ddim] [-steps 0]
//	    [-seed 1] [-out out/diffusion] [-load out/diffusion/unet.safetensors] [-json] [-demo]
//
// A run saves the weights as out/diffusion/unet.safetensors; -load samples
// from them again without training (with another -sampler or -steps).
package main

import (
	"fmt"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/diffusion"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// config holds the settings of a run; the tagged fields are its flags.
type config struct {
	cli.Training        // -epochs (passes over the training digits), -batch, -lr
	T            int    `flag:"T" help:"diffusion steps"`
	Base         int    `flag:"base" help:"U-Net channels at full resolution (twice as many below)"`
	Samples      int    `flag:"samples" help:"digits to sample for the grid"`
	Sampler      string `flag:"sampler" help:"reverse process: ancestral (Algorithm 2) or ddim (η = 0)"`
	Steps        int    `flag:"steps" help:"reverse steps (0: T for ancestral, 100 for ddim)"`
	Load         string `flag:"load" help:"sample from this checkpoint (unet.safetensors of an earlier run with the same -T and -base) instead of training"`
	mnist.Subset        // -train-n, -test-n: the digits trained on and those of the test loss
	Demo         bool   `flag:"demo" help:"a quick run: 512 digits, 1 epoch, T = 100, 16 samples"`
}

// result is what -json prints.
type result struct {
	TrainLoss       []float64 `json:"train_loss_per_epoch"` // ε-MSE per element
	TestLoss        []float64 `json:"test_loss_per_epoch"`  // the same on held-out digits, fixed noise and t
	FinalLoss       float64   `json:"final_train_loss"`
	Params          int       `json:"params"`
	SecondsPerEpoch float64   `json:"seconds_per_epoch"`
	Sampler         string    `json:"sampler"`
	Steps           int       `json:"steps"`
	SampleSeconds   float64   `json:"sample_seconds"`
	SampleMean      float64   `json:"sample_mean"` // of the pixels in [0, 1]; the test digits' is about 0.13
	Grid            string    `json:"grid,omitempty"`
	Checkpoint      string    `json:"checkpoint,omitempty"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	defaults := config{Training: cli.Training{Epochs: 4, Batch: 32, LR: 2e-3}, T: 1000, Base: 16, Samples: 36, Sampler: "ancestral", Subset: mnist.Subset{TestN: 500}}
	return cli.Configured(cli.Program{Name: "diffusion", DataUsage: mnist.DataUsage}, defaults, func(c config, env *cli.Env) (result, error) {
		if c.Demo {
			c = cli.Preset(env, c, demoConfig)
		}
		return run(c, env)
	})
}

// demoConfig shrinks cfg to a run of seconds.
func demoConfig(cfg config) config {
	cfg.TrainN, cfg.TestN, cfg.Epochs, cfg.T, cfg.Base, cfg.Samples = 512, 128, 1, 100, 8, 16
	return cfg
}

// signed maps pixels from [0, 1] to [−1, 1], the range the noise is
// scaled to.
func signed(x *tensor.Tensor) *tensor.Tensor { return tensor.AddScalar(tensor.MulScalar(x, 2), -1) }

// run trains (or loads) the U-Net and samples from it; -seed draws the
// weights, batches, noise and samples.
func run(cfg config, env *cli.Env) (res result, err error) {
	defer tensor.Recover(&err)
	sampler, err := diffusion.ParseSampler(cfg.Sampler)
	if err != nil {
		return res, err
	}
	if (cfg.Epochs < 1 && cfg.Load == "") || cfg.Samples < 1 || cfg.Steps < 0 || cfg.Steps > cfg.T {
		return res, fmt.Errorf("-epochs %d and -samples %d must be ≥ 1, -steps %d in 0…T = %d", cfg.Epochs, cfg.Samples, cfg.Steps, cfg.T)
	}
	sched, err := diffusion.Linear(cfg.T, 1e-4, 0.02)
	if err != nil {
		return res, err
	}
	x, labels, xt, _, err := mnist.LoadMNIST(env.Data, []int{1, 28, 28}, cfg.Subset)
	if err != nil {
		return res, err
	}
	x, xt = signed(x), signed(xt)
	rng := tensor.NewRNG(env.Seed)
	unet := diffusion.NewUNet(rng, diffusion.UNetOptions{Base: cfg.Base, Groups: min(8, cfg.Base), MaxT: cfg.T}, tensor.Float32)
	res.Params = nn.NumParams(unet)
	env.Printf("DDPM on %d MNIST digits: T = %d, U-Net base %d (%d parameters), batch %d, Adam %g, %d epochs\n",
		len(labels), cfg.T, cfg.Base, res.Params, cfg.Batch, cfg.LR, cfg.Epochs)

	// The held-out loss uses the same noise and time steps every epoch.
	evalRNG := tensor.NewRNG(env.Seed + 1000)
	nt := xt.Shape()[0]
	evalT := make([]int, nt)
	for i := range evalT {
		evalT[i] = 1 + evalRNG.Intn(cfg.T)
	}
	evalEps := diffusion.Noise(evalRNG, xt.DType(), xt.Shape()...)
	g := graph.New()
	eval := func(int) (map[string]float64, error) {
		sum := 0.0
		for lo := 0; lo < nt; lo += 250 {
			hi := min(lo+250, nt)
			g.Reset()
			l := sched.LossAt(g, unet.Forward, tensor.Slice(xt, 0, lo, hi, 1).Contiguous(),
				tensor.Slice(evalEps, 0, lo, hi, 1).Contiguous(), evalT[lo:hi])
			sum += l.Item() * float64(hi-lo)
		}
		g.Reset()
		return map[string]float64{"test_loss": sum / float64(nt)}, nil
	}

	if cfg.Load != "" {
		if err := load(cfg.Load, unet); err != nil {
			return res, err
		}
		m, err := eval(0)
		if err != nil {
			return res, err
		}
		res.TestLoss = []float64{m["test_loss"]}
		env.Printf("loaded %s: held-out ε-MSE %.4f\n", cfg.Load, res.TestLoss[0])
	} else if err := fit(cfg, env, &res, unet, sched, x, labels, eval); err != nil {
		return res, err
	}

	steps := cfg.Steps
	if steps == 0 {
		steps = cfg.T
		if sampler == diffusion.DDIM {
			steps = min(100, cfg.T)
		}
	}
	res.Sampler, res.Steps = sampler.String(), steps
	prog := train.NewProgress(env.Log)
	prog.StartEpoch(fmt.Sprintf("sampling %d digits, %s, %d steps", cfg.Samples, sampler, steps), steps)
	start := time.Now()
	samples, err := sched.Sample(env.Context(), unet.Forward, tensor.NewRNG(env.Seed+2000), tensor.Float32,
		diffusion.SampleOptions{Sampler: sampler, Steps: steps, Clip: 1, Progress: func(int, int) { prog.Step(0) }},
		cfg.Samples, 1, 28, 28)
	if err != nil {
		return res, err
	}
	res.SampleSeconds = time.Since(start).Seconds()
	prog.EndEpoch("%.1f s", res.SampleSeconds)
	pix := tensor.MulScalar(tensor.AddScalar(samples, 1), 0.5) // back to [0, 1]
	res.SampleMean = meanPixel(samples)
	env.Printf("held-out ε-MSE %.4f; mean sample pixel %.3f (test digits: %.3f)\n", res.TestLoss[len(res.TestLoss)-1], res.SampleMean, meanPixel(xt))
	if cfg.Load == "" {
		res.Checkpoint = env.Path("unet.safetensors")
		meta := map[string]string{"model": "diffusion.UNet", "T": fmt.Sprint(cfg.T), "base": fmt.Sprint(cfg.Base), "epochs": fmt.Sprint(cfg.Epochs)}
		if err := checkpoint.Save(res.Checkpoint, unet, checkpoint.SaveOptions{Metadata: meta}); err != nil {
			return res, err
		}
		env.Println("weights:", res.Checkpoint)
	}
	res.Grid = env.Path("samples.png")
	cols := 1
	for cols*cols < cfg.Samples {
		cols++
	}
	if err := plot.ImageGrid(res.Grid, pix, cols, 2, 0, 1); err != nil {
		return res, err
	}
	env.Println("samples:", res.Grid)
	return res, nil
}

// fit trains unet on x and records the curve in res.
func fit(cfg config, env *cli.Env, res *result, unet *diffusion.UNet, sched *diffusion.Schedule, x *tensor.Tensor, labels []int,
	eval train.EvalFunc) error {
	loader := data.NewLoader(data.TensorDataset{X: x, Labels: labels},
		data.LoaderOptions{BatchSize: cfg.Batch, Sampler: data.Random{N: len(labels), Seed: env.Seed}})
	loss := func(g *graph.Graph, b data.Batch, rng *tensor.RNG) *graph.Node {
		return sched.Loss(g, unet.Forward, b.X, rng)
	}
	opt := optim.NewAdam(nn.Values(unet.Params()), optim.AdamOptions{LR: cfg.LR})
	tr := train.New(unet, opt, loss, loader, train.Options{Epochs: cfg.Epochs, Seed: env.Seed, ClipNorm: 1, Eval: eval, Progress: env.Log})
	hist, err := tr.Fit(env.Context())
	if err != nil {
		return err
	}
	secs := 0.0
	for _, r := range hist.Records {
		res.TrainLoss = append(res.TrainLoss, r.TrainLoss)
		res.TestLoss = append(res.TestLoss, r.Metrics["test_loss"])
		secs += r.Seconds
	}
	res.FinalLoss = res.TrainLoss[len(res.TrainLoss)-1]
	res.SecondsPerEpoch = secs / float64(len(hist.Records))
	env.Println("training curve (ε-MSE per element):")
	for i := range res.TrainLoss {
		env.Printf("  epoch %2d  train %.4f  test %.4f\n", i+1, res.TrainLoss[i], res.TestLoss[i])
	}
	return nil
}

// load reads the U-Net's weights from a checkpoint written by an earlier run.
func load(path string, unet *diffusion.UNet) error {
	_, err := checkpoint.LoadInto(path, unet, checkpoint.LoadOptions{})
	return err
}

// meanPixel returns the mean of x's values in [−1, 1] mapped to [0, 1]
// and clipped.
func meanPixel(x *tensor.Tensor) float64 {
	sum := 0.0
	for _, v := range x.Values() {
		sum += min(1, max(0, (v+1)/2))
	}
	return sum / float64(x.Size())
}
