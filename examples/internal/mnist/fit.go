package mnist

import (
	"fmt"
	"time"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// Config configures FitClassifier.
type Config struct {
	Epochs   int     // passes over the training data
	Batch    int     // mini-batch size
	LR       float64 // Adam's learning rate
	Seed     uint64  // seeds the batch order
	MaxSteps int     // stop after this many steps in all (0: no limit), for quick tests
	Progress *train.Progress
}

// History records a training run.
type History struct {
	TrainLoss       []float64                 // mean training cross-entropy of each epoch
	TestAccuracy    []float64                 // test accuracy after each epoch
	StepLoss        []float64                 // the loss of every step
	SecondsPerEpoch []float64                 // wall time of each epoch's training steps
	Seconds         float64                   // total wall time, evaluation included
	OptState        map[string]*tensor.Tensor // the optimiser's final state, for a checkpoint
}

// FitClassifier trains model with Adam on the mean cross-entropy of
// forward's logits, in shuffled mini-batches of the rows of x with labels y,
// and measures the accuracy on (xTest, yTest) after each epoch. Each step
// reuses one graph (Reset) and the batch buffers, so a step allocates
// little. A non-finite gradient stops training with an error, the
// parameters left at their last finite values.
func FitClassifier(model nn.Module, forward Forward, x *tensor.Tensor, y []int,
	xTest *tensor.Tensor, yTest []int, cfg Config) (h History, err error) {
	defer tensor.Recover(&err)
	start := time.Now()
	prog := cfg.Progress
	if prog == nil {
		prog = train.NewProgress(nil)
	}
	tr := NewTrainer(model, forward, x, y, cfg.LR)
	batches := data.NewBatcher(x.Shape()[0], cfg.Batch, data.BatchOptions{Seed: cfg.Seed})
	steps := 0
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		model.SetTraining(true)
		t0 := time.Now()
		prog.StartEpoch(fmt.Sprintf("epoch %d/%d", epoch, cfg.Epochs), batches.NumBatches())
		sum, seen := 0.0, 0
		for idx := range batches.Epoch() {
			l, err := tr.Step(idx)
			if err != nil {
				return h, fmt.Errorf("epoch %d, step %d (loss %g): %w", epoch, steps+1, l, err)
			}
			sum += l * float64(len(idx))
			seen += len(idx)
			h.StepLoss = append(h.StepLoss, l)
			prog.Step(l)
			steps++
			if cfg.MaxSteps > 0 && steps >= cfg.MaxSteps {
				break
			}
		}
		tr.g.Reset()
		secs := time.Since(t0).Seconds()
		h.SecondsPerEpoch = append(h.SecondsPerEpoch, secs)
		h.TrainLoss = append(h.TrainLoss, sum/float64(max(seen, 1)))
		model.SetTraining(false)
		acc := Accuracy(Predict(xTest, 500, forward), yTest)
		h.TestAccuracy = append(h.TestAccuracy, acc)
		prog.EndEpoch("train loss %.4f  test accuracy %.2f %%  (%.1f s)", h.TrainLoss[epoch-1], 100*acc, secs)
		if cfg.MaxSteps > 0 && steps >= cfg.MaxSteps {
			break
		}
	}
	h.OptState = tr.opt.State()
	h.Seconds = time.Since(start).Seconds()
	return h, nil
}

// Trainer takes Adam steps on the mean cross-entropy of a classifier over
// mini-batches of the rows of x. It keeps one graph, reset every step, and
// reuses the batch buffers, so a step allocates little beyond what the
// graph recycles.
type Trainer struct {
	forward Forward
	params  []nn.NamedParam
	opt     *optim.Adam
	rows    *data.Gatherer
	y, yb   []int
	g       *graph.Graph
}

// NewTrainer returns a Trainer for model, whose logits forward computes,
// on the examples x (rows) with labels y, using Adam with learning rate lr.
func NewTrainer(model nn.Module, forward Forward, x *tensor.Tensor, y []int, lr float64) *Trainer {
	params := model.Params()
	return &Trainer{
		forward: forward, params: params,
		opt:  optim.NewAdam(nn.Values(params), optim.AdamConfig{LR: lr}),
		rows: data.NewGatherer(x), y: y, g: graph.New(),
	}
}

// Step takes one optimiser step on the examples idx and returns their mean
// loss. A non-finite gradient is an error, and the parameters are then left
// unchanged.
func (t *Trainer) Step(idx []int) (loss float64, err error) {
	t.g.Reset()
	t.yb = data.GatherLabels(t.yb[:0], t.y, idx)
	l := losses.CrossEntropy(t.forward(t.g, t.rows.Gather(idx)), t.yb)
	loss = l.Item()
	return loss, t.opt.Step(nn.Gradients(l, t.params))
}
