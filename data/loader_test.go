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
	y := make([]float64, n)
	for i := range n {
		x = append(x, float64(i), float64(i*i))
		y[i] = float64(i)
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
	assert.Equal(t, []float64{8, 9}, bs[2].Labels)
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
