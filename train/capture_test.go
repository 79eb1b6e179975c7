package train

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// seqRegression is a recurrent regression: the sum of each sequence of 6
// steps of 2 features, read by an LSTM(2→5) and a Linear(5→1).
type seqRegression struct {
	lstm *nn.LSTM
	head *nn.Linear
}

func newSeqRegression(seed uint64) *seqRegression {
	rng := tensor.NewRNG(seed)
	return &seqRegression{lstm: nn.NewLSTM(rng, 2, 5, nn.RNNOptions{BatchFirst: true, DType: tensor.Float64}), head: nn.NewLinear(rng, 5, 1, true, tensor.Float64)}
}

func (m *seqRegression) Params() []nn.NamedParam {
	return append(nn.Prefix("lstm", m.lstm.Params()), nn.Prefix("head", m.head.Params())...)
}

func (m *seqRegression) SetTraining(bool) {}

// loss reads the batch through g.VarOf, as a captured step must.
func (m *seqRegression) loss(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
	_, h, _ := m.lstm.Forward(g.VarOf(b.X), nil, nil)
	s := h.Shape()
	pred := m.head.Forward(graph.Reshape(h, s[1], s[2]))
	return losses.MSE(pred, g.VarOf(b.Targets), losses.Mean)
}

func seqData(n int) data.TensorDataset {
	rng := tensor.NewRNG(3)
	x := rng.Normal(tensor.Float64, 0, 1, n, 6, 2)
	xs := x.Values()
	y := make([]float64, n)
	for i := range y {
		for _, v := range xs[i*12 : (i+1)*12] {
			y[i] += v / 4
		}
	}
	return data.TensorDataset{X: x, Targets: tensor.FromValues(tensor.Float64, y, n, 1)}
}

// TestCaptureEqualsEager trains the same LSTM eagerly and with captured
// steps: 23 examples in batches of 5 (a smaller last batch, so two
// programs), two micro-batches a step, clipping and a schedule, 45 steps. Every
// step's loss and the final parameters must agree bit for bit.
func TestCaptureEqualsEager(t *testing.T) {
	run := func(capture bool) ([]float64, [][]float64) {
		m := newSeqRegression(9)
		loader := data.NewLoader(seqData(23), data.LoaderOptions{BatchSize: 5, Sampler: data.Random{N: 23, Seed: 4}})
		opt := optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: 0.03})
		tr := New(m, opt, m.loss, loader, Options{Epochs: 15, Accumulate: 2, ClipNorm: 1,
			Schedule: optim.CosineAnnealingLR(0.03, 45, 0), Capture: capture})
		h, err := tr.Fit(context.Background())
		require.NoError(t, err)
		if capture {
			require.Len(t, tr.programs, 2, "one program per batch shape")
		}
		return h.StepLoss, values(m)
	}
	eagerLoss, eagerParams := run(false)
	captLoss, captParams := run(true)
	require.Len(t, captLoss, len(eagerLoss))
	for i := range eagerLoss {
		if math.Float64bits(eagerLoss[i]) != math.Float64bits(captLoss[i]) {
			t.Fatalf("step %d: captured loss %v, eager %v", i, captLoss[i], eagerLoss[i])
		}
	}
	n := len(eagerLoss)
	first := (eagerLoss[0] + eagerLoss[1] + eagerLoss[2]) / 3
	last := (eagerLoss[n-1] + eagerLoss[n-2] + eagerLoss[n-3]) / 3
	require.Less(t, last, first/2, "training lowers the loss")
	for i := range eagerParams {
		for j := range eagerParams[i] {
			if math.Float64bits(eagerParams[i][j]) != math.Float64bits(captParams[i][j]) {
				t.Fatalf("parameter %d element %d: captured %v, eager %v", i, j, captParams[i][j], eagerParams[i][j])
			}
		}
	}
}

// TestCaptureRefusals: a loss that freezes the batch (g.Const), draws
// random numbers, or a Trainer that also has Options.Gradients.
func TestCaptureRefusals(t *testing.T) {
	lin := newLinear(tensor.Float64, 1)
	loader := data.NewLoader(regression(tensor.Float64, 12), data.LoaderOptions{BatchSize: 4})
	newTrainer := func(loss LossFunc) *Trainer {
		return New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), loss, loader, Options{Capture: true})
	}
	before := values(lin)
	_, err := newTrainer(mse(lin, 0)).Fit(context.Background())
	require.ErrorIs(t, err, graph.ErrNotCapturable)
	require.ErrorContains(t, err, "g.VarOf")
	_, err = newTrainer(func(g *graph.Graph, b data.Batch, rng *tensor.RNG) *graph.Node {
		x := graph.Add(g.VarOf(b.X), g.Const(rng.Normal(tensor.Float64, 0, 0.1, b.X.Shape()...)))
		return losses.MSE(lin.Forward(x), g.VarOf(b.Targets), losses.Mean)
	}).Fit(context.Background())
	require.ErrorIs(t, err, graph.ErrNotCapturable)
	require.Equal(t, before, values(lin), "parameters untouched by the failed steps")
	require.Panics(t, func() {
		New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), mse(lin, 0), loader,
			Options{Capture: true, Gradients: func(*graph.Node, []nn.NamedParam) ([]*tensor.Tensor, error) { return nil, nil }})
	})
}
