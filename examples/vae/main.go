// Command vae trains the classic MLP variational autoencoder of Kingma and
// Welling (784-400-20, as in PyTorch's examples/vae) on MNIST: ReLU hidden
// layers, a Gaussian encoder (mean and log-variance), a Bernoulli decoder on
// logits with the pixel intensities in [0, 1] as targets, Adam 1e-3, batches
// of 128. It reports the test negative ELBO each epoch and the 50-sample
// importance-weighted bound at the end, and draws samples from the prior,
// reconstructions and, with -latent 2, the latent manifold and the test codes.
//
//	go run ./examples/vae [-epochs 20] [-latent 20] [-seed 1] [-data dir]
//	    [-out ./out/vae] [-demo] [-json]
//
// Without -data it uses the 10,000 MNIST digits embedded in Gradus (8,000 to
// train, 2,000 to test); -data names a directory with the full MNIST IDX files.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/probabilistic/vae"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// options are the command-line settings.
type options struct {
	Epochs  int
	Latent  int
	Hidden  int
	Batch   int
	LR      float64
	Seed    uint64
	Data    string
	Out     string
	IWAEK   int
	TrainN  int // use only the first TrainN training images (0: all)
	TestN   int // and the first TestN test images (0: all)
	NoFiles bool
	Beta    float64 // the KL weight (β-VAE); 1 is the plain VAE
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
}

func main() {
	o := options{Hidden: 400, Batch: 128, LR: 1e-3}
	flag.IntVar(&o.Epochs, "epochs", 20, "training epochs")
	flag.IntVar(&o.Latent, "latent", 20, "latent dimension (2 also draws the manifold and the code scatter)")
	flag.Uint64Var(&o.Seed, "seed", 1, "seed of the initialisation, batches and noise")
	flag.StringVar(&o.Data, "data", "", "directory with the full MNIST IDX files (default: the embedded 10k subset)")
	flag.StringVar(&o.Out, "out", "./out/vae", "directory for the PNGs and the checkpoint")
	flag.Float64Var(&o.Beta, "beta", 1, "KL weight: β > 1 trains a β-VAE (Higgins et al. 2017)")
	flag.IntVar(&o.IWAEK, "iwae-k", 50, "samples of the final importance-weighted bound (0: skip)")
	demo := flag.Bool("demo", false, "a short run (10 epochs) that ends with recognisable samples")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	flag.Parse()
	if *demo {
		o.Epochs = 10
	}
	var log io.Writer = os.Stdout
	if *asJSON {
		log = os.Stderr
	}
	res, err := run(o, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vae:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
		return
	}
	fmt.Printf("pictures in %s:\n", o.Out)
	for _, p := range res.Pictures {
		fmt.Println("  " + p)
	}
}

// load returns the training and test images (n, 784) and labels.
func load(o options) (x, xt *tensor.Tensor, y, yt []int, err error) {
	get := func(split string) (*tensor.Tensor, []int, error) {
		if o.Data != "" {
			return data.MNISTFromDir(o.Data, split)
		}
		return data.MNIST(split)
	}
	if x, y, err = get("train"); err != nil {
		return
	}
	if xt, yt, err = get("test"); err != nil {
		return
	}
	if o.TrainN > 0 && o.TrainN < len(y) {
		x, y = tensor.Slice(x, 0, 0, o.TrainN, 1).Contiguous(), y[:o.TrainN]
	}
	if o.TestN > 0 && o.TestN < len(yt) {
		xt, yt = tensor.Slice(xt, 0, 0, o.TestN, 1).Contiguous(), yt[:o.TestN]
	}
	return
}

// trainer holds the model and the buffers reused across steps.
type trainer struct {
	m     *vae.VAE
	ps    []nn.NamedParam
	opt   *optim.Adam
	g     *graph.Graph
	rng   *tensor.RNG
	eps   map[int]*tensor.Tensor // noise buffers by batch size
	batch int
}

func newTrainer(o options) *trainer {
	rng := tensor.NewRNG(o.Seed)
	m := vae.New(rng, vae.Config{Input: 784, Hidden: []int{o.Hidden}, Latent: o.Latent, Beta: o.Beta})
	ps := m.Params()
	return &trainer{m: m, ps: ps, opt: optim.NewAdam(nn.Values(ps), optim.AdamConfig{LR: o.LR}),
		g: graph.New(), rng: rng, eps: map[int]*tensor.Tensor{}, batch: o.Batch}
}

// noise returns the reused ε buffer for n rows, refilled from rng.
func (t *trainer) noise(rng *tensor.RNG, n int) *tensor.Tensor {
	e, ok := t.eps[n]
	if !ok {
		e = tensor.New(tensor.Float32, n, t.m.Latent)
		t.eps[n] = e
	}
	vae.FillNormal(rng, e)
	return e
}

// step takes one Adam step on the batch xb and returns its summed −ELBO.
func (t *trainer) step(xb *tensor.Tensor) (float64, error) {
	t.g.Reset()
	loss := t.m.Loss(t.g.Const(xb), t.g.Const(t.noise(t.rng, xb.Shape()[0])))
	l := loss.Item()
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return l, fmt.Errorf("the loss is %v", l)
	}
	return l, t.opt.Step(nn.Gradients(loss, t.ps))
}

// evaluate returns the mean −ELBO per image over x, one ε sample per
// image from a generator seeded with seed (the same noise every epoch).
// It is the true bound whatever β the training loss weighs the KL with.
func (t *trainer) evaluate(x *tensor.Tensor, seed uint64) float64 {
	n := x.Shape()[0]
	rng := tensor.NewRNG(seed)
	rows := data.NewGatherer(x)
	var sum float64
	for idx := range data.NewBatcher(n, 500, data.BatchOptions{NoShuffle: true}).Epoch() {
		t.g.Reset()
		xb := rows.Gather(idx)
		elbo, _, _ := t.m.ELBO(t.g.Const(xb), t.g.Const(t.noise(rng, len(idx))))
		sum -= graph.Sum(elbo, nil, false).Item()
	}
	t.g.Reset()
	return sum / float64(n)
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
		b := t.m.IWAE(t.g.Const(rows.Gather(idx)), rng, k)
		sum -= graph.Sum(b, nil, false).Item()
	}
	t.g.Reset()
	return sum / float64(n)
}

// run trains, evaluates and draws.
func run(o options, log io.Writer) (res result, err error) {
	defer tensor.Recover(&err)
	x, xt, _, yt, err := load(o)
	if err != nil {
		return res, err
	}
	n := x.Shape()[0]
	t := newTrainer(o)
	fmt.Fprintf(log, "VAE 784-%d-%d on %d training and %d test images, %d epochs, %d parameters\n",
		o.Hidden, o.Latent, n, xt.Shape()[0], o.Epochs, nn.NumParams(t.m))
	prog := train.NewProgress(log)
	batches := data.NewBatcher(n, o.Batch, data.BatchOptions{Seed: o.Seed})
	rows := data.NewGatherer(x)
	var trainSecs float64
	for epoch := 1; epoch <= o.Epochs; epoch++ {
		prog.StartEpoch(fmt.Sprintf("epoch %d/%d", epoch, o.Epochs), batches.NumBatches())
		start := time.Now()
		var sum float64
		for idx := range batches.Epoch() {
			l, err := t.step(rows.Gather(idx))
			if err != nil {
				return res, fmt.Errorf("epoch %d: %w", epoch, err)
			}
			sum += l
			prog.Step(l / float64(len(idx)))
		}
		secs := time.Since(start).Seconds()
		trainSecs += secs
		test := t.evaluate(xt, o.Seed+1000)
		res.TrainNegELBO = append(res.TrainNegELBO, sum/float64(n))
		res.TestNegELBO = append(res.TestNegELBO, test)
		prog.EndEpoch("train −ELBO %.2f  test −ELBO %.2f  (%.2f s)", sum/float64(n), test, secs)
	}
	if o.Epochs > 0 {
		res.SecondsPerEpoch = trainSecs / float64(o.Epochs)
	}
	if o.IWAEK > 0 {
		res.TestIWAE = t.iwae(xt, o.IWAEK, o.Seed+2000)
		fmt.Fprintf(log, "test −IWAE (K = %d): %.2f nats (−ELBO %.2f)\n", o.IWAEK, res.TestIWAE, res.TestNegELBO[len(res.TestNegELBO)-1])
	}
	if o.NoFiles {
		return res, nil
	}
	if res.Pictures, err = t.draw(o, xt, yt, res); err != nil {
		return res, err
	}
	res.Checkpoint = filepath.Join(o.Out, fmt.Sprintf("vae_latent%d.safetensors", o.Latent))
	params := map[string]*tensor.Tensor{}
	for _, p := range t.ps {
		params[p.Name] = p.Value
	}
	meta := map[string]string{"model": fmt.Sprintf("vae 784-%d-%d", o.Hidden, o.Latent), "epochs": fmt.Sprint(o.Epochs)}
	if err := checkpoint.SaveParams(res.Checkpoint, params, t.opt.State(), meta); err != nil {
		return res, err
	}
	fmt.Fprintf(log, "checkpoint: %s\n", res.Checkpoint)
	return res, nil
}
