package train

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// failingSet is a regression set whose Get panics at one index.
type failingSet struct {
	data.TensorDataset
	at int
}

func (s failingSet) Get(i int) data.Example {
	if i == s.at {
		panic("disk read failed")
	}
	return s.TensorDataset.Get(i)
}

// A failure in the user's code during training ends Fit with an error
// that names where it happened and why; the parameters are those after the
// last finished step, and nothing else in the process is affected.
func TestFitTurnsFailuresIntoErrors(t *testing.T) {
	ds := regression(tensor.Float64, 16)
	seq := data.Sequential{N: 16}
	for _, c := range []struct {
		name  string
		ds    data.Dataset
		opts  data.LoaderOptions
		loss  func(lin *nn.Linear) LossFunc
		want  []string
		steps int // steps finished before the failure
	}{
		{"Get panics in a worker", failingSet{ds, 9}, data.LoaderOptions{BatchSize: 4, Workers: 2, Sampler: seq}, nil,
			[]string{"train: epoch 1, after step 2", "building batch 2 of epoch 0 panicked: disk read failed"}, 2},
		{"Get panics without workers", failingSet{ds, 9}, data.LoaderOptions{BatchSize: 4, Sampler: seq}, nil,
			[]string{"train: epoch 1, after step 2", "panic: disk read failed"}, 2},
		{"a transform panics in a worker", ds, data.LoaderOptions{BatchSize: 4, Workers: 2, Sampler: seq,
			Transform: func(e data.Example, _ *tensor.RNG) data.Example { panic(errors.New("bad pixel")) }},
			nil, []string{"train: epoch 1, after step 0", "bad pixel"}, 0},
		{"the loss panics", ds, data.LoaderOptions{BatchSize: 4, Sampler: seq},
			func(*nn.Linear) LossFunc {
				return func(*graph.Graph, data.Batch, *tensor.RNG) *graph.Node { panic("index out of range") }
			}, []string{"train: step 1", "panic: index out of range"}, 0},
		{"the loss returns nil", ds, data.LoaderOptions{BatchSize: 4, Sampler: seq},
			func(*nn.Linear) LossFunc {
				return func(*graph.Graph, data.Batch, *tensor.RNG) *graph.Node { return nil }
			}, []string{"train: step 1, micro-batch 1: the loss function returned nil"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			lin := newLinear(tensor.Float64, 1)
			loss := mse(lin, 0)
			if c.loss != nil {
				loss = c.loss(lin)
			}
			// The parameters after c.steps good steps, from a twin run.
			twin := newLinear(tensor.Float64, 1)
			twinTr := New(twin, optim.NewSGD(nn.Values(twin.Params()), optim.SGDOptions{LR: 0.1}), mse(twin, 0), nil, Options{})
			all := data.NewLoader(ds, data.LoaderOptions{BatchSize: 4, Sampler: seq})
			k := 0
			for b := range all.Epoch(0) {
				if k == c.steps {
					break
				}
				_, err := twinTr.Step(b)
				require.NoError(t, err)
				k++
			}

			tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), loss, data.NewLoader(c.ds, c.opts), Options{Epochs: 2})
			hist, err := tr.Fit(context.Background())
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Empty(t, hist.Records, "no epoch finished")
			assert.Equal(t, c.steps, tr.Steps())
			assert.Equal(t, values(twin), values(lin), "the parameters are those after the last good step")
		})
	}
	var wp *data.WorkerPanic
	lin := newLinear(tensor.Float64, 1)
	tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), mse(lin, 0),
		data.NewLoader(failingSet{ds, 0}, data.LoaderOptions{BatchSize: 4, Workers: 2}), Options{})
	_, err := tr.Fit(context.Background())
	require.ErrorAs(t, err, &wp)
	assert.Equal(t, "disk read failed", wp.Value)
	assert.NotEmpty(t, wp.Stack)
}

// With DropLast, a batch size above the number of examples leaves an epoch
// without batches: an error, not a loss of 0 recorded as the best.
func TestFitRefusesAnEmptyEpoch(t *testing.T) {
	lin := newLinear(tensor.Float64, 1)
	loader := data.NewLoader(regression(tensor.Float64, 5), data.LoaderOptions{BatchSize: 8, DropLast: true})
	tr := New(lin, optim.NewSGD(nn.Values(lin.Params()), optim.SGDOptions{LR: 0.1}), mse(lin, 0), loader, Options{Epochs: 3})
	hist, err := tr.Fit(context.Background())
	require.ErrorContains(t, err, "train: epoch 1 has no examples: the loader gives 0 batches")
	assert.Empty(t, hist.Records)
}
