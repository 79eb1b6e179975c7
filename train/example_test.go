package train_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// line is y = 2x − 1 on 16 points of [−1, 1].
func line() data.TensorDataset {
	xs, ys := make([]float64, 16), make([]float64, 16)
	for i := range xs {
		xs[i] = -1 + 2*float64(i)/15
		ys[i] = 2*xs[i] - 1
	}
	return data.TensorDataset{X: tensor.FromValues(tensor.Float64, xs, 16, 1), Targets: tensor.FromValues(tensor.Float64, ys, 16, 1)}
}

func mseLoss(lin *nn.Linear) train.LossFunc {
	return func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
		return losses.MSE(lin.Forward(g.Const(b.X)), g.Const(b.Targets), losses.Mean)
	}
}

// Fit a line with Adam, a warm-up then cosine schedule, clipping and a
// JSON-lines log, keeping the best checkpoint.
func ExampleTrainer_Fit() {
	lin := nn.NewLinear(tensor.NewRNG(1), 1, 1, true, tensor.Float64)
	loader := data.NewLoader(line(), data.LoaderOptions{BatchSize: 4, Sampler: data.Random{N: 16, Seed: 1}})
	opt := optim.NewAdam(nn.Values(lin.Params()), optim.AdamOptions{})
	var log bytes.Buffer
	dir, _ := os.MkdirTemp("", "train")
	defer os.RemoveAll(dir)
	tr := train.New(lin, opt, mseLoss(lin), loader, train.Options{
		Epochs:   150,
		Schedule: optim.LinearWarmup(20, optim.CosineAnnealingLR(0.1, 580, 0)),
		ClipNorm: 5, Monitor: "train_loss", BestPath: filepath.Join(dir, "best.safetensors"),
		Log: &log,
	})
	h, err := tr.Fit(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	recs, _ := train.ReadLog(&log)
	fmt.Printf("%d epochs, %d steps, %d log lines\n", len(h.Records), tr.Steps(), len(recs))
	fmt.Printf("weight %.2f bias %.2f\n", lin.Weight.Value.Item(), lin.Bias.Value.Item())
	// Output:
	// 150 epochs, 600 steps, 150 log lines
	// weight 2.00 bias -1.00
}

// Drive the loop by hand: two micro-batches per optimiser step.
func ExampleTrainer_Step() {
	lin := nn.NewLinear(tensor.NewRNG(1), 1, 1, true, tensor.Float64)
	ds := line()
	loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: 8, Sampler: data.Sequential{N: 16}})
	opt := optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.3})
	tr := train.New(lin, opt, mseLoss(lin), nil, train.Options{})
	var micro []data.Batch
	for b := range loader.Epoch(0) {
		micro = append(micro, b)
	}
	first, _ := tr.Step(micro...)
	for range 200 {
		tr.Step(micro...)
	}
	last, _ := tr.Step(micro...)
	fmt.Printf("loss %.3f, then %.6f\n", first, last)
	// Output:
	// loss 3.866, then 0.000000
}

// Stop after two epochs, save, and resume in a new process (here a new
// Trainer over a model with other weights): the result equals an
// uninterrupted run of four epochs bit for bit.
func ExampleTrainer_Resume() {
	dir, _ := os.MkdirTemp("", "train")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.safetensors")
	setup := func(initSeed uint64, epochs int) (*nn.Linear, *train.Trainer) {
		lin := nn.NewLinear(tensor.NewRNG(initSeed), 1, 1, true, tensor.Float64)
		loader := data.NewLoader(line(), data.LoaderOptions{BatchSize: 4, Sampler: data.Random{N: 16, Seed: 1}})
		opt := optim.NewAdam(nn.Values(lin.Params()), optim.AdamOptions{LR: 0.05})
		return lin, train.New(lin, opt, mseLoss(lin), loader, train.Options{Epochs: epochs, Seed: 3})
	}
	whole, tr := setup(1, 4)
	tr.Fit(context.Background())

	_, first := setup(1, 2)
	first.Fit(context.Background())
	if err := first.Save(path); err != nil {
		fmt.Println(err)
		return
	}
	resumed, second := setup(42, 4)
	if err := second.Resume(path); err != nil {
		fmt.Println(err)
		return
	}
	h, _ := second.Fit(context.Background())
	fmt.Println("resumed at epoch", h.Records[0].Epoch, "after", second.Steps()-len(h.StepLoss), "steps")
	fmt.Println("same weights:", whole.Weight.Value.Item() == resumed.Weight.Value.Item() &&
		whole.Bias.Value.Item() == resumed.Bias.Value.Item())
	// Output:
	// resumed at epoch 3 after 8 steps
	// same weights: true
}

// Fit the line with captured steps (Options.Capture): the loss reads the
// batch through g.VarOf, so each replay of the captured program reads the
// new batch; the fit is the eager loop's, bit for bit.
func ExampleOptions_capture() {
	fit := func(capture bool) (float64, float64) {
		lin := nn.NewLinear(tensor.NewRNG(1), 1, 1, true, tensor.Float64)
		loader := data.NewLoader(line(), data.LoaderOptions{BatchSize: 4, Sampler: data.Random{N: 16, Seed: 1}})
		loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
			return losses.MSE(lin.Forward(g.VarOf(b.X)), g.VarOf(b.Targets), losses.Mean)
		}
		opt := optim.NewAdam(nn.Values(lin.Params()), optim.AdamOptions{LR: 0.05})
		if _, err := train.New(lin, opt, loss, loader, train.Options{Epochs: 100, Capture: capture}).Fit(context.Background()); err != nil {
			fmt.Println(err)
		}
		return lin.Weight.Value.Item(), lin.Bias.Value.Item()
	}
	w, b := fit(true)
	we, be := fit(false)
	fmt.Printf("weight %.2f bias %.2f; the same as eager: %v\n", w, b, w == we && b == be)
	// Output:
	// weight 2.00 bias -1.00; the same as eager: true
}
