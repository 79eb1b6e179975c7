package data

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// outOfRange is a sampler that hands out an index past the dataset.
type outOfRange struct{}

func (outOfRange) Indices(int) []int { return []int{0, 7} }

// Each misuse of the data toolkit panics with a *tensor.Error naming the
// call, what was wrong and the line of the test that misused it.
func TestDataMisusePanicsNameCallAndCaller(t *testing.T) {
	ds := squares(4)
	var nilDataset *TensorDataset
	short := TensorDataset{X: ds.X, Labels: []int{0, 1}}
	cases := []struct {
		name, op, site string
		f              func()
		frag           []string
	}{
		{"nil dataset", "data.NewLoader", numtest.Here(), func() { NewLoader(nil, LoaderOptions{BatchSize: 2}) }, []string{"dataset is nil"}},
		{"nil *TensorDataset", "data.NewLoader", numtest.Here(), func() { NewLoader(nilDataset, LoaderOptions{BatchSize: 2}) }, []string{"nil *TensorDataset"}},
		{"labels shorter than X", "data.NewLoader", numtest.Here(), func() { NewLoader(short, LoaderOptions{BatchSize: 2}) }, []string{"2 labels for 4 rows"}},
		{"batch size 0", "data.NewLoader", numtest.Here(), func() { NewLoader(ds, LoaderOptions{}) }, []string{"batch size 0"}},
		{"negative workers", "data.NewLoader", numtest.Here(), func() { NewLoader(ds, LoaderOptions{BatchSize: 1, Workers: -1}) }, []string{"Workers -1"}},
		{"sampler index out of range", "data.Loader.Epoch", numtest.Here(), func() { NewLoader(ds, LoaderOptions{BatchSize: 1, Sampler: outOfRange{}}).Epoch(3) }, []string{"index 1 of epoch 3 is 7", "0 … 3"}},
		{"sampler index out of range with workers", "data.Loader.Epoch", numtest.Here(), func() { NewLoader(ds, LoaderOptions{BatchSize: 1, Workers: 2, Sampler: outOfRange{}}).Epoch(0) }, []string{"is 7"}},
		{"Get past the rows", "data.TensorDataset.Get", numtest.Here(), func() { ds.Get(4) }, []string{"row 4"}},
		{"Get past the labels", "data.TensorDataset.Get", numtest.Here(), func() { short.Get(3) }, []string{"row 3 has no label: 2 labels"}},
		{"Sequential N < 0", "data.Sequential", numtest.Here(), func() { Sequential{N: -1}.Indices(0) }, []string{"N = -1"}},
		{"Random N < 0", "data.Random", numtest.Here(), func() { Random{N: -2}.Indices(0) }, []string{"N = -2"}},
		{"Weighted Count < 0", "data.Weighted", numtest.Here(), func() { Weighted{Weights: []float64{1}, Count: -1}.Indices(0) }, []string{"Count = -1"}},
		{"Weighted NaN weight", "data.Weighted", numtest.Here(), func() { Weighted{Weights: []float64{1, math.NaN()}, Count: 1}.Indices(0) }, []string{"weight 1 is NaN"}},
		{"Weighted negative weight", "data.Weighted", numtest.Here(), func() { Weighted{Weights: []float64{-1}, Count: 1}.Indices(0) }, []string{"weight 0 is -1"}},
		{"Weighted zero weights", "data.Weighted", numtest.Here(), func() { Weighted{Weights: []float64{0, 0}, Count: 1}.Indices(0) }, []string{"sum to 0"}},
		{"Sharded rank outside size", "data.Sharded", numtest.Here(), func() { Sharded{Inner: Sequential{N: 4}, Rank: 2, Size: 2}.Indices(0) }, []string{"rank 2 of 2"}},
		{"Sharded without inner", "data.Sharded", numtest.Here(), func() { Sharded{Rank: 0, Size: 1}.Indices(0) }, []string{"Inner sampler is nil"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			numtest.Misuse(t, c.op, c.site, c.f, c.frag...)
		})
	}
}

// A misuse found inside a worker (a Get past the labels of a dataset the
// loader cannot check) reaches the caller as a *WorkerPanic wrapping the
// *tensor.Error, in the caller's goroutine.
func TestLoaderWorkerMisuseReachesCaller(t *testing.T) {
	l := NewLoader(wrapped{TensorDataset{X: tensor.New(tensor.Float64, 4, 2), Labels: []int{0, 1}}}, LoaderOptions{BatchSize: 2, Workers: 2, Sampler: Sequential{N: 4}})
	var wp *WorkerPanic
	func() {
		defer func() { wp, _ = recover().(*WorkerPanic) }()
		collectBatches(l, 0)
	}()
	if wp == nil {
		t.Fatal("no *WorkerPanic")
	}
	e, ok := wp.Value.(*tensor.Error)
	if !ok || e.Op != "data.TensorDataset.Get" || wp.Batch != 1 {
		t.Errorf("worker panic %v (batch %d), want data.TensorDataset.Get's *tensor.Error in batch 1", wp.Value, wp.Batch)
	}
}

// wrapped hides a TensorDataset from NewLoader's own check.
type wrapped struct{ TensorDataset }
