// Command vae trains the classic MLP variational autoencoder of Kingma and
// Welling (784-400-20, as in PyTorch's examples/vae) on MNIST: ReLU hidden
// layers, a Gaussian encoder (mean and log-variance), a Bernoulli decoder on
// logits with the pixel intensities in [0, 1] as targets, Adam 1e-3, batches
// of 128. With -model hvae it trains instead the two-level hierarchical VAE
// vae.HVAE (784-400-z₁(20)-200-z₂(10), top-down inference). Training runs
// through train.Trainer, with a progress bar and a JSON-lines log
// (run.jsonl). It reports the test negative ELBO each epoch and the
// 50-sample importance-weighted bound at the end, and draws samples from
// the prior, reconstructions and, with a 2-D top latent (-latent 2 for vae,
// -latent2 2 for hvae), the latent manifold and the test codes.
//
// -warmup N raises the KL weight linearly from 0 to β over the first N
// epochs (the KL warm-up of Sønderby et al. 2016).
//
//	go run ./examples/vae [-model vae|hvae] [-epochs 20] [-latent 20] [-latent2 10]
//	    [-beta 1] [-warmup 0] [-seed 1] [-data dir] [-out out/vae] [-demo] [-json] [-quiet]
//
// -device cuda trains on an NVIDIA GPU (go run -tags cuda ./examples/vae
// -device cuda): the parameters and the optimiser's state live there, and
// each batch is copied in as the step reads it.
//
// Without -data it uses the 10,000 MNIST digits embedded in Gradus (8,000 to
// train, 2,000 to test); -data names a directory with the full MNIST IDX files.
package main

import (
	"fmt"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
	"gonum.org/v1/gonum/floats"
)

// options are the command-line settings.
type options struct {
	cli.Training         // -epochs, -batch, -lr
	cli.Device           // -device
	Model        string  `flag:"model" help:"vae, or hvae for the two-level hierarchical VAE with top-down inference"`
	Latent       int     `flag:"latent" help:"latent dimension (of z₁ for hvae; for vae, 2 also draws the manifold and the code scatter)"`
	Latent2      int     `flag:"latent2" help:"hvae: dimension of the top latent z₂ (2 draws the manifold and the code scatter)"`
	Hidden       int     `flag:"hidden" help:"hidden units (of the first level for hvae)"`
	Hidden2      int     `flag:"hidden2" help:"hvae: hidden units of the second level"`
	Beta         float64 `flag:"beta" help:"KL weight: β > 1 trains a β-VAE (Higgins et al. 2017)"`
	Warmup       int     `flag:"warmup" help:"KL warm-up: epochs over which the KL weight rises linearly from 0 to β (Sønderby et al. 2016)"`
	IWAEK        int     `flag:"iwae-k" help:"samples of the final importance-weighted bound (0: skip)"`
	mnist.Subset         // -train-n, -test-n
	Demo         bool    `flag:"demo" help:"a short run (10 epochs) that ends with recognisable samples"`
}

// result is what -json prints. The IWAE figure is the negative bound, in
// nats per image like the negative ELBO (lower is better).
type result struct {
	TestNegELBO     []float64 `json:"test_neg_elbo_per_epoch"`
	TrainNegELBO    []float64 `json:"train_neg_elbo_per_epoch"`
	TestIWAE        float64   `json:"test_iwae_k50"`
	SecondsPerEpoch float64   `json:"seconds_per_epoch"`
	Pictures        []string  `json:"pictures,omitempty"`
	Checkpoint      string    `json:"checkpoint,omitempty"`
	Model           string    `json:"model"`
	TestKL          []float64 `json:"test_kl_per_level"` // nats per image, one per latent level (z₁ first)
	Log             string    `json:"log,omitempty"`     // the JSON-lines training log
}

func main() { cli.Main(program()) }

func program() cli.Program {
	p := cli.Program{Name: "vae", DataUsage: "directory with the full MNIST IDX files (default: the embedded 10k subset)"}
	defaults := options{Training: cli.Training{Epochs: 20, Batch: 128, LR: 1e-3}, Model: "vae", Latent: 20, Latent2: 10, Hidden: 400, Hidden2: 200, Beta: 1, IWAEK: 50}
	return cli.Configured(p, defaults, func(o options, env *cli.Env) (result, error) {
		if o.Demo {
			o = cli.Preset(env, o, func(o options) options { o.Epochs = 10; return o })
		}
		res, err := run(o, env)
		if err == nil {
			env.Printf("pictures in %s: %v\n", env.Out, res.Pictures)
		}
		return res, err
	})
}

// trainer holds the model, its train.Trainer and a graph for evaluation.
type trainer struct {
	m  model
	tr *train.Trainer
	g  *graph.Graph
}

// newTrainer returns the model of o, initialised from seed, with Adam at
// o.LR, trained by a train.Trainer on batches of o.Batch rows of x
// shuffled from seed; the ε of each step come from the Trainer's RNG.
// cfg's Epochs, Seed, Eval, Progress and Log are used as given.
func newTrainer(o options, seed uint64, x *tensor.Tensor, cfg train.Options) (*trainer, error) {
	m, err := newModel(o, seed)
	if err != nil {
		return nil, err
	}
	dev, err := o.Device.Open()
	if err != nil {
		return nil, err
	}
	nn.To(m, dev) // before the optimiser, which keeps the tensors it is given
	n := x.Shape()[0]
	rows := data.NewGatherer(x)
	loader := data.NewLoader(data.TensorDataset{X: x}, data.LoaderOptions{
		BatchSize: o.Batch, Sampler: data.Random{N: n, Seed: seed},
		Collate: func(_ []data.Example, idx []int) data.Batch {
			return data.Batch{X: rows.Gather(idx), Index: idx}
		}})
	// The Trainer wants the batch mean; the model's loss is the batch sum.
	beta := o.Beta
	if beta == 0 {
		beta = 1
	}
	warm := float64(o.Warmup * loader.NumBatches(0))
	var t *trainer
	loss := func(g *graph.Graph, b data.Batch, rng *tensor.RNG) *graph.Node {
		if warm > 0 {
			m.setBeta(beta * min(1, float64(t.tr.Steps()+1)/warm))
		}
		return graph.MulScalar(m.loss(g, b.X, rng), 1/float64(b.Len()))
	}
	opt := optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: o.LR})
	t = &trainer{m: m, tr: train.New(m, opt, loss, loader, cfg), g: graph.New()}
	return t, nil
}

// step takes one Adam step on the batch xb through the Trainer's step API
// and returns its mean β-weighted −ELBO per image.
func (t *trainer) step(xb *tensor.Tensor) (float64, error) {
	return t.tr.Step(data.Batch{X: xb})
}

// evaluate returns the mean −ELBO per image over x and the mean KL of
// each latent level, one ε sample per image from a generator seeded with
// seed (the same noise every epoch). It is the true bound whatever β the
// training loss weighs the KL with.
func (t *trainer) evaluate(x *tensor.Tensor, seed uint64) (negELBO float64, kl []float64) {
	n := x.Shape()[0]
	rng := tensor.NewRNG(seed)
	rows := data.NewGatherer(x)
	for idx := range data.NewBatcher(n, 500, data.BatchOptions{NoShuffle: true}).Epoch() {
		t.g.Reset()
		elbo, kls := t.m.elbo(t.g, rows.Gather(idx), rng)
		negELBO -= graph.Sum(elbo, nil, false).Item() / float64(n)
		if kl == nil {
			kl = make([]float64, len(kls))
		}
		for i, k := range kls {
			kl[i] += k.Item() / float64(n)
		}
	}
	t.g.Reset()
	return negELBO, kl
}

// iwae returns the mean negative K-sample importance-weighted bound per image.
func (t *trainer) iwae(x *tensor.Tensor, k int, seed uint64) float64 {
	n := x.Shape()[0]
	rng := tensor.NewRNG(seed)
	rows := data.NewGatherer(x)
	var sum float64
	chunk := max(1, 5000/k)
	for idx := range data.NewBatcher(n, chunk, data.BatchOptions{NoShuffle: true}).Epoch() {
		t.g.Reset()
		sum -= graph.Sum(t.m.iwae(t.g, rows.Gather(idx), rng, k), nil, false).Item()
	}
	t.g.Reset()
	return sum / float64(n)
}

// run trains, evaluates and draws; -seed draws the initialisation, the
// batches and the noise.
func run(o options, env *cli.Env) (res result, err error) {
	defer tensor.Recover(&err)
	x, _, xt, yt, err := mnist.LoadMNIST(env.Data, []int{784}, o.Subset)
	if err != nil {
		return res, err
	}
	if o.Model == "" {
		o.Model = "vae"
	}
	res.Model = o.Model
	var t *trainer
	cfg := train.Options{Epochs: o.Epochs, Seed: env.Seed, Progress: env.Log,
		Eval: func(int) (map[string]float64, error) {
			test, kl := t.evaluate(xt, env.Seed+1000)
			res.TestKL = kl
			return map[string]float64{"test_neg_elbo": test, "test_kl": floats.Sum(kl)}, nil
		}}
	// A JSON-lines log of every epoch, for gradus plot or a script.
	f, path, err := cli.CreateIn(env.Out, "run.jsonl")
	if err != nil {
		return res, err
	}
	defer f.Close()
	res.Log, cfg.Log = path, f
	if t, err = newTrainer(o, env.Seed, x, cfg); err != nil {
		return res, err
	}
	env.Printf("%s on %d training and %d test images, %d epochs, %d parameters\n",
		t.m.describe(), x.Shape()[0], xt.Shape()[0], o.Epochs, nn.NumParams(t.m))
	hist, err := t.tr.Fit(env.Context())
	if err != nil {
		return res, err
	}
	var trainSecs float64
	for _, r := range hist.Records {
		res.TrainNegELBO = append(res.TrainNegELBO, r.TrainLoss)
		res.TestNegELBO = append(res.TestNegELBO, r.Metrics["test_neg_elbo"])
		trainSecs += r.Seconds
	}
	if len(hist.Records) > 0 {
		res.SecondsPerEpoch = trainSecs / float64(len(hist.Records))
	}
	if o.IWAEK > 0 {
		res.TestIWAE = t.iwae(xt, o.IWAEK, env.Seed+2000)
		env.Printf("test −IWAE (K = %d): %.2f nats (−ELBO %.2f; KL per level %.2f)\n", o.IWAEK, res.TestIWAE, res.TestNegELBO[len(res.TestNegELBO)-1], res.TestKL)
	}
	if res.Pictures, err = t.draw(o, env, xt, yt, res); err != nil {
		return res, err
	}
	name := fmt.Sprintf("vae_latent%d.safetensors", o.Latent)
	if o.Model == "hvae" {
		name = fmt.Sprintf("hvae_latent%d_%d.safetensors", o.Latent, o.Latent2)
	}
	res.Checkpoint = env.Path(name)
	meta := map[string]string{"model": t.m.describe(), "epochs": fmt.Sprint(o.Epochs)}
	if err := checkpoint.Save(res.Checkpoint, t.m, checkpoint.SaveOptions{Optimizer: t.tr.Optimizer(), Metadata: meta}); err != nil {
		return res, err
	}
	env.Printf("checkpoint: %s\n", res.Checkpoint)
	return res, nil
}
