package mnist

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// Options are the settings the MNIST examples share.
type Options struct {
	Epochs  int
	Seed    uint64
	DataDir string // directory of the full MNIST IDX files; "" = embedded subset
	OutDir  string // where the PNGs, the log and the checkpoint go
	LR      float64
	Batch   int

	// For tests: use only the first TrainN/TestN digits (0 = all) and stop
	// after MaxSteps steps (0 = no limit).
	TrainN, TestN, MaxSteps int
}

// DataUsage is the help of -data in the MNIST examples.
const DataUsage = "directory holding the full MNIST IDX files (train-images-idx3-ubyte[.gz], ...); default: the embedded 8,000/2,000 subset"

// Flags registers the MNIST examples' own flags on fs into o, with o's
// values as the defaults.
func (o *Options) Flags(fs *flag.FlagSet) {
	fs.IntVar(&o.Epochs, "epochs", o.Epochs, "passes over the training data")
	fs.Float64Var(&o.LR, "lr", o.LR, "Adam learning rate")
	fs.IntVar(&o.Batch, "batch", o.Batch, "mini-batch size")
	fs.IntVar(&o.TrainN, "train-n", 0, "use the first n training digits (0: all)")
	fs.IntVar(&o.TestN, "test-n", 0, "use the first n test digits (0: all)")
	fs.IntVar(&o.MaxSteps, "max-steps", 0, "stop after this many optimiser steps (0: no limit)")
}

// DefaultOptions are the MNIST examples' defaults: 10 epochs of Adam at
// 1e-3 on batches of 128.
func DefaultOptions() Options { return Options{Epochs: 10, LR: 1e-3, Batch: 128} }

// FromEnv copies the common flags' -seed, -data and -out into o.
func (o *Options) FromEnv(env *cli.Env) { o.Seed, o.DataDir, o.OutDir = env.Seed, env.Data, env.Out }

// Program is the command-line program that trains c on MNIST.
func Program(c Classifier) cli.Program {
	o := DefaultOptions()
	return cli.Program{
		Name: c.Name, DataUsage: DataUsage, Flags: o.Flags,
		Run: func(env *cli.Env) (any, error) {
			o.FromEnv(env)
			return RunMNIST(c, o, env.Log)
		},
	}
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
// the first trainN/testN digits when those are positive.
func LoadMNIST(dir string, input []int, trainN, testN int) (x *tensor.Tensor, y []int, xt *tensor.Tensor, yt []int, err error) {
	load := func(split string, limit int) (*tensor.Tensor, []int, error) {
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
	if x, y, err = load("train", trainN); err != nil {
		return
	}
	xt, yt, err = load("test", testN)
	return
}

// RunMNIST trains the classifier on MNIST as o says, writing progress to
// log, then writes the training curves and a checkpoint to o.OutDir,
// reloads the checkpoint into a fresh model and compares its predictions.
func RunMNIST(c Classifier, o Options, log io.Writer) (res Result, err error) {
	defer tensor.Recover(&err)
	start := time.Now()
	prog := train.NewProgress(log)
	x, y, xt, yt, err := LoadMNIST(o.DataDir, c.Input, o.TrainN, o.TestN)
	if err != nil {
		return res, err
	}
	model, forward := c.Build(tensor.NewRNG(o.Seed))
	res.Params, res.TrainSize, res.TestSize = nn.NumParams(model), len(y), len(yt)
	prog.Printf("%s: %d parameters, %d training and %d test digits, batch %d, Adam lr %g", c.Name, res.Params, len(y), len(yt), o.Batch, o.LR)
	cfg := Config{Epochs: o.Epochs, Batch: o.Batch, LR: o.LR, Seed: o.Seed, MaxSteps: o.MaxSteps, Progress: log}
	// A JSON-lines log of every epoch, for gradus plot or a script.
	f, path, err := cli.CreateIn(o.OutDir, "run.jsonl")
	if err != nil {
		return res, err
	}
	defer f.Close()
	res.Log, cfg.Log = path, f
	h, err := FitClassifier(model, forward, x, y, xt, yt, cfg)
	if err != nil {
		return res, err
	}
	res.TrainLossPerEpoch, res.TestAccuracyPerEpoch, res.SecondsPerEpoch, res.StepLoss =
		h.TrainLoss, h.TestAccuracy, h.SecondsPerEpoch, h.StepLoss
	res.TestAccuracy = h.TestAccuracy[len(h.TestAccuracy)-1]
	prog.Printf("test accuracy %.2f %% after %d epochs (%.1f s per epoch)", 100*res.TestAccuracy, len(h.TrainLoss), mean(h.SecondsPerEpoch))

	res.Plot = filepath.Join(o.OutDir, "training.png")
	err = plot.WritePNG(res.Plot,
		plot.Panel{Title: c.Name + ": training loss", XLabel: "epoch", YLabel: "cross-entropy",
			Curves: []plot.Curve{{Name: "train", Y: h.TrainLoss}}},
		plot.Panel{Title: c.Name + ": test accuracy", XLabel: "epoch", YLabel: "accuracy",
			Curves: []plot.Curve{{Name: "test", Y: h.TestAccuracy}}})
	if err != nil {
		return res, err
	}
	prog.Printf("wrote %s", res.Plot)

	res.ConfusionPlot = filepath.Join(o.OutDir, "confusion.png")
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

	res.Checkpoint = filepath.Join(o.OutDir, "model.safetensors")
	fresh, freshForward := c.Build(tensor.NewRNG(o.Seed + 1))
	meta := map[string]string{"model": c.Name, "epochs": fmt.Sprint(len(h.TrainLoss)),
		"seed": fmt.Sprint(o.Seed), "test_accuracy": fmt.Sprint(res.TestAccuracy)}
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
