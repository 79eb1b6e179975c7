package mnist

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// Options are the command-line settings the MNIST examples share.
type Options struct {
	Epochs  int
	Seed    uint64
	DataDir string // directory of the full MNIST IDX files; "" = embedded subset
	OutDir  string // where the PNG and the checkpoint go; "" = write nothing
	JSON    bool   // print one JSON object with the results on stdout
	LR      float64
	Batch   int

	// For tests: use only the first TrainN/TestN digits (0 = all) and stop
	// after MaxSteps steps (0 = no limit).
	TrainN, TestN, MaxSteps int
}

// RegisterFlags defines the shared flags on fs with the example's
// defaults and returns the Options they fill in when fs is parsed.
func RegisterFlags(fs *flag.FlagSet, name string) *Options {
	o := &Options{LR: 1e-3, Batch: 128}
	fs.IntVar(&o.Epochs, "epochs", 10, "passes over the training data")
	fs.Uint64Var(&o.Seed, "seed", 1, "seeds the initial weights and the batch order")
	fs.StringVar(&o.DataDir, "data", "", "directory holding the full MNIST IDX files (train-images-idx3-ubyte[.gz], ...); default: the embedded 8,000/2,000 subset")
	fs.StringVar(&o.OutDir, "out", filepath.Join("out", name), "directory for the training-curve PNG and the checkpoint")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object with the results (progress goes to stderr)")
	fs.Float64Var(&o.LR, "lr", 1e-3, "Adam learning rate")
	fs.IntVar(&o.Batch, "batch", 128, "mini-batch size")
	return o
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
	StepLoss             []float64 `json:"-"`
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
			x = tensor.Slice(x, 0, 0, limit, 1)
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
// With o.JSON the result is printed to stdout as one JSON object.
func RunMNIST(c Classifier, o Options, stdout, log io.Writer) (res Result, err error) {
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
	if o.OutDir != "" {
		// A JSON-lines log of every epoch, for gradus plot or a script.
		if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
			return res, err
		}
		res.Log = filepath.Join(o.OutDir, "run.jsonl")
		f, err := os.Create(res.Log)
		if err != nil {
			return res, err
		}
		defer f.Close()
		cfg.Log = f
	}
	h, err := FitClassifier(model, forward, x, y, xt, yt, cfg)
	if err != nil {
		return res, err
	}
	res.TrainLossPerEpoch, res.TestAccuracyPerEpoch, res.SecondsPerEpoch, res.StepLoss =
		h.TrainLoss, h.TestAccuracy, h.SecondsPerEpoch, h.StepLoss
	res.TestAccuracy = h.TestAccuracy[len(h.TestAccuracy)-1]
	prog.Printf("test accuracy %.2f %% after %d epochs (%.1f s per epoch)", 100*res.TestAccuracy, len(h.TrainLoss), mean(h.SecondsPerEpoch))

	if o.OutDir != "" {
		res.Plot = filepath.Join(o.OutDir, "training.png")
		err := plot.WritePNG(res.Plot,
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
	}
	res.Seconds = time.Since(start).Seconds()
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}
