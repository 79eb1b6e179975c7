package train

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// Each misuse of the training loop's constructors panics with a
// *tensor.Error naming the call, what was wrong and the test's line.
func TestTrainerMisusePanicsNameCallAndCaller(t *testing.T) {
	lin := newLinear(tensor.Float64, 1)
	opt := optim.NewAdam(nn.Values(lin.Params()), optim.AdamOptions{})
	other := optim.NewAdam(nn.Values(newLinear(tensor.Float64, 2).Params()), optim.AdamOptions{})
	loss := mse(lin, 0)
	loader := data.NewLoader(regression(tensor.Float64, 8), data.LoaderOptions{BatchSize: 4})
	x := tensor.New(tensor.Float64, 4, 3)
	both := Options{Plateau: &optim.PlateauOptions{}, Schedule: optim.Constant(1)}
	logits := func(g *graph.Graph, xb *tensor.Tensor) *graph.Node { return lin.Forward(g.Const(xb)) }
	cases := []struct {
		name, op, site string
		f              func()
		frag           string
	}{
		{"nil model", "train.New", numtest.Here(), func() { New(nil, opt, loss, loader, Options{}) }, "model is nil"},
		{"nil optimiser", "train.New", numtest.Here(), func() { New(lin, nil, loss, loader, Options{}) }, "optimiser is nil"},
		{"nil loss", "train.New", numtest.Here(), func() { New(lin, opt, nil, loader, Options{}) }, "loss function is nil"},
		{"optimiser of another model", "train.New", numtest.Here(), func() { New(lin, other, loss, loader, Options{}) }, "not the optimiser's parameter 0"},
		{"negative epochs", "train.New", numtest.Here(), func() { New(lin, opt, loss, loader, Options{Epochs: -1}) }, "Epochs -1"},
		{"negative max steps", "train.New", numtest.Here(), func() { New(lin, opt, loss, loader, Options{MaxSteps: -5}) }, "MaxSteps -5"},
		{"NaN clip norm", "train.New", numtest.Here(), func() { New(lin, opt, loss, loader, Options{ClipNorm: math.NaN()}) }, "ClipNorm NaN"},
		{"negative min delta", "train.New", numtest.Here(), func() { New(lin, opt, loss, loader, Options{MinDelta: -1}) }, "MinDelta -1"},
		{"Plateau with Schedule", "train.New", numtest.Here(), func() { New(lin, opt, loss, loader, both) }, "Plateau and Schedule both set the learning rate"},
		{"nil dataset for the loader", "data.NewLoader", numtest.Here(), func() { New(lin, opt, loss, data.NewLoader(nil, data.LoaderOptions{BatchSize: 4}), Options{}) }, "dataset is nil"},
		{"Predict batch 0", "train.Predict", numtest.Here(), func() { Predict(x, 0, logits) }, "batch size 0"},
		{"Predict nil forward", "train.Predict", numtest.Here(), func() { Predict(x, 2, nil) }, "forward is nil"},
		{"Predict nil logits", "train.Predict", numtest.Here(), func() { Predict(x, 2, func(*graph.Graph, *tensor.Tensor) *graph.Node { return nil }) }, "forward returned nil for rows 0…1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			numtest.Misuse(t, c.op, c.site, c.f, c.frag)
		})
	}
}
