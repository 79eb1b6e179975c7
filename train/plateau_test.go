package train

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// plateauRun trains a linear model by SGD from 0.1 with Options.Plateau
// (Factor 0.5, Patience patience) watching a scripted "val" metric: 5, 4,
// then flat at 4 until epoch 6, then 3.
func plateauRun(seed uint64, epochs, patience int) (*nn.Linear, *Trainer) {
	script := []float64{5, 4, 4, 4, 4, 4, 3, 3, 3}
	lin := newLinear(tensor.Float64, seed)
	loader := data.NewLoader(regression(tensor.Float64, 20), data.LoaderOptions{BatchSize: 5, Sampler: data.Random{N: 20, Seed: 2}})
	opt := optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1})
	eval := func(epoch int) (map[string]float64, error) { return map[string]float64{"val": script[epoch-1]}, nil }
	return lin, New(lin, opt, mse(lin, 0), loader, Options{Epochs: epochs, Seed: 3, Eval: eval, Monitor: "val",
		Plateau: &optim.PlateauOptions{Factor: 0.5, Patience: patience, NoDefaults: true}})
}

// With patience 1 the rate halves after the second epoch in a row
// without improvement (epochs 4 and 6 of the script), and each record
// holds the rate its epoch ran at.
func TestPlateauLowersTheRate(t *testing.T) {
	_, tr := plateauRun(1, 8, 1)
	h, err := tr.Fit(context.Background())
	require.NoError(t, err)
	var lrs []float64
	for _, r := range h.Records {
		lrs = append(lrs, r.LR)
	}
	assert.Equal(t, []float64{0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.025, 0.025}, lrs)
}

// Stopping after any epoch, saving and resuming in a fresh Trainer gives
// the uninterrupted run's rates and parameters bit for bit: the
// scheduler's best, bad epochs and cooldown travel in the checkpoint.
func TestPlateauResumes(t *testing.T) {
	full, tr := plateauRun(1, 8, 1)
	h, err := tr.Fit(context.Background())
	require.NoError(t, err)
	for cut := 1; cut < 8; cut++ {
		path := filepath.Join(t.TempDir(), "run.safetensors")
		_, first := plateauRun(1, cut, 1)
		_, err := first.Fit(context.Background())
		require.NoError(t, err)
		require.NoError(t, first.Save(path))
		resumed, second := plateauRun(7, 8, 1)
		require.NoError(t, second.Resume(path))
		h2, err := second.Fit(context.Background())
		require.NoError(t, err)
		for i, r := range h2.Records {
			assert.Equal(t, h.Records[cut+i].LR, r.LR, "cut after %d, epoch %d", cut, r.Epoch)
		}
		assert.Equal(t, values(full), values(resumed), "cut after %d", cut)
	}
}

// A checkpoint whose scheduler state this Trainer's scheduler could not
// be in (more bad epochs than its patience), or that lacks the state, or
// that has one the Trainer has no use for, is refused with the model as
// it was.
func TestPlateauResumeRefuses(t *testing.T) {
	dir := t.TempDir()
	_, patient := plateauRun(1, 5, 3) // bad epochs 3 after epoch 5
	_, err := patient.Fit(context.Background())
	require.NoError(t, err)
	withState := filepath.Join(dir, "patient.safetensors")
	require.NoError(t, patient.Save(withState))

	lin, strict := plateauRun(2, 8, 1)
	before := values(lin)
	require.ErrorContains(t, strict.Resume(withState), "3 epochs without improvement: want 0 to Patience 1")
	assert.Equal(t, before, values(lin))
	assert.Equal(t, 0, strict.Epoch())

	plain, _ := resumable(1, 2, nil)
	noState := filepath.Join(dir, "plain.safetensors")
	plainTr := New(plain, optim.NewSGD(nn.Values(plain.Params()), optim.SGDOptions{LR: 0.1}), mse(plain, 0), nil, Options{Seed: 3})
	require.NoError(t, plainTr.Save(noState))
	_, want := plateauRun(1, 8, 1)
	require.ErrorContains(t, want.Resume(noState), "the Trainer has a Plateau scheduler but the checkpoint holds no state for it")
	require.ErrorContains(t, plainTr.Resume(withState), "the Trainer has no Plateau")
}
