// Package mnisttest holds the check the MNIST examples' tests share, kept
// apart from package mnist so the example programs do not link package
// testing.
package mnisttest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// CheckQuickRun is the shared body of the examples' tests: it runs c's
// program through the cli with args (small settings: -train-n, -max-steps,
// …) and checks that the training loss falls (the mean of the last three
// step losses is below dropTo times that of the first three) and that the
// JSON object has the documented keys. The pictures, the log and the
// checkpoint go to a temporary folder, and the reloaded checkpoint must
// predict as the trained model does.
func CheckQuickRun(t *testing.T, c mnist.Classifier, dropTo float64, args ...string) mnist.Result {
	t.Helper()
	res, r := clitest.Check[mnist.Result](t, mnist.Program(c), clitest.Expect{
		Fields:   []string{"test_accuracy", "train_loss_per_epoch", "seconds", "checkpoint_match"},
		Pictures: []string{"training.png", "confusion.png"}}, args...)
	require.GreaterOrEqual(t, len(res.StepLoss), 6)
	first := mean(res.StepLoss[:3])
	last := mean(res.StepLoss[len(res.StepLoss)-3:])
	t.Logf("%s: mean loss of the first three steps %.3f, of the last three %.3f", c.Name, first, last)
	assert.Less(t, last, dropTo*first, "training loss should fall: first steps %.3f, last steps %.3f", first, last)

	recs := clitest.Log(t, res.Log)
	require.Len(t, recs, len(res.TrainLossPerEpoch))
	assert.Equal(t, res.TrainLossPerEpoch[0], recs[0].TrainLoss)
	assert.Equal(t, res.TestAccuracyPerEpoch[0], recs[0].Metrics["test_accuracy"])
	assert.FileExists(t, res.Checkpoint)
	assert.True(t, res.CheckpointMatch != nil && *res.CheckpointMatch, "the reloaded checkpoint must predict the same classes")

	obj := r.JSON
	acc, ok := obj["test_accuracy"].(float64)
	assert.True(t, ok && acc >= 0 && acc <= 1, "test_accuracy %v must be a fraction", obj["test_accuracy"])
	losses, ok := obj["train_loss_per_epoch"].([]any)
	assert.True(t, ok && len(losses) == len(res.TrainLossPerEpoch) && len(losses) >= 1, "train_loss_per_epoch %v", obj["train_loss_per_epoch"])
	secs, ok := obj["seconds"].(float64)
	assert.True(t, ok && secs > 0, "seconds %v", obj["seconds"])
	return res
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// BenchmarkStep measures one training step of c on a fixed batch of the
// first batch embedded training digits, reporting allocations: what a step
// costs beyond the memory its graph recycles.
func BenchmarkStep(b *testing.B, c mnist.Classifier, batch int) {
	x, y, _, _, err := mnist.LoadMNIST("", c.Input, mnist.Subset{TrainN: batch, TestN: 1})
	if err != nil {
		b.Fatal(err)
	}
	model, forward := c.Build(tensor.NewRNG(1))
	tr := mnist.NewTrainer(model, forward, x, y, batch, 1e-3, train.Options{})
	bt := data.Batch{X: x, Labels: y}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tr.Step(bt); err != nil {
			b.Fatal(err)
		}
	}
}
