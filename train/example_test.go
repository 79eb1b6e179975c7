package train_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// A linear model learns y = 2x − 1 from 32 points in batches of 8 with
// Adam, its learning rate decaying by 0.5 % a step; the loop stops once
// the training loss has not improved for 10 epochs.
func ExampleNew() {
	xs, ys := make([]float64, 32), make([]float64, 32)
	for i := range xs {
		xs[i] = float64(i)/16 - 1
		ys[i] = 2*xs[i] - 1
	}
	ds := &data.TensorDataset{X: tensor.FromFloat64s(xs, 32, 1), Labels: ys}
	model := nn.NewSequential(nn.NewLinear(tensor.NewRNG(1), 1, 1, true, tensor.Float64))
	loss := func(g *graph.Graph, b data.Batch) *graph.Node {
		y := g.Const(tensor.FromFloat64s(b.Labels, len(b.Labels), 1))
		return losses.MSE(model.Forward(g.Const(b.X)), y, losses.Mean)
	}
	loop, err := train.New(model, optim.NewAdam(nn.Values(model.Params()), optim.AdamConfig{}), loss,
		data.NewLoader(ds, data.LoaderOptions{BatchSize: 8, Sampler: data.Random{N: 32, Seed: 1}}),
		train.Config{Epochs: 500, Monitor: "train_loss", Patience: 10, Schedule: optim.ExponentialLR(0.1, 0.995)})
	if err != nil {
		panic(err)
	}
	h, err := loop.Run()
	if err != nil {
		panic(err)
	}
	w, b := model.Params()[0].Value.Item(), model.Params()[1].Value.Item()
	fmt.Printf("stopped early: %v; w ≈ %.2f, b ≈ %.2f\n", h.Stopped, w, b)
	// Output: stopped early: true; w ≈ 2.00, b ≈ -1.00
}
