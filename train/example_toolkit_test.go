package train_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// residual is a custom layer, a residual MLP block x + W₂·relu(W₁x + b₁) + b₂
// (He, Zhang, Ren and Sun 2016, "Deep residual learning for image
// recognition"). A layer is any type with Params, SetTraining and Forward;
// its parameters are named by prefixing its children's.
type residual struct{ fc1, fc2 *nn.Linear }

func newResidual(rng *tensor.RNG, width, hidden int) *residual {
	return &residual{nn.NewLinear(rng, width, hidden, true, tensor.Float64), nn.NewLinear(rng, hidden, width, true, tensor.Float64)}
}

func (r *residual) Params() []nn.NamedParam {
	return append(nn.Prefix("fc1", r.fc1.Params()), nn.Prefix("fc2", r.fc2.Params())...)
}

func (r *residual) SetTraining(bool) {}

func (r *residual) Forward(x *graph.Node) *graph.Node {
	return graph.Add(x, r.fc2.Forward(graph.Relu(r.fc1.Forward(x))))
}

// classifier is 30 features → 16 → residual block → 2 classes.
func classifier(seed uint64) *nn.Sequential {
	rng := tensor.NewRNG(seed)
	return nn.NewSequential(nn.NewLinear(rng, 30, 16, true, tensor.Float64), newResidual(rng, 16, 32),
		nn.ReLU{}, nn.NewLinear(rng, 16, 2, true, tensor.Float64))
}

// A custom layer trained on the breast cancer data set with train, data
// and metrics, saved to a checkpoint, reloaded into a fresh model and
// evaluated. Labels ([]int), the state dict (nn.State) and the
// probabilities ((n, classes) tensor) pass from package to package as
// they are.
func Example_customLayer() {
	x, y, err := data.Classes("sklearn/breast_cancer.csv", "target")
	if err != nil {
		panic(err)
	}
	trainIdx, testIdx := data.TrainTestSplit(len(y), 0.25, 1)
	xTrain, xTest := tensor.IndexSelect(x, 0, trainIdx), tensor.IndexSelect(x, 0, testIdx)
	yTrain, yTest := data.GatherLabels(nil, y, trainIdx), data.GatherLabels(nil, y, testIdx)
	data.Standardise(xTrain).Apply(xTest) // the training set's statistics for both

	model := classifier(1)
	opt := optim.NewAdam(nn.Values(model.Params()), optim.AdamOptions{LR: 0.001})
	loader := data.NewLoader(data.TensorDataset{X: xTrain, Labels: yTrain}, data.LoaderOptions{BatchSize: 32, Seed: 1})
	loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
		return losses.CrossEntropy(model.Forward(g.Const(b.X)), b.Labels, losses.CrossEntropyOptions{})
	}
	if _, err := train.New(model, opt, loss, loader, train.Options{Epochs: 20}).Fit(context.Background()); err != nil {
		panic(err)
	}

	dir, err := os.MkdirTemp("", "toolkit-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	if err := checkpoint.Save(path, model, checkpoint.SaveOptions{Optimizer: opt}); err != nil {
		panic(err)
	}
	fresh := classifier(2) // other initial weights
	if _, err := checkpoint.LoadInto(path, fresh, checkpoint.LoadOptions{}); err != nil {
		panic(err)
	}

	predict := func(m *nn.Sequential) ([]int, *tensor.Tensor) {
		m.SetTraining(false)
		return train.Predict(xTest, 64, func(g *graph.Graph, xb *tensor.Tensor) *graph.Node { return m.Forward(g.Const(xb)) })
	}
	classes, proba := predict(fresh)
	trained, _ := predict(model)
	acc, _ := metrics.Accuracy(classes, yTest)
	logLoss, _ := metrics.LogLoss(proba, yTest)
	fmt.Printf("%d test rows: accuracy %.2f, log loss %.1f\n", len(yTest), acc, logLoss)
	fmt.Println("the reloaded model predicts as the trained one:", slices.Equal(classes, trained))
	// Output:
	// 143 test rows: accuracy 0.95, log loss 0.2
	// the reloaded model predicts as the trained one: true
}
