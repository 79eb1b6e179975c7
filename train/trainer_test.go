package train

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// regression is y = x·(1, −2, 0.5) + 0.3 on n rows of x.
func regression(dt tensor.DType, n int) data.TensorDataset {
	rng := tensor.NewRNG(7)
	x := rng.Normal(dt, 0, 1, n, 3)
	xs := x.Cast(tensor.Float64).Float64s()
	y := make([]float64, n)
	for i := range y {
		y[i] = xs[3*i] - 2*xs[3*i+1] + 0.5*xs[3*i+2] + 0.3
	}
	return data.TensorDataset{X: x, Targets: tensor.FromValues(dt, y, n, 1)}
}

// mse is the mean squared error of a Linear(3, 1) model on a batch; with
// noise > 0 the inputs are perturbed with the Trainer's RNG, so that
// resumption is tested with randomness in the step.
func mse(lin *nn.Linear, noise float64) LossFunc {
	return func(g *graph.Graph, b data.Batch, rng *tensor.RNG) *graph.Node {
		x := b.X
		if noise > 0 {
			x = tensor.AddTo(nil, x, rng.Normal(x.DType(), 0, noise, x.Shape()...))
		}
		return losses.MSE(lin.Forward(g.Const(x)), g.Const(b.Targets.Cast(x.DType())), losses.Mean)
	}
}

func newLinear(dt tensor.DType, seed uint64) *nn.Linear {
	return nn.NewLinear(tensor.NewRNG(seed), 3, 1, true, dt)
}

// values copies m's state dict, sorted by name.
func values(m nn.Module) [][]float64 {
	st := nn.State(m)
	var out [][]float64
	for _, name := range slices.Sorted(maps.Keys(st)) {
		out = append(out, append([]float64(nil), st[name].Cast(tensor.Float64).Float64s()...))
	}
	return out
}

// One step on micro-batches of 4, 4 and 2 rows equals one step on all 10:
// the gradients are weighted by the micro-batches' sizes.
func TestAccumulationEqualsBigBatch(t *testing.T) {
	ds := regression(tensor.Float64, 10)
	all := data.Collate(func() []data.Example {
		var ex []data.Example
		for i := range 10 {
			ex = append(ex, ds.Get(i))
		}
		return ex
	}(), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	part := func(lo, hi int) data.Batch {
		return data.Batch{X: tensor.Slice(all.X, 0, lo, hi, 1), Targets: tensor.Slice(all.Targets, 0, lo, hi, 1)}
	}
	run := func(micro ...data.Batch) ([][]float64, float64) {
		lin := newLinear(tensor.Float64, 1)
		tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), mse(lin, 0), nil, Options{})
		l, err := tr.Step(micro...)
		require.NoError(t, err)
		return values(lin), l
	}
	big, lBig := run(all)
	acc, lAcc := run(part(0, 4), part(4, 8), part(8, 10))
	assert.InDelta(t, lBig, lAcc, 1e-12)
	for i := range big {
		assert.InDeltaSlice(t, big[i], acc[i], 1e-12)
	}
	before := values(newLinear(tensor.Float64, 1))
	assert.NotEqual(t, before, big, "the step must move the parameters")
}

// Clipping rescales the gradient to the given global norm: with SGD at
// rate 1 the update is the clipped gradient, parallel to the unclipped one
// and of norm clip·n/(n + 1e-6) for a raw norm n (PyTorch's
// clip_grad_norm_ adds 1e-6 to the norm).
func TestClipByGlobalNorm(t *testing.T) {
	ds := regression(tensor.Float64, 8)
	loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: 8, Sampler: data.Sequential{N: 8}})
	update := func(clip float64) []float64 {
		lin := newLinear(tensor.Float64, 3)
		before := values(lin)
		tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 1}), mse(lin, 0), loader, Options{ClipNorm: clip})
		for b := range loader.Epoch(0) {
			_, err := tr.Step(b)
			require.NoError(t, err)
		}
		var d []float64
		for i, v := range values(lin) {
			for j := range v {
				d = append(d, before[i][j]-v[j])
			}
		}
		return d
	}
	norm := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x * x
		}
		return math.Sqrt(s)
	}
	raw := update(0)
	require.Greater(t, norm(raw), 0.5)
	clipped := update(0.5)
	n := norm(raw)
	assert.InDelta(t, 0.5*n/(n+1e-6), norm(clipped), 1e-12)
	for i := range raw {
		assert.InDelta(t, raw[i]*0.5/(n+1e-6), clipped[i], 1e-12)
	}
	assert.InDeltaSlice(t, raw, update(100), 1e-15, "a norm below the limit is left alone")
}

// The schedule sets the rate of every step; one batch per epoch makes the
// logged rate that of each step. Values by hand: warm-up over 2 steps to
// 1, then cosine annealing over 4 steps, (1 + cos(π·k/4))/2.
func TestScheduleRates(t *testing.T) {
	ds := regression(tensor.Float64, 4)
	loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: 4})
	lin := newLinear(tensor.Float64, 1)
	var log bytes.Buffer
	tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.01}), mse(lin, 0), loader, Options{
		Epochs: 7, Schedule: optim.LinearWarmup(2, optim.CosineAnnealingLR(0.01, 4, 0)), Log: &log})
	h, err := tr.Fit(context.Background())
	require.NoError(t, err)
	c := math.Cos(math.Pi / 4)
	want := []float64{0.5, 1, 1, (1 + c) / 2, 0.5, (1 - c) / 2, 0}
	var got []float64
	sc := bufio.NewScanner(&log)
	for sc.Scan() {
		var r Record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		assert.Equal(t, len(got)+1, r.Epoch)
		got = append(got, r.LR/0.01)
	}
	assert.InDeltaSlice(t, want, got, 1e-12)
	assert.Len(t, h.Records, 7)
	assert.Equal(t, 7, tr.Steps())

	// StepLR halves the rate every 2 steps.
	s := optim.StepLR(0.1, 2, 0.5)
	assert.InDeltaSlice(t, []float64{0.1, 0.1, 0.05, 0.05, 0.025}, []float64{s.LR(0), s.LR(1), s.LR(2), s.LR(3), s.LR(4)}, 1e-15)
}

// A scripted validation loss 5, 4, 4.5, 3.9, 4, 4.1, … improves last at
// epoch 4; with patience 2 training stops after epoch 6, and the best
// checkpoint holds epoch 4.
func TestEarlyStopping(t *testing.T) {
	script := []float64{5, 4, 4.5, 3.9, 4, 4.1, 3, 2, 1}
	ds := regression(tensor.Float64, 4)
	lin := newLinear(tensor.Float64, 1)
	best := filepath.Join(t.TempDir(), "best.safetensors")
	var bestW []float64
	tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.01}), mse(lin, 0),
		data.NewLoader(ds, data.LoaderOptions{BatchSize: 2}), Options{
			Epochs: len(script), Monitor: "val_loss", Patience: 2, BestPath: best,
			Eval: func(epoch int) (map[string]float64, error) {
				return map[string]float64{"val_loss": script[epoch-1]}, nil
			},
			Callbacks: []Callback{func(t *Trainer, r Record) (bool, error) {
				if r.Best {
					bestW = append([]float64(nil), lin.Params()[0].Value.Float64s()...)
				}
				return false, nil
			}},
		})
	h, err := tr.Fit(context.Background())
	require.NoError(t, err)
	assert.Len(t, h.Records, 6)
	assert.True(t, h.Stopped)
	assert.Equal(t, 4, h.BestEpoch)
	var bests []int
	for _, r := range h.Records {
		if r.Best {
			bests = append(bests, r.Epoch)
		}
	}
	assert.Equal(t, []int{1, 2, 4}, bests)
	ts, meta, err := checkpoint.ReadFile(best)
	require.NoError(t, err)
	assert.Equal(t, "4", meta["train.epoch"])
	assert.Equal(t, bestW, ts["weight"].Float64s())

	// Maximising: accuracy 0.5, 0.6, 0.6 with patience 1 stops at epoch 3.
	acc := []float64{0.5, 0.6, 0.6, 0.9}
	tr = New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.01}), mse(lin, 0),
		data.NewLoader(ds, data.LoaderOptions{BatchSize: 2}), Options{
			Epochs: 4, Monitor: "acc", Maximize: true, Patience: 1,
			Eval: func(epoch int) (map[string]float64, error) { return map[string]float64{"acc": acc[epoch-1]}, nil }})
	h, err = tr.Fit(context.Background())
	require.NoError(t, err)
	assert.Len(t, h.Records, 3)

	tr = New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.01}), mse(lin, 0),
		data.NewLoader(ds, data.LoaderOptions{BatchSize: 2}), Options{Monitor: "val_acc"})
	_, err = tr.Fit(context.Background())
	require.ErrorContains(t, err, `the monitored metric "val_acc" is not among`)
}

// A NaN loss is an error naming the step and leaves the parameters as they
// were; a callback can stop training or fail it.
func TestNonFiniteLossAndCallbacks(t *testing.T) {
	ds := regression(tensor.Float64, 8)
	loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: 4})
	lin := newLinear(tensor.Float64, 1)
	before := values(lin)
	nan := func(g *graph.Graph, b data.Batch, rng *tensor.RNG) *graph.Node {
		return graph.Mul(mse(lin, 0)(g, b, rng), g.Scalar(tensor.Float64, math.NaN()))
	}
	tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), nan, loader, Options{Epochs: 2})
	_, err := tr.Fit(context.Background())
	require.ErrorContains(t, err, "epoch 1: train: step 1, micro-batch 1: loss is NaN")
	assert.Equal(t, before, values(lin))
	assert.Equal(t, 0, tr.Steps())

	calls := 0
	tr = New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), mse(lin, 0), loader, Options{
		Epochs: 5, Callbacks: []Callback{func(t *Trainer, r Record) (bool, error) { calls++; return r.Epoch == 2, nil }}})
	h, err := tr.Fit(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
	assert.Len(t, h.Records, 2)
	assert.True(t, h.Stopped)
	assert.Equal(t, 4, tr.Steps())

	tr = New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), mse(lin, 0), loader, Options{
		Epochs: 5, Callbacks: []Callback{func(*Trainer, Record) (bool, error) { return false, assert.AnError }}})
	_, err = tr.Fit(context.Background())
	require.ErrorIs(t, err, assert.AnError)
	require.ErrorContains(t, err, "callback after epoch 1")

	other := newLinear(tensor.Float64, 2)
	assert.Panics(t, func() {
		New(lin, optim.NewSGD(nn.Values(other.Params()), optim.SGDOptions{LR: 0.1}), mse(lin, 0), loader, Options{})
	}, "an optimiser over another model's parameters")
}

// Options.Gradients replaces nn.Gradients: a hook that doubles every
// gradient makes an SGD step at rate 0.1 equal the plain step at rate 0.2,
// and a hook's error ends the step with the parameters unchanged.
func TestGradientsHook(t *testing.T) {
	ds := regression(tensor.Float64, 8)
	b := data.Collate([]data.Example{ds.Get(0), ds.Get(1), ds.Get(2), ds.Get(3)}, []int{0, 1, 2, 3})
	step := func(lr float64, hook func(*graph.Node, []nn.NamedParam) ([]*tensor.Tensor, error)) ([][]float64, error) {
		lin := newLinear(tensor.Float64, 3)
		tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: lr}), mse(lin, 0), nil, Options{Gradients: hook})
		_, err := tr.Step(b)
		return values(lin), err
	}
	doubled := func(l *graph.Node, ps []nn.NamedParam) ([]*tensor.Tensor, error) {
		var out []*tensor.Tensor
		for _, g := range nn.Gradients(l, ps) {
			out = append(out, tensor.MulScalar(g, 2))
		}
		return out, nil
	}
	want, err := step(0.2, nil)
	require.NoError(t, err)
	got, err := step(0.1, doubled)
	require.NoError(t, err)
	initial := values(newLinear(tensor.Float64, 3))
	for i := range want {
		assert.NotEqual(t, initial[i], want[i])
		assert.InDeltaSlice(t, want[i], got[i], 1e-15)
	}
	got, err = step(0.1, func(*graph.Node, []nn.NamedParam) ([]*tensor.Tensor, error) { return nil, errors.New("rank 1 is gone") })
	assert.ErrorContains(t, err, "train: step 1, micro-batch 1: rank 1 is gone")
	assert.Equal(t, initial, got)
	got, err = step(0.1, func(*graph.Node, []nn.NamedParam) ([]*tensor.Tensor, error) { return nil, nil })
	assert.ErrorContains(t, err, "returned 0 gradients for 2 parameters")
	assert.Equal(t, initial, got)
}

// Cancelling the context stops Fit after the step in progress: the
// interrupted epoch is neither logged nor checkpointed, the error wraps
// context.Canceled, and the history holds the complete epochs and every
// step taken. A context cancelled before Fit takes no step.
func TestFitCancelled(t *testing.T) {
	ds := regression(tensor.Float64, 8) // 2 steps of 4 per epoch
	lin := newLinear(tensor.Float64, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	steps := 0
	loss := func(g *graph.Graph, b data.Batch, rng *tensor.RNG) *graph.Node {
		if steps++; steps == 5 { // the first step of epoch 3
			cancel()
		}
		return mse(lin, 0)(g, b, rng)
	}
	var log bytes.Buffer
	best := filepath.Join(t.TempDir(), "best.safetensors")
	tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), loss,
		data.NewLoader(ds, data.LoaderOptions{BatchSize: 4}), Options{Epochs: 10, Log: &log, Monitor: "train_loss", BestPath: best})
	h, err := tr.Fit(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "train: epoch 3 cancelled after step 5")
	assert.Equal(t, 5, tr.Steps(), "the step in progress completes")
	assert.Len(t, h.StepLoss, 5)
	assert.Len(t, h.Records, 2)
	assert.Equal(t, 2, tr.Epoch())
	recs, err := ReadLog(&log)
	require.NoError(t, err)
	assert.Len(t, recs, 2, "the log holds complete epochs only")
	_, meta, err := checkpoint.ReadFile(best)
	require.NoError(t, err)
	assert.Equal(t, "4", meta["train.step"], "the best checkpoint is the last complete epoch's")

	before := values(lin)
	h, err = tr.Fit(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 5, tr.Steps())
	assert.Equal(t, before, values(lin))
	assert.Len(t, h.Records, 2)
}

// With StepLossWindow the history holds exactly the last window's step
// losses, equal to those of a run that keeps them all, at every length
// (before the window fills, at it, and past the slide at twice it).
func TestStepLossWindowKeepsTheLastSteps(t *testing.T) {
	const window = 3
	for _, steps := range []int{2, 3, 6, 7, 11} {
		all := stepLosses(t, steps, 0)
		kept := stepLosses(t, steps, window)
		want := all[max(0, len(all)-window):]
		assert.Equal(t, want, kept, "%d steps", steps)
		assert.Len(t, all, steps)
	}
}

// stepLosses trains the linear model for the given number of steps (two a
// epoch) and returns History.StepLoss under StepLossWindow window.
func stepLosses(t *testing.T, steps, window int) []float64 {
	t.Helper()
	lin := newLinear(tensor.Float64, 1)
	tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), mse(lin, 0),
		data.NewLoader(regression(tensor.Float64, 8), data.LoaderOptions{BatchSize: 4}),
		Options{Epochs: 100, MaxSteps: steps, StepLossWindow: window})
	h, err := tr.Fit(context.Background())
	require.NoError(t, err)
	return h.StepLoss
}

// A history taken before the window slides keeps its values: it does not
// share the buffer the trainer goes on writing.
func TestStepLossWindowHistoryIsACopy(t *testing.T) {
	lin := newLinear(tensor.Float64, 1)
	tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), mse(lin, 0),
		data.NewLoader(regression(tensor.Float64, 8), data.LoaderOptions{BatchSize: 4}),
		Options{Epochs: 5, StepLossWindow: 2})
	for range 2 { // 4 steps: the buffer of 2·2 is full
		_, err := tr.RunEpoch(context.Background())
		require.NoError(t, err)
	}
	before := tr.History().StepLoss
	kept := slices.Clone(before)
	_, err := tr.RunEpoch(context.Background()) // slides the buffer
	require.NoError(t, err)
	assert.Equal(t, kept, before)
	assert.NotEqual(t, before, tr.History().StepLoss)
}
