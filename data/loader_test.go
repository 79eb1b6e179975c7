package data

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// squares is a dataset whose example i is the row (i, i²) with label i.
func squares(n int) TensorDataset {
	x := make([]float64, 0, 2*n)
	y := make([]int, n)
	for i := range n {
		x = append(x, float64(i), float64(i*i))
		y[i] = i
	}
	return TensorDataset{X: tensor.FromFloat64s(x, n, 2), Labels: y}
}

func collectBatches(l *Loader, epoch int) []Batch {
	var out []Batch
	for b := range l.Epoch(epoch) {
		out = append(out, b)
	}
	return out
}

// Batches carry the examples the sampler chose, stacked; drop-last and the
// short last batch behave as documented.
func TestLoaderBatches(t *testing.T) {
	l := NewLoader(squares(10), LoaderOptions{BatchSize: 4, Sampler: Sequential{N: 10}})
	bs := collectBatches(l, 0)
	require.Len(t, bs, 3)
	assert.Equal(t, []int{4, 2}, bs[0].X.Shape())
	assert.Equal(t, []float64{0, 0, 1, 1, 2, 4, 3, 9}, bs[0].X.Values())
	assert.Equal(t, []int{8, 9}, bs[2].Labels)
	assert.Equal(t, 2, bs[2].Len())
	assert.Nil(t, bs[2].Targets)
	assert.Equal(t, 3, Batch{X: tensor.New(tensor.Float32, 3, 5)}.Len(), "a batch made by hand counts the rows of X")
	assert.Equal(t, 3, l.NumBatches(0))
	dl := NewLoader(squares(10), LoaderOptions{BatchSize: 4, Sampler: Sequential{N: 10}, DropLast: true})
	assert.Len(t, collectBatches(dl, 0), 2)
}

// The order depends only on the seed and the epoch; prefetching on any
// number of workers yields exactly the synchronous batches; stopping early
// leaves no goroutine behind (the race detector and the test's end would
// see it).
func TestLoaderDeterministicWithPrefetch(t *testing.T) {
	ds := squares(103)
	base := LoaderOptions{BatchSize: 8, Sampler: Random{N: 103, Seed: 7}}
	want := collectBatches(NewLoader(ds, base), 3)
	again := collectBatches(NewLoader(ds, base), 3)
	require.Equal(t, want, again)
	other := collectBatches(NewLoader(ds, base), 4)
	assert.NotEqual(t, want[0].Index, other[0].Index, "a new epoch reshuffles")
	for _, w := range []int{1, 3} {
		opts := base
		opts.Workers = w
		got := collectBatches(NewLoader(ds, opts), 3)
		require.Equal(t, len(want), len(got))
		for i := range want {
			assert.Equal(t, want[i].Index, got[i].Index)
			assert.Equal(t, want[i].X.Values(), got[i].X.Values())
		}
		n := 0
		for range NewLoader(ds, opts).Epoch(3) {
			if n++; n == 2 {
				break
			}
		}
	}
	var seen []int
	for _, b := range want {
		seen = append(seen, b.Index...)
	}
	slices.Sort(seen)
	assert.Equal(t, Sequential{N: 103}.Indices(0), seen, "an epoch visits every index once")
}

// Sharded parts are disjoint apart from the wrap-around padding, equally
// long, and cover every index.
func TestSharded(t *testing.T) {
	inner := Random{N: 10, Seed: 1}
	var all []int
	for r := range 3 {
		part := Sharded{Inner: inner, Rank: r, Size: 3}.Indices(2)
		assert.Len(t, part, 4)
		all = append(all, part...)
	}
	order := inner.Indices(2)
	assert.Equal(t, append(slices.Clone(order), order[:2]...), interleave(all, 3))
}

// interleave undoes the round-robin split of Sharded.
func interleave(parts []int, size int) []int {
	per := len(parts) / size
	out := make([]int, 0, len(parts))
	for i := range per {
		for r := range size {
			out = append(out, parts[r*per+i])
		}
	}
	return out
}

// Weighted draws follow the weights: with weights (1, 3) over 40,000 draws
// the share of index 1 is 0.75 within five binomial standard errors.
func TestWeighted(t *testing.T) {
	idx := Weighted{Weights: []float64{1, 3}, Count: 40000, Seed: 5}.Indices(0)
	ones := 0
	for _, i := range idx {
		ones += i
	}
	assert.InDelta(t, 0.75, float64(ones)/40000, 5*math.Sqrt(0.75*0.25/40000))
	assert.Panics(t, func() { Weighted{Weights: []float64{0, 0}, Count: 1}.Indices(0) })
}

// rowsOnly hides TensorDataset's type, so the loader takes the general
// path (an Example per row, then stacking) instead of gathering rows.
type rowsOnly struct{ TensorDataset }

// The loader's three ways to build a batch (gathering rows of a
// TensorDataset, stacking the examples of any Dataset, and the exported
// Collate) give the same batches; released buffers are reused for later
// batches (the same memory) without changing what the consumer sees, with
// workers too; a batch that is not released is never overwritten.
func TestLoaderReleaseReuses(t *testing.T) {
	ds := squares(37)
	base := LoaderOptions{BatchSize: 8, Sampler: Random{N: 37, Seed: 3}}
	custom := base
	custom.Collate = Collate
	want := collectBatches(NewLoader(ds, custom), 1)
	require.Len(t, want, 5)
	assert.Equal(t, []int{5, 2}, want[4].X.Shape())
	for _, d := range []Dataset{ds, rowsOnly{ds}} {
		for _, w := range []int{0, 2} {
			opts := base
			opts.Workers = w
			l := NewLoader(d, opts)
			assert.Equal(t, want, collectBatches(l, 1), "workers %d, without Release", w)
			var mem []*float64
			i := 0
			for b := range l.Epoch(1) {
				assert.Equal(t, want[i].X.Values(), b.X.Values(), "workers %d, batch %d", w, i)
				assert.Equal(t, want[i].Labels, b.Labels)
				assert.Equal(t, want[i].Index, b.Index)
				mem = append(mem, &b.X.Float64s()[0])
				l.Release(b)
				i++
			}
			require.Equal(t, len(want), i)
			if w == 0 {
				assert.Same(t, mem[0], mem[1], "the released buffer of batch 0 holds batch 1")
				assert.NotSame(t, mem[3], mem[4], "the short last batch has its own memory")
			}
		}
	}
	l := NewLoader(ds, base)
	var kept []Batch
	for b := range l.Epoch(1) {
		kept = append(kept, b) // never released
	}
	assert.Equal(t, want, kept)
}

// A steady-state epoch of released batches allocates nothing per batch:
// only the sampler's permutation, the batch bounds and the iterator.
func TestLoaderReleasedEpochAllocations(t *testing.T) {
	x := tensor.New(tensor.Float32, 256, 16)
	l := NewLoader(TensorDataset{X: x, Labels: make([]int, 256)},
		LoaderOptions{BatchSize: 16, Sampler: Random{N: 256, Seed: 1}})
	epoch := 0
	allocs := testing.AllocsPerRun(5, func() {
		for b := range l.Epoch(epoch) {
			l.Release(b)
		}
		epoch++
	})
	assert.LessOrEqual(t, allocs, 8.0, "16 batches per epoch")
}

// Regression targets travel with their rows as tensors, on the gathering
// path, the stacking path and through Collate alike; a dataset without
// labels gives zero labels.
func TestLoaderTargets(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5}, 3, 2)
	y := tensor.FromFloat32s([]float32{10, 11, 20, 21, 30, 31}, 3, 2)
	ds := TensorDataset{X: x, Targets: y}
	assert.Equal(t, []float64{20, 21}, ds.Get(1).Target.Values())
	order := Sequential{N: 3}
	for _, opts := range []LoaderOptions{
		{BatchSize: 2, Sampler: order},
		{BatchSize: 2, Sampler: order, Collate: Collate},
	} {
		for _, d := range []Dataset{ds, rowsOnly{ds}} {
			bs := collectBatches(NewLoader(d, opts), 0)
			require.Len(t, bs, 2)
			assert.Equal(t, []int{2, 2}, bs[0].Targets.Shape())
			assert.Equal(t, tensor.Float32, bs[0].Targets.DType())
			assert.Equal(t, []float64{10, 11, 20, 21}, bs[0].Targets.Values())
			assert.Equal(t, []float64{30, 31}, bs[1].Targets.Values())
			assert.Equal(t, []int{0}, bs[1].Labels)
		}
	}
}

// NewLoader refuses labels or targets that do not have a row per row of X.
func TestLoaderRefusesShortLabels(t *testing.T) {
	x := tensor.New(tensor.Float64, 4, 2)
	for _, c := range []struct {
		ds  TensorDataset
		msg string
	}{
		{TensorDataset{X: x, Labels: []int{0, 1, 2}}, "TensorDataset has 3 labels for 4 rows of X"},
		{TensorDataset{X: x, Targets: tensor.New(tensor.Float64, 5)}, "TensorDataset.Targets has shape (5,), want 4 rows like X"},
	} {
		var err *tensor.Error
		func() {
			defer func() { err, _ = recover().(*tensor.Error) }()
			NewLoader(c.ds, LoaderOptions{BatchSize: 2})
		}()
		require.NotNil(t, err, c.msg)
		assert.Equal(t, "data.NewLoader", err.Op)
		assert.Equal(t, c.msg, err.Msg)
	}
}

// LoaderOptions.Seed seeds the default shuffle: the same seed gives the
// same order, Random{N, Seed}'s, and another seed another order.
func TestLoaderSeedShuffles(t *testing.T) {
	order := func(seed uint64) []int {
		var idx []int
		for b := range NewLoader(squares(20), LoaderOptions{BatchSize: 20, Seed: seed}).Epoch(0) {
			idx = append(idx, b.Index...)
		}
		return idx
	}
	assert.Equal(t, order(1), order(1))
	assert.Equal(t, Random{N: 20, Seed: 1}.Indices(0), order(1))
	assert.NotEqual(t, order(1), order(2))
	assert.Equal(t, Random{N: 20, Seed: 2}.Indices(0), order(2))
}

// Examples of different shapes cannot be stacked: the error names them.
func TestLoaderStackShapeError(t *testing.T) {
	ds := ragged{}
	l := NewLoader(ds, LoaderOptions{BatchSize: 2, Sampler: Sequential{N: 2}})
	defer func() {
		err, ok := recover().(*tensor.Error)
		require.True(t, ok, "panics with a *tensor.Error")
		assert.Equal(t, "data.Collate", err.Op)
		assert.Equal(t, "example 1 of the batch (dataset index 1) is float64 of shape [3], the first is float64 of shape [2]", err.Msg)
	}()
	collectBatches(l, 0)
}

// ragged's example i has i+2 features.
type ragged struct{}

func (ragged) Len() int { return 2 }
func (ragged) Get(i int) Example {
	return Example{X: tensor.New(tensor.Float64, i+2)}
}
