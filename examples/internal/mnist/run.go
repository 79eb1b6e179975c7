package mnist

import (
	"fmt"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// Options are the settings the MNIST examples share; the tagged fields
// are their flags (cli.Configured). -seed, -data (a directory of the full
// MNIST IDX files, or the embedded subset) and -out come from the Env.
type Options struct {
	cli.Training     // -epochs, -batch, -lr
	cli.Device       // -device
	Subset           // -train-n, -test-n
	MaxSteps     int `flag:"max-steps" help:"stop after this many optimiser steps (0: no limit)"`
}

// Subset is the flags that cut the splits to their first digits for a
// quick run; every program that trains on MNIST embeds it in its settings
// and hands it to LoadMNIST.
type Subset struct {
	TrainN int `flag:"train-n" help:"use the first n training digits (0: all)"`
	TestN  int `flag:"test-n" help:"use the first n test digits (0: all)"`
}

// DataUsage is the help of -data in the MNIST examples.
const DataUsage = "directory holding the full MNIST IDX files (train-images-idx3-ubyte[.gz], ...); default: the embedded 8,000/2,000 subset"

// DefaultOptions are the MNIST examples' defaults: 10 epochs of Adam at
// 1e-3 on batches of 128.
func DefaultOptions() Options {
	return Options{Training: cli.Training{Epochs: 10, LR: 1e-3, Batch: 128}}
}

// Program is the command-line program that trains c on MNIST.
func Program(c Classifier) cli.Program {
	return cli.Configured(cli.Program{Name: c.Name, DataUsage: DataUsage}, DefaultOptions(), func(o Options, env *cli.Env) (Result, error) {
		return RunMNIST(c, o, env)
	})
}

// Classifier is an MNIST classification example: Build makes a fresh model
// from a seed and the function that runs it on a batch whose rows have the
// per-sample shape Input (e.g. (784) or (1, 28, 28)).
type Classifier struct {
	Name  string
	Input []int
	Build func(rng *tensor.RNG) (nn.Module, train.Forward)
}

// Result is what an MNIST example reports; with -json it is printed as one
// JSON object.
type Result struct {
	TestAccuracy         float64   `json:"test_accuracy"` // fraction in [0, 1]
	TrainLossPerEpoch    []float64 `json:"train_loss_per_epoch"`
	TestAccuracyPerEpoch []float64 `json:"test_accuracy_per_epoch"`
	Seconds              float64   `json:"seconds"` // whole run, loading and checkpoint included
	SecondsPerEpoch      []float64 `json:"seconds_per_epoch"`
	Params               int       `json:"params"`
	TrainSize            int       `json:"train_size"`
	TestSize             int       `json:"test_size"`
	Plot                 string    `json:"plot,omitempty"`
	ConfusionPlot        string    `json:"confusion_plot,omitempty"`
	Log                  string    `json:"log,omitempty"` // the JSON-lines training log
	Checkpoint           string    `json:"checkpoint,omitempty"`
	CheckpointMatch      *bool     `json:"checkpoint_match,omitempty"` // predictions of the reloaded model agree
	StepLoss             []float64 `json:"step_loss"`                  // every optimiser step's loss
}

// LoadMNIST loads the train and test splits, from dir if given, else the
// embedded subset, reshaped so each row has the shape input, and cut to
// the first s.TrainN/s.TestN digits when those are positive.
func LoadMNIST(dir string, input []int, s Subset) (x *tensor.Tensor, y []int, xt *tensor.Tensor, yt []int, err error) {
	if x, y, err = Split(dir, "train", input, s.TrainN); err != nil {
		return
	}
	xt, yt, err = Split(dir, "test", input, s.TestN)
	return
}

// Split loads one split ("train" or "test") from dir if given, else the
// embedded subset, reshaped so each row has the shape input, and cut to
// the first limit digits when limit is positive.
func Split(dir, split string, input []int, limit int) (*tensor.Tensor, []int, error) {
	var x *tensor.Tensor
	var y []int
	var err error
	if dir == "" {
		x, y, err = data.MNIST(split)
	} else {
		x, y, err = data.MNISTFromDir(dir, split)
	}
	if err != nil {
		return nil, nil, err
	}
	if limit > 0 && limit < len(y) {
		x = tensor.Slice(x, 0, 0, limit, 1).Contiguous()
		y = y[:limit]
	}
	return tensor.Reshape(x, append([]int{len(y)}, input...)...), y, nil
}

// RunMNIST trains the classifier on MNIST (-data) as o says, from -seed,
// then writes the training curves and a checkpoint into -out, reloads the
// checkpoint into a fresh model and compares its predictions.
func RunMNIST(c Classifier, o Options, env *cli.Env) (res Result, err error) {
	defer tensor.Recover(&err)
	start := time.Now()
	prog := train.NewProgress(env.Log)
	x, y, xt, yt, err := LoadMNIST(env.Data, c.Input, o.Subset)
	if err != nil {
		return res, err
	}
	dev, err := o.Device.Open()
	if err != nil {
		return res, err
	}
	model, forward := c.Build(tensor.NewRNG(env.Seed))
	nn.To(model, dev) // before the optimiser, which keeps the tensors it is given
	res.Params, res.TrainSize, res.TestSize = nn.NumParams(model), len(y), len(yt)
	prog.Printf("%s: %d parameters on %v, %d training and %d test digits, batch %d, Adam lr %g", c.Name, res.Params, dev, len(y), len(yt), o.Batch, o.LR)
	cfg := Config{Epochs: o.Epochs, Batch: o.Batch, LR: o.LR, Seed: env.Seed, MaxSteps: o.MaxSteps, Progress: env.Log}
	// A JSON-lines log of every epoch, for gradus plot or a script.
	f, path, err := cli.CreateIn(env.Out, "run.jsonl")
	if err != nil {
		return res, err
	}
	defer f.Close()
	res.Log, cfg.Log = path, f
	h, err := FitClassifier(env.Context(), model, forward, x, y, xt, yt, cfg)
	if err != nil {
		return res, err
	}
	res.TrainLossPerEpoch, res.TestAccuracyPerEpoch, res.SecondsPerEpoch, res.StepLoss =
		h.TrainLoss, h.TestAccuracy, h.SecondsPerEpoch, h.StepLoss
	res.TestAccuracy = h.TestAccuracy[len(h.TestAccuracy)-1]
	prog.Printf("test accuracy %.2f %% after %d epochs (%.1f s per epoch)", 100*res.TestAccuracy, len(h.TrainLoss), mean(h.SecondsPerEpoch))

	res.Plot, err = env.WritePNG("training.png",
		plot.Panel{Title: c.Name + ": training loss", XLabel: "epoch", YLabel: "cross-entropy",
			Curves: []plot.Curve{{Name: "train", Y: h.TrainLoss}}},
		plot.Panel{Title: c.Name + ": test accuracy", XLabel: "epoch", YLabel: "accuracy",
			Curves: []plot.Curve{{Name: "test", Y: h.TestAccuracy}}})
	if err != nil {
		return res, err
	}

	res.ConfusionPlot = env.Path("confusion.png")
	pred, _ := train.Predict(xt, 500, forward)
	cm, err := metrics.Confusion(pred, yt, 10)
	if err != nil {
		return res, err
	}
	names := make([]string, 10)
	for d := range names {
		names[d] = fmt.Sprint(d)
	}
	if err := plot.Confusion(res.ConfusionPlot, c.Name+": test confusion matrix", cm, names); err != nil {
		return res, err
	}
	prog.Printf("wrote %s", res.ConfusionPlot)

	res.Checkpoint = env.Path("model.safetensors")
	fresh, freshForward := c.Build(tensor.NewRNG(env.Seed + 1))
	nn.To(fresh, dev)
	meta := map[string]string{"model": c.Name, "epochs": fmt.Sprint(len(h.TrainLoss)),
		"seed": fmt.Sprint(env.Seed), "test_accuracy": fmt.Sprint(res.TestAccuracy)}
	match, err := CheckpointRoundTrip(res.Checkpoint, model, fresh, h.OptState, meta, func() ([]int, []int) {
		a, _ := train.Predict(xt, 500, forward)
		b, _ := train.Predict(xt, 500, freshForward)
		return a, b
	})
	if err != nil {
		return res, err
	}
	res.CheckpointMatch = &match
	prog.Printf("wrote %s; reloaded into a fresh model: predictions match: %v", res.Checkpoint, match)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}
