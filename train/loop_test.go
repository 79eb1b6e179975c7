package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
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

// fixture is a regression problem of 16 rows, 3 features, one target.
func fixture() *data.TensorDataset {
	rng := tensor.NewRNG(7)
	x := rng.Normal(tensor.Float64, 0, 1, 16, 3)
	y := make([]float64, 16)
	for i := range y {
		y[i] = x.At(i, 0) - 2*x.At(i, 1) + 0.5*x.At(i, 2) + 0.1*rng.NormFloat64()
	}
	return &data.TensorDataset{X: x, Labels: y}
}

func mlp(seed uint64) *nn.Sequential {
	rng := tensor.NewRNG(seed)
	return nn.NewSequential(nn.NewLinear(rng, 3, 4, true, tensor.Float64), nn.Tanh{}, nn.NewLinear(rng, 4, 1, true, tensor.Float64))
}

func mseLoss(m *nn.Sequential) LossFunc {
	return func(g *graph.Graph, b data.Batch) *graph.Node {
		target := g.Const(tensor.FromFloat64s(b.Labels, len(b.Labels), 1))
		return losses.MSE(m.Forward(g.Const(b.X)), target, losses.Mean)
	}
}

func values(m nn.Module) [][]float64 {
	var out [][]float64
	for _, p := range m.Params() {
		out = append(out, p.Value.Values())
	}
	return out
}

// Two micro-batches of 4 with Accumulate 2 take the same step as one
// batch of 8: the mean loss's gradient is the mean of the halves'.
func TestAccumulationEqualsTheBigBatch(t *testing.T) {
	ds := fixture()
	run := func(batch, acc int) [][]float64 {
		m := mlp(1)
		opt := optim.NewSGD(nn.Values(m.Params()), optim.SGDConfig{LR: 0.1})
		loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: batch, Sampler: data.Sequential{N: 16}})
		l, err := New(m, opt, mseLoss(m), loader, Config{Epochs: 1, Accumulate: acc})
		require.NoError(t, err)
		_, err = l.Run()
		require.NoError(t, err)
		assert.Equal(t, 16/(batch*acc), l.Steps())
		return values(m)
	}
	big, small := run(8, 1), run(4, 2)
	for i := range big {
		assert.InDeltaSlice(t, big[i], small[i], 1e-15, "parameter %d", i)
	}
}

// With SGD at learning rate 1, the parameters move by exactly the clipped
// gradient, whose global norm is ClipNorm (the raw one is larger here).
func TestClippingBoundsTheStep(t *testing.T) {
	m := mlp(2)
	before := values(m)
	opt := optim.NewSGD(nn.Values(m.Params()), optim.SGDConfig{LR: 1})
	loader := data.NewLoader(fixture(), data.LoaderOptions{BatchSize: 16, Sampler: data.Sequential{N: 16}})
	l, err := New(m, opt, mseLoss(m), loader, Config{Epochs: 1, ClipNorm: 0.05})
	require.NoError(t, err)
	_, err = l.Run()
	require.NoError(t, err)
	ss := 0.0
	for i, after := range values(m) {
		for j := range after {
			ss += (after[j] - before[i][j]) * (after[j] - before[i][j])
		}
	}
	assert.InDelta(t, 0.05, math.Sqrt(ss), 1e-6)
}

// StepLR(0.1, 2, 0.5) by hand: steps 0-1 at 0.1, 2-3 at 0.05, 4 at 0.025;
// Step drives the loop one batch at a time.
func TestScheduleSetsEachStepsRate(t *testing.T) {
	m := mlp(3)
	opt := optim.NewSGD(nn.Values(m.Params()), optim.SGDConfig{LR: 1})
	loader := data.NewLoader(fixture(), data.LoaderOptions{BatchSize: 4, Sampler: data.Sequential{N: 16}})
	l, err := New(m, opt, mseLoss(m), loader, Config{Epochs: 1, Schedule: optim.StepLR(0.1, 2, 0.5)})
	require.NoError(t, err)
	var rates []float64
	for range 2 {
		for b := range loader.Epoch(0) {
			_, stepped, err := l.Step(b)
			require.NoError(t, err)
			require.True(t, stepped)
			rates = append(rates, opt.LR())
		}
	}
	assert.InDeltaSlice(t, []float64{0.1, 0.1, 0.05, 0.05, 0.025, 0.025, 0.0125, 0.0125}, rates, 1e-15)
}

// A scripted metric 5, 4, 4.5, 4.2, 4.1, 3 with patience 2: epoch 2 is the
// best, epochs 3 and 4 do not improve, so training stops after epoch 4;
// best.safetensors holds epoch 2 and the log has one line per epoch.
func TestEarlyStoppingAndBestCheckpoint(t *testing.T) {
	script := []float64{5, 4, 4.5, 4.2, 4.1, 3}
	calls := 0
	m := mlp(4)
	opt := optim.NewAdam(nn.Values(m.Params()), optim.AdamConfig{LR: 1e-3})
	loader := data.NewLoader(fixture(), data.LoaderOptions{BatchSize: 8})
	dir := t.TempDir()
	var log bytes.Buffer
	var seen []int
	l, err := New(m, opt, mseLoss(m), loader, Config{Epochs: 6, Monitor: "val_loss", Patience: 2, Dir: dir, Log: &log,
		Validate: func(*graph.Graph) (map[string]float64, error) {
			calls++
			return map[string]float64{"val_loss": script[calls-1]}, nil
		},
		Callbacks: []func(Epoch) error{func(e Epoch) error { seen = append(seen, e.Epoch); return nil }}})
	require.NoError(t, err)
	h, err := l.Run()
	require.NoError(t, err)
	assert.True(t, h.Stopped)
	assert.Equal(t, 2, h.BestEpoch)
	assert.Len(t, h.Epochs, 4)
	assert.Equal(t, []int{1, 2, 3, 4}, seen)
	_, meta, err := checkpoint.ReadFile(filepath.Join(dir, "best.safetensors"))
	require.NoError(t, err)
	assert.Equal(t, "2", meta["epoch"])
	assert.Equal(t, "4", meta["best"])
	lines := 0
	sc := bufio.NewScanner(&log)
	for sc.Scan() {
		var e Epoch
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		lines++
		assert.Equal(t, lines, e.Epoch)
		assert.Equal(t, script[lines-1], e.Metrics["val_loss"])
	}
	assert.Equal(t, 4, lines)
}

// Two epochs, then a new process (a model with other weights, a new
// optimiser) resuming from the checkpoint for two more, end with the same
// parameters, bit for bit, as four epochs straight: the optimiser's state,
// the step count behind the schedule and the epoch behind the loader's
// order all come back.
func TestResumeEqualsUninterrupted(t *testing.T) {
	ds := fixture()
	cfg := func(epochs int, dir string) Config {
		return Config{Epochs: epochs, Dir: dir, Resume: true, Schedule: optim.CosineAnnealingLR(0.01, 8, 0.001)}
	}
	loader := func() *data.Loader {
		return data.NewLoader(ds, data.LoaderOptions{BatchSize: 4, Sampler: data.Random{N: 16, Seed: 3}})
	}
	straight := mlp(5)
	opt := optim.NewAdam(nn.Values(straight.Params()), optim.AdamConfig{})
	l, err := New(straight, opt, mseLoss(straight), loader(), cfg(4, t.TempDir()))
	require.NoError(t, err)
	_, err = l.Run()
	require.NoError(t, err)

	dir := t.TempDir()
	first := mlp(5)
	l, err = New(first, optim.NewAdam(nn.Values(first.Params()), optim.AdamConfig{}), mseLoss(first), loader(), cfg(2, dir))
	require.NoError(t, err)
	_, err = l.Run()
	require.NoError(t, err)
	second := mlp(99)
	opt2 := optim.NewAdam(nn.Values(second.Params()), optim.AdamConfig{})
	l, err = New(second, opt2, mseLoss(second), loader(), cfg(4, dir))
	require.NoError(t, err)
	h, err := l.Run()
	require.NoError(t, err)
	assert.Len(t, h.Epochs, 2, "only epochs 3 and 4 run")
	assert.Equal(t, 3, h.Epochs[0].Epoch)
	assert.Equal(t, values(straight), values(second))
	assert.Equal(t, opt.LR(), opt2.LR())
}

// A loss that turns NaN is an error naming the step, and the parameters
// keep their values; bad configurations are refused.
func TestErrors(t *testing.T) {
	m := mlp(6)
	before := values(m)
	opt := optim.NewSGD(nn.Values(m.Params()), optim.SGDConfig{LR: 0.1})
	loader := data.NewLoader(fixture(), data.LoaderOptions{BatchSize: 8})
	nanLoss := func(g *graph.Graph, b data.Batch) *graph.Node {
		return graph.Mul(mseLoss(m)(g, b), g.Scalar(tensor.Float64, math.NaN()))
	}
	l, err := New(m, opt, nanLoss, loader, Config{Epochs: 1})
	require.NoError(t, err)
	_, err = l.Run()
	assert.ErrorContains(t, err, "epoch 1: train: step 1: the loss is NaN")
	assert.Equal(t, before, values(m))

	_, err = New(m, opt, mseLoss(m), loader, Config{})
	assert.ErrorContains(t, err, "Epochs = 0")
	_, err = New(m, opt, mseLoss(m), loader, Config{Epochs: 1, Patience: 2})
	assert.ErrorContains(t, err, "Patience needs a Monitor")
	_, err = New(m, optim.NewSGD(nn.Values(mlp(7).Params()), optim.SGDConfig{}), mseLoss(m), loader, Config{Epochs: 1})
	assert.ErrorContains(t, err, "is not the model's parameter")
	l, err = New(m, opt, mseLoss(m), loader, Config{Epochs: 1, Monitor: "accuracy"})
	require.NoError(t, err)
	_, err = l.Run()
	assert.ErrorContains(t, err, `no metric "accuracy"`)
}

func TestReadLog(t *testing.T) {
	es, err := ReadLog(bytes.NewBufferString(`{"epoch":1,"steps":4,"train_loss":0.5,"lr":0.1,"metrics":{"acc":0.9},"best":true,"seconds":1}` + "\n\n" +
		`{"epoch":2,"steps":8,"train_loss":0.25,"lr":0.1,"best":false,"seconds":1}` + "\n"))
	require.NoError(t, err)
	require.Len(t, es, 2)
	assert.Equal(t, 0.9, es[0].Metrics["acc"])
	assert.Equal(t, 0.25, es[1].TrainLoss)
	_, err = ReadLog(bytes.NewBufferString("{\"epoch\":1}\nnot json\n"))
	assert.ErrorContains(t, err, "line 2")
}
