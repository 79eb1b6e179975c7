package train

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
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
