package mnist

import (
	"context"
	"io"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// Config configures FitClassifier.
type Config struct {
	Epochs   int       // passes over the training data
	Batch    int       // mini-batch size
	LR       float64   // Adam's learning rate
	Seed     uint64    // seeds the batch order
	MaxSteps int       // stop after this many steps in all (0: no limit), for quick tests
	Progress io.Writer // progress bar on a terminal, a line per epoch otherwise
	Log      io.Writer // JSON-lines log of every epoch (may be nil)
}

// History records a training run.
type History struct {
	TrainLoss       []float64                 // mean training cross-entropy of each epoch
	TestAccuracy    []float64                 // test accuracy after each epoch
	StepLoss        []float64                 // the loss of every step
	SecondsPerEpoch []float64                 // wall time of each epoch's training steps
	OptState        map[string]*tensor.Tensor // the optimiser's final state, for a checkpoint
}

// CrossEntropy is the loss of a classifier whose logits forward computes:
// the mean cross-entropy of a batch whose labels are class indices.
func CrossEntropy(forward train.Forward) train.LossFunc {
	return func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
		return losses.CrossEntropy(forward(g, b.X), b.Labels, losses.CrossEntropyOptions{})
	}
}

// NewTrainer returns a public train.Trainer that trains model with Adam at
// rate lr on the mean cross-entropy of forward's logits over mini-batches
// of batch rows of x with labels y, shuffled from cfg.Seed.
func NewTrainer(model nn.Module, forward train.Forward, x *tensor.Tensor, y []int, batch int, lr float64, cfg train.Options) *train.Trainer {
	loader := data.NewLoader(data.TensorDataset{X: x, Labels: y}, data.LoaderOptions{BatchSize: batch, Seed: cfg.Seed})
	opt := optim.NewAdam(nn.Values(model.Params()), optim.AdamOptions{LR: lr})
	return train.New(model, opt, CrossEntropy(forward), loader, cfg)
}

// FitClassifier trains model on (x, y) and measures the accuracy on
// (xTest, yTest) after each epoch. A non-finite loss or gradient stops
// training with an error, the parameters left at their last finite values;
// cancelling ctx (Ctrl-C) stops it after the step in progress.
func FitClassifier(ctx context.Context, model nn.Module, forward train.Forward, x *tensor.Tensor, y []int,
	xTest *tensor.Tensor, yTest []int, cfg Config) (h History, err error) {
	tr := NewTrainer(model, forward, x, y, cfg.Batch, cfg.LR, train.Options{
		Epochs: cfg.Epochs, Seed: cfg.Seed, MaxSteps: cfg.MaxSteps, Progress: cfg.Progress, Log: cfg.Log,
		Eval: func(int) (map[string]float64, error) {
			pred, _ := train.Predict(xTest, 500, forward)
			acc, err := metrics.Accuracy(pred, yTest)
			return map[string]float64{"test_accuracy": acc}, err
		},
	})
	th, err := tr.Fit(ctx)
	for _, r := range th.Records {
		h.TrainLoss = append(h.TrainLoss, r.TrainLoss)
		h.TestAccuracy = append(h.TestAccuracy, r.Metrics["test_accuracy"])
		h.SecondsPerEpoch = append(h.SecondsPerEpoch, r.Seconds)
	}
	h.StepLoss = th.StepLoss
	h.OptState = tr.Optimizer().State(nn.Names(model.Params()))
	return h, err
}
