// Command dae trains a denoising autoencoder (vae.DAE; Vincent et al.
// 2008) on the embedded MNIST digits: 784-256-32 MLPs, masking noise that
// drops half of the pixels, Adam on the Bernoulli reconstruction of the
// clean digit, trained by train.Trainer (progress per epoch, and a JSON-lines
// log next to the PNG). It prints the held-out reconstruction error (binary cross
// entropy per image, and the mean squared error per pixel) of corrupted
// test digits, against leaving the corrupted digit as it is,
// and writes a PNG with rows of clean, corrupted and reconstructed digits.
//
//	go run ./examples/dae [-epochs 5] [-drop 0.5] [-seed 1] [-out out/dae] [-json] [-quiet]
package main

import (
	"os"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/vae"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

type config struct {
	cli.Training         // -epochs, -batch, -lr
	mnist.Subset         // -train-n, -test-n
	Drop         float64 `flag:"drop" help:"masking noise: the fraction of pixels set to 0"`
}

type result struct {
	TestBCE  float64   `json:"test_bce_per_image"`
	TrainBCE []float64 `json:"train_bce_per_epoch"`
	TestMSE  float64   `json:"test_mse"`      // per pixel, reconstruction against the clean digit
	NoisyMSE float64   `json:"corrupted_mse"` // per pixel, the corrupted digit as it is
	Plot     string    `json:"plot,omitempty"`
	Log      string    `json:"log,omitempty"` // the JSON-lines training log
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "dae", DataUsage: mnist.DataUsage}, config{Training: cli.Training{Epochs: 5, Batch: 128, LR: 3e-3}, Drop: 0.5}, run)
}

func run(cfg config, env *cli.Env) (res result, err error) {
	x, _, xt, _, err := mnist.LoadMNIST(env.Data, []int{784}, cfg.Subset)
	if err != nil {
		return res, err
	}
	rng := tensor.NewRNG(env.Seed)
	m := vae.NewDAE(rng, vae.DAEOptions{Input: 784, Hidden: []int{256}, Code: 32, Drop: cfg.Drop})
	opt := optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: cfg.LR})
	n := x.Shape()[0]
	// Batches of clean digits, shuffled from the seed; the masking noise is
	// drawn from the Trainer's RNG, so a run is reproducible.
	gather := data.NewGatherer(x)
	loader := data.NewLoader(data.TensorDataset{X: x}, data.LoaderOptions{
		BatchSize: cfg.Batch, DropLast: true, Sampler: data.Random{N: n, Seed: env.Seed},
		Collate: func(_ []data.Example, idx []int) data.Batch {
			return data.Batch{X: gather.Gather(idx), Index: idx}
		}})
	// The loss is the BCE per image (the batch mean of the summed BCE).
	loss := func(g *graph.Graph, b data.Batch, rng *tensor.RNG) *graph.Node {
		k := float64(b.Len())
		return graph.MulScalar(m.Loss(g.Const(m.Corrupt(b.X, rng)), g.Const(b.X)), 1/k)
	}
	tc := train.Options{Epochs: cfg.Epochs, Seed: env.Seed}
	// A JSON-lines log of every epoch next to the PNG, for gradus plot.
	res.Log = env.Path("train.jsonl")
	f, err := os.Create(res.Log)
	if err != nil {
		return res, err
	}
	defer f.Close()
	tc.Log, tc.Progress = f, env.Log
	hist, err := train.New(m, opt, loss, loader, tc).Fit(env.Context())
	if err != nil {
		return res, err
	}
	for _, r := range hist.Records {
		res.TrainBCE = append(res.TrainBCE, r.TrainLoss)
	}
	g := graph.New()
	noisy := m.Corrupt(xt, tensor.NewRNG(env.Seed+1))
	logits := m.Reconstruct(g.Const(noisy))
	res.TestBCE = losses.BCEWithLogits(logits, g.Const(xt), losses.Sum).Item() / float64(xt.Shape()[0])
	rec := graph.Sigmoid(logits).Value()
	rv, cv, nv := rec.Values(), xt.Values(), noisy.Values()
	for i, c := range cv {
		res.TestMSE += (rv[i] - c) * (rv[i] - c)
		res.NoisyMSE += (nv[i] - c) * (nv[i] - c)
	}
	res.TestMSE /= float64(len(cv))
	res.NoisyMSE /= float64(len(cv))
	env.Printf("held-out digits with %.0f %% of pixels dropped: reconstruction BCE %.1f nats per image; MSE per pixel %.4f (the corrupted digit: %.4f)\n",
		100*cfg.Drop, res.TestBCE, res.TestMSE, res.NoisyMSE)
	const k = 10
	rows := []*tensor.Tensor{tensor.Slice(xt, 0, 0, k, 1), tensor.Slice(noisy, 0, 0, k, 1), tensor.Slice(rec, 0, 0, k, 1)}
	grid := tensor.Reshape(tensor.Concat(0, rows...).Contiguous(), 3*k, 28, 28)
	res.Plot = env.Path("digits.png")
	if err := plot.ImageGrid(res.Plot, grid, k, 3, 0, 1); err != nil {
		return res, err
	}
	env.Println("clean / corrupted / reconstructed:", res.Plot)
	return res, nil
}
