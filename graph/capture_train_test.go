package graph_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// mlpTask is a ReLU perceptron with a softmax cross-entropy against
// one-hot targets (a tensor input, so a captured step reads new labels),
// and the batches it trains on.
type mlpTask struct {
	model  *nn.Sequential
	params []*tensor.Tensor
	xs, ys []*tensor.Tensor // batches and their one-hot targets
}

func newMLPTask(seed uint64, sizes []int, batch, batches int) *mlpTask {
	rng := tensor.NewRNG(seed)
	var layers []nn.Layer
	for i := 0; i+1 < len(sizes); i++ {
		if i > 0 {
			layers = append(layers, nn.ReLU{})
		}
		layers = append(layers, nn.NewLinear(rng, sizes[i], sizes[i+1], true, tensor.Float32))
	}
	t := &mlpTask{model: nn.NewSequential(layers...)}
	t.params = nn.Values(t.model.Params())
	classes := sizes[len(sizes)-1]
	data := tensor.NewRNG(seed + 1)
	for range batches {
		t.xs = append(t.xs, data.Normal(tensor.Float32, 0, 1, batch, sizes[0]))
		y := tensor.New(tensor.Float32, batch, classes)
		for i := range batch {
			y.SetAt(1, i, data.Intn(classes))
		}
		t.ys = append(t.ys, y)
	}
	return t
}

// step is the step function: in = (x, one-hot y, parameters...), out =
// (loss, gradients...).
func (t *mlpTask) step(g *graph.Graph, in []*graph.Node) []*graph.Node {
	logp := graph.LogSoftmax(t.model.Forward(in[0]), 1)
	n := float64(in[0].Shape()[0])
	loss := graph.MulScalar(graph.Sum(graph.Mul(logp, in[1]), nil, false), -1/n)
	return append([]*graph.Node{loss}, autodiff.Grad(loss, in[2:]...)...)
}

func (t *mlpTask) inputs(k int) []*tensor.Tensor {
	return append([]*tensor.Tensor{t.xs[k%len(t.xs)], t.ys[k%len(t.ys)]}, t.params...)
}

// eagerStep builds the step on g (Reset first, as a training loop does)
// and returns the loss and the gradients' values.
func (t *mlpTask) eagerStep(g *graph.Graph, k int) (float64, []*tensor.Tensor) {
	g.Reset()
	in := t.inputs(k)
	nodes := make([]*graph.Node, len(in))
	for i, x := range in {
		nodes[i] = g.VarOf(x)
	}
	out := t.step(g, nodes)
	grads := make([]*tensor.Tensor, len(out)-1)
	for i, n := range out[1:] {
		grads[i] = n.Value()
	}
	return out[0].Item(), grads
}

func TestCapturedTrainingEqualsEagerBitForBit(t *testing.T) {
	tests := []struct {
		name string
		opt  func(ps []*tensor.Tensor) optim.Optimizer
	}{
		{"sgd with momentum", func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewSGD(ps, optim.SGDOptions{LR: 0.05, Momentum: 0.9})
		}},
		{"adam", func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdam(ps, optim.AdamOptions{LR: 1e-3})
		}},
	}
	const steps = 100
	sizes := []int{64, 32, 10}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eager, capt := newMLPTask(11, sizes, 32, 7), newMLPTask(11, sizes, 32, 7)
			eagerOpt, captOpt := tt.opt(eager.params), tt.opt(capt.params)
			p, err := graph.Capture(capt.step, capt.inputs(0), graph.CaptureOptions{})
			require.NoError(t, err)
			g := graph.New()
			first, last := 0.0, 0.0
			for k := range steps {
				wantLoss, wantGrads := eager.eagerStep(g, k)
				out, err := p.Run(capt.inputs(k)) // a new batch every call
				require.NoError(t, err)
				if math.Float64bits(out[0].Item()) != math.Float64bits(wantLoss) {
					t.Fatalf("step %d: captured loss %v, eager %v", k, out[0].Item(), wantLoss)
				}
				requireSameBits(t, wantGrads, out[1:], "gradients")
				require.NoError(t, eagerOpt.Step(wantGrads))
				require.NoError(t, captOpt.Step(out[1:]))
				if k == 0 {
					first = wantLoss
				}
				last = wantLoss
			}
			requireSameBits(t, eager.params, capt.params, "parameters after training")
			require.Less(t, last, first, "training lowers the loss")
		})
	}
}

// BenchmarkCapturedMLPStep times one training step (forward, backward,
// Adam) of a 784-128-10 MLP on batches of 128, and of a small 64-32-10 one
// on batches of 32 where the graph's own overhead weighs more, built
// eagerly on a Reset graph and replayed by a captured program, in the same
// run.
func BenchmarkCapturedMLPStep(b *testing.B) {
	for _, c := range []struct {
		name  string
		sizes []int
		batch int
	}{
		{"784-128-10_batch128", []int{784, 128, 10}, 128},
		{"64-32-10_batch32", []int{64, 32, 10}, 32},
	} {
		b.Run(c.name+"/eager", func(b *testing.B) {
			task := newMLPTask(5, c.sizes, c.batch, 4)
			opt := optim.NewAdam(task.params, optim.AdamOptions{LR: 1e-3})
			g := graph.New()
			b.ReportAllocs()
			for k := 0; b.Loop(); k++ {
				_, grads := task.eagerStep(g, k)
				if err := opt.Step(grads); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/captured", func(b *testing.B) {
			task := newMLPTask(5, c.sizes, c.batch, 4)
			opt := optim.NewAdam(task.params, optim.AdamOptions{LR: 1e-3})
			p, err := graph.Capture(task.step, task.inputs(0), graph.CaptureOptions{})
			if err != nil {
				b.Fatal(err)
			}
			ins := make([][]*tensor.Tensor, len(task.xs))
			for k := range ins {
				ins[k] = task.inputs(k)
			}
			b.ReportAllocs()
			for k := 0; b.Loop(); k++ {
				out, err := p.Run(ins[k%len(ins)])
				if err != nil {
					b.Fatal(err)
				}
				if err := opt.Step(out[1:]); err != nil {
					b.Fatal(err)
				}
			}
			pl := p.Plan()
			b.ReportMetric(float64(p.Stats().Ops), "ops")
			b.ReportMetric(float64(pl.ArenaBytes), "arena-B")
			b.ReportMetric(float64(pl.NaiveBytes), "unshared-B")
		})
	}
}
