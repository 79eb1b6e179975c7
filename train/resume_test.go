package train

import (
	"bytes"
	"context"
	"fmt"
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

// resumable builds a float32 run with everything that carries state:
// Adam, a warm-up + cosine schedule per step, accumulation of 2
// micro-batches, clipping, a shuffling loader and noise from the
// Trainer's RNG in the loss.
func resumable(seed uint64, epochs int, log *bytes.Buffer) (*nn.Linear, *Trainer) {
	ds := regression(tensor.Float32, 37)
	lin := newLinear(tensor.Float32, seed)
	loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: 5, Sampler: data.Random{N: 37, Seed: 11}})
	opt := optim.NewAdam(nn.Values(lin.Params()), optim.AdamOptions{LR: 0.05})
	cfg := Options{
		Epochs: epochs, Accumulate: 2, ClipNorm: 1, Seed: 5,
		Schedule: optim.LinearWarmup(3, optim.CosineAnnealingLR(0.05, 20, 0.001)),
		Monitor:  "train_loss",
	}
	if log != nil {
		cfg.Log = log
	}
	return lin, New(lin, opt, mse(lin, 0.1), loader, cfg)
}

// Training 6 epochs, or 3, saving, and resuming in a fresh Trainer over a
// model with other weights for the remaining 3, gives the same parameters
// and the same losses bit for bit.
func TestResumeEqualsUninterrupted(t *testing.T) {
	full, tr := resumable(1, 6, nil)
	h, err := tr.Fit(context.Background())
	require.NoError(t, err)
	require.Len(t, h.Records, 6)

	path := filepath.Join(t.TempDir(), "run.safetensors")
	_, first := resumable(1, 3, nil)
	_, err = first.Fit(context.Background())
	require.NoError(t, err)
	require.NoError(t, first.Save(path))

	resumed, second := resumable(99, 6, nil)
	require.NotEqual(t, values(full), values(resumed))
	require.NoError(t, second.Resume(path))
	assert.Equal(t, 3, second.Epoch())
	assert.Equal(t, first.Steps(), second.Steps())
	h2, err := second.Fit(context.Background())
	require.NoError(t, err)
	require.Len(t, h2.Records, 3)

	assert.Equal(t, values(full), values(resumed), "parameters bit for bit")
	for i, r := range h2.Records {
		want := h.Records[3+i]
		assert.Equal(t, want.Epoch, r.Epoch)
		assert.Equal(t, want.Step, r.Step)
		assert.Equal(t, want.LR, r.LR)
		assert.Equal(t, want.TrainLoss, r.TrainLoss, "epoch %d", r.Epoch)
		assert.Equal(t, want.Best, r.Best)
	}
	assert.Equal(t, h.StepLoss[len(h.StepLoss)-len(h2.StepLoss):], h2.StepLoss)
}

// A checkpoint of another architecture, or of another seed, is refused and
// leaves the model and the optimiser untouched.
func TestResumeRefusesMismatch(t *testing.T) {
	dir := t.TempDir()
	other := nn.NewLinear(tensor.NewRNG(1), 4, 1, true, tensor.Float32)
	otherTr := New(other, optim.NewAdam(nn.Values(other.Params()), optim.AdamOptions{}), mse(other, 0), nil, Options{Seed: 5})
	bad := filepath.Join(dir, "other.safetensors")
	require.NoError(t, otherTr.Save(bad))

	lin, tr := resumable(1, 2, nil)
	_, err := tr.Fit(context.Background())
	require.NoError(t, err)
	names := nn.Names(lin.Params())
	before, state := values(lin), tr.opt.State(names)
	err = tr.Resume(bad)
	require.ErrorContains(t, err, `tensor "weight" is (1, 4) float32 in the file but (1, 3) float32 in the model`)
	assert.Equal(t, before, values(lin))
	assert.Equal(t, state["weight.exp_avg"].Float32s(), tr.opt.State(names)["weight.exp_avg"].Float32s())
	assert.Equal(t, 2, tr.Epoch())

	good := filepath.Join(dir, "good.safetensors")
	require.NoError(t, tr.Save(good))
	_, seeded := resumable(1, 2, nil)
	seeded.cfg.Seed = 6
	require.ErrorContains(t, seeded.Resume(good), "the checkpoint's seed is 5, the Trainer's 6")
	require.Error(t, tr.Resume(filepath.Join(dir, "missing.safetensors")))
}

// dropoutRun builds an MLP with dropout between its layers, trained by
// Adam on a shuffling loader: two random streams that must survive a
// checkpoint (the dropout's, held by the layer; the loader's order, a
// function of its seed and the epoch). seed sets the initial weights and
// the dropout's generator.
func dropoutRun(seed uint64, epochs int) (*nn.Sequential, *Trainer) {
	ds := regression(tensor.Float32, 40)
	rng := tensor.NewRNG(seed)
	m := nn.NewSequential(
		nn.NewLinear(rng, 3, 16, true, tensor.Float32), nn.ReLU{},
		nn.NewDropout(rng, 0.3), // shares the initialisers' generator, as models usually do
		nn.NewLinear(rng, 16, 1, true, tensor.Float32),
	)
	loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: 8, Sampler: data.Random{N: 40, Seed: 3}})
	opt := optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: 0.01})
	loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
		return losses.MSE(m.Forward(g.Const(b.X)), g.Const(b.Targets), losses.Mean)
	}
	return m, New(m, opt, loss, loader, Options{Epochs: epochs, Seed: 5, Monitor: "train_loss"})
}

// bits returns the bit patterns of every tensor of m's state, by name.
func bits(m nn.Module) map[string][]uint32 {
	out := map[string][]uint32{}
	for name, t := range nn.State(m) {
		for _, v := range t.Float32s() {
			out[name] = append(out[name], math.Float32bits(v))
		}
	}
	return out
}

// Two epochs, Save, Resume into a model of other weights and another
// dropout stream, and two more epochs give every parameter of four
// uninterrupted epochs bit for bit: the dropout's stream is restored. A
// resumed run whose dropout stream is not restored differs, so the test
// sees the stream.
func TestResumeWithDropoutEqualsUninterrupted(t *testing.T) {
	full, tr := dropoutRun(1, 4)
	h, err := tr.Fit(context.Background())
	require.NoError(t, err)
	require.Len(t, h.Records, 4)

	path := filepath.Join(t.TempDir(), "run.safetensors")
	_, first := dropoutRun(1, 2)
	_, err = first.Fit(context.Background())
	require.NoError(t, err)
	require.NoError(t, first.Save(path))

	resumed, second := dropoutRun(2, 4)
	require.NotEqual(t, bits(full), bits(resumed))
	require.NoError(t, second.Resume(path))
	h2, err := second.Fit(context.Background())
	require.NoError(t, err)
	require.Len(t, h2.Records, 2)
	assert.Equal(t, bits(full), bits(resumed), "every parameter bit for bit")
	assert.Equal(t, h.StepLoss[len(h.StepLoss)-len(h2.StepLoss):], h2.StepLoss)
	assert.Equal(t, h.Records[3].TrainLoss, h2.Records[1].TrainLoss)

	lost, third := dropoutRun(2, 4)
	require.NoError(t, third.Resume(path))
	other, err := tensor.NewRNG(77).MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, nn.RNGs(lost)[0].RNG.UnmarshalBinary(other))
	_, err = third.Fit(context.Background())
	require.NoError(t, err)
	assert.NotEqual(t, bits(full), bits(lost), "the dropout stream decides the result")
}

// A training checkpoint that is wrong anywhere (a NaN moment, which the
// first step would spread to every parameter; a NaN or infinite weight; a
// counter that cannot be; a missing dropout stream) is refused with an
// error naming the file and the entry, and the model, the dropout stream,
// the optimiser and the Trainer's counters are as they were.
func TestResumeRefusesCorruptCheckpoint(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(ts map[string]*tensor.Tensor, meta map[string]string)
		wants []string
	}{
		{"NaN moment", func(ts map[string]*tensor.Tensor, _ map[string]string) {
			ts["optim.0.weight.exp_avg"].Float32s()[5] = float32(math.NaN())
		}, []string{`"0.weight.exp_avg" holds NaN at element 5`}},
		{"negative second moment", func(ts map[string]*tensor.Tensor, _ map[string]string) {
			ts["optim.3.bias.exp_avg_sq"].Float32s()[0] = -1
		}, []string{`"3.bias.exp_avg_sq" holds -1`}},
		{"NaN weight", func(ts map[string]*tensor.Tensor, _ map[string]string) {
			ts["3.weight"].Float32s()[2] = float32(math.NaN())
		}, []string{`tensor "3.weight": 1 of 16 values are NaN or ±Inf, the first NaN at index 2`}},
		{"infinite bias", func(ts map[string]*tensor.Tensor, _ map[string]string) {
			ts["0.bias"].Float32s()[0] = float32(math.Inf(-1))
		}, []string{`tensor "0.bias"`, "the first -Inf at index 0"}},
		{"negative epoch", func(_ map[string]*tensor.Tensor, meta map[string]string) { meta["train.epoch"] = "-5" },
			[]string{`metadata "train.epoch" is -5, a count that cannot be negative`}},
		{"negative step", func(_ map[string]*tensor.Tensor, meta map[string]string) { meta["train.step"] = "-1" },
			[]string{`metadata "train.step" is -1`}},
		{"best epoch after the last", func(_ map[string]*tensor.Tensor, meta map[string]string) { meta["train.best_epoch"] = "9" },
			[]string{`"train.best_epoch" (9)`, `must not exceed "train.epoch" (2)`}},
		{"best without its epoch", func(_ map[string]*tensor.Tensor, meta map[string]string) { meta["train.best_epoch"] = "0" },
			[]string{`metadata "train.best" is`, `"train.best_epoch" 0`}},
		{"counter not a number", func(_ map[string]*tensor.Tensor, meta map[string]string) { meta["train.bad_epochs"] = "two" },
			[]string{`metadata "train.bad_epochs" is "two"`}},
		{"missing dropout stream", func(_ map[string]*tensor.Tensor, meta map[string]string) { delete(meta, "rng.2.mask") },
			[]string{`random stream "2.mask" is not in the checkpoint`}},
		{"corrupt dropout stream", func(_ map[string]*tensor.Tensor, meta map[string]string) { meta["rng.2.mask"] = "00" },
			[]string{`random stream "2.mask" (metadata "rng.2.mask"): not a generator state`}},
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.safetensors")
	_, src := dropoutRun(1, 2)
	_, err := src.Fit(context.Background())
	require.NoError(t, err)
	require.NoError(t, src.Save(good))
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, meta, err := checkpoint.ReadFile(good)
			require.NoError(t, err)
			c.edit(ts, meta)
			bad := filepath.Join(dir, fmt.Sprintf("bad%d.safetensors", i))
			require.NoError(t, checkpoint.WriteFile(bad, ts, meta))

			m, tr := dropoutRun(2, 4)
			_, err = tr.Fit(context.Background()) // some state of its own to keep
			require.NoError(t, err)
			names := nn.Names(m.Params())
			params, opt := bits(m), tr.opt.State(names)
			stream, err := nn.RNGs(m)[0].RNG.MarshalBinary()
			require.NoError(t, err)
			epoch, steps, best := tr.Epoch(), tr.Steps(), tr.best

			err = tr.Resume(bad)
			require.Error(t, err)
			assert.Contains(t, err.Error(), bad)
			for _, w := range c.wants {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, params, bits(m), "parameters unchanged")
			for k, v := range tr.opt.State(names) {
				assert.Equal(t, opt[k].Values(), v.Values(), "optimiser state %q unchanged", k)
			}
			after, err := nn.RNGs(m)[0].RNG.MarshalBinary()
			require.NoError(t, err)
			assert.Equal(t, stream, after, "dropout stream unchanged")
			assert.Equal(t, []any{epoch, steps, best}, []any{tr.Epoch(), tr.Steps(), tr.best}, "counters unchanged")
		})
	}
}

// The JSON-lines log has one record per epoch with the documented keys.
func TestLog(t *testing.T) {
	var log bytes.Buffer
	_, tr := resumable(1, 2, &log)
	_, err := tr.Fit(context.Background())
	require.NoError(t, err)
	recs, err := ReadLog(&log)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, 2, recs[1].Epoch)
	assert.Equal(t, tr.History().Records[1].TrainLoss, recs[1].TrainLoss)
	assert.Equal(t, 4, recs[0].Step) // 37 rows in 8 batches of 5, 2 per step: 4 steps an epoch
	assert.True(t, recs[0].Best)
}

// InFloat64 evaluates a float32 model in float64 and restores it.
func TestInFloat64(t *testing.T) {
	lin := newLinear(tensor.Float32, 1)
	w := lin.Params()[0].Value
	InFloat64(lin, func() {
		assert.Equal(t, tensor.Float64, lin.Params()[0].Value.DType())
		assert.Equal(t, w.Cast(tensor.Float64).Float64s(), lin.Params()[0].Value.Float64s())
	})
	assert.Same(t, w, lin.Params()[0].Value)
	assert.Panics(t, func() { InFloat64(lin, func() { panic("boom") }) })
	assert.Same(t, w, lin.Params()[0].Value)
}

// Inside InFloat64 a float32 model's forward pass runs in float64: the loss
// on float64 inputs equals the float64 sum computed by hand from the
// float32 weights, to float64 rounding.
func TestInFloat64Forward(t *testing.T) {
	lin := newLinear(tensor.Float32, 4)
	ds := regression(tensor.Float64, 6)
	w := lin.Weight.Value.Cast(tensor.Float64).Float64s()
	bias := lin.Bias.Value.Cast(tensor.Float64).Item()
	xs := ds.X.Float64s()
	want := 0.0
	for i, y := range ds.Targets.Values() {
		d := xs[3*i]*w[0] + xs[3*i+1]*w[1] + xs[3*i+2]*w[2] + bias - y
		want += d * d / 6
	}
	var got float64
	var dt tensor.DType
	InFloat64(lin, func() {
		g := graph.New()
		l := mse(lin, 0)(g, data.Batch{X: ds.X, Targets: ds.Targets}, nil)
		got, dt = l.Item(), l.Value().DType()
	})
	assert.Equal(t, tensor.Float64, dt)
	assert.InDelta(t, want, got, 1e-14)
	assert.Equal(t, tensor.Float32, lin.Weight.Value.DType())
}
