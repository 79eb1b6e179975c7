package data

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// collect runs one epoch and returns its batches, copied.
func collect(b *Batcher) [][]int {
	var out [][]int
	for idx := range b.Epoch() {
		out = append(out, slices.Clone(idx))
	}
	return out
}

func TestBatcherCoversEveryIndexOnce(t *testing.T) {
	for _, c := range []struct {
		n, size  int
		dropLast bool
		sizes    []int // batch sizes of an epoch
	}{
		{10, 3, false, []int{3, 3, 3, 1}},
		{10, 3, true, []int{3, 3, 3}},
		{9, 3, true, []int{3, 3, 3}},
		{2, 5, false, []int{2}},
		{2, 5, true, nil},
		{0, 4, false, nil},
	} {
		b := NewBatcher(c.n, c.size, BatchOptions{Seed: 7, DropLast: c.dropLast})
		assert.Equal(t, len(c.sizes), b.NumBatches(), "%+v", c)
		for epoch := range 3 {
			batches := collect(b)
			var sizes, all []int
			for _, idx := range batches {
				sizes = append(sizes, len(idx))
				all = append(all, idx...)
			}
			assert.Equal(t, c.sizes, sizes, "%+v epoch %d", c, epoch)
			seen := map[int]int{}
			for _, i := range all {
				seen[i]++
			}
			for i, k := range seen {
				assert.True(t, i >= 0 && i < c.n && k == 1, "%+v: index %d seen %d times", c, i, k)
			}
			if !c.dropLast {
				assert.Len(t, seen, c.n, "%+v", c)
			}
		}
	}
}

func TestBatcherSeedDeterminesOrder(t *testing.T) {
	run := func(seed uint64) [][][]int {
		b := NewBatcher(100, 16, BatchOptions{Seed: seed})
		return [][][]int{collect(b), collect(b)}
	}
	a, b, c := run(3), run(3), run(4)
	assert.Equal(t, a, b, "same seed, same batches in every epoch")
	assert.NotEqual(t, a[0], a[1], "a new order each epoch")
	assert.NotEqual(t, a[0], c[0], "another seed, another order")
	assert.NotEqual(t, slices.Concat(a[0]...), seq(100), "shuffled")

	inOrder := collect(NewBatcher(5, 2, BatchOptions{NoShuffle: true}))
	assert.Equal(t, [][]int{{0, 1}, {2, 3}, {4}}, inOrder)
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestGatherer(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		// Row i of src is (10i, 10i+1) in each of 2 channels.
		src := tensor.FromValues(dt, []float64{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}, 3, 2, 2)
		g := NewGatherer(src)
		got := g.Gather([]int{2, 0})
		assert.Equal(t, []int{2, 2, 2}, got.Shape(), dt)
		assert.Equal(t, []float64{20, 21, 22, 23, 0, 1, 2, 3}, got.Values(), dt)
		again := g.Gather([]int{1, 1})
		assert.Same(t, got, again, "%v: the buffer is reused", dt)
		assert.Equal(t, []float64{10, 11, 12, 13, 10, 11, 12, 13}, again.Values(), dt)
		one := g.Gather([]int{2})
		assert.Equal(t, []float64{20, 21, 22, 23}, one.Values(), dt)
		idx := []int{0, 2}
		allocs := testing.AllocsPerRun(20, func() { g.Gather(idx); g.Gather(idx[:1]) })
		assert.Zero(t, allocs, dt)
		assert.Panics(t, func() { g.Gather([]int{3}) }, dt)
	}
}

func TestGatherLabels(t *testing.T) {
	buf := make([]int, 0, 4)
	got := GatherLabels(buf, []int{5, 6, 7}, []int{2, 2, 0})
	assert.Equal(t, []int{7, 7, 5}, got)
	assert.Same(t, &buf[:1][0], &got[0], "appends into dst")
}

func TestTrainTestSplit(t *testing.T) {
	for _, c := range []struct {
		n      int
		frac   float64
		nTrain int
		nTest  int
	}{
		{10, 0.3, 7, 3},  // 0.3·10 is 3.0000000000000004 in floating point
		{10, 0.25, 7, 3}, // ⌈2.5⌉ = 3, as scikit-learn
		{5, 0, 5, 0},
		{5, 1, 0, 5},
	} {
		train, test := TrainTestSplit(c.n, c.frac, 1)
		require.Len(t, train, c.nTrain, "%+v", c)
		require.Len(t, test, c.nTest, "%+v", c)
		all := slices.Sorted(slices.Values(slices.Concat(train, test)))
		assert.Equal(t, seq(c.n), all, "%+v: a partition", c)
		train2, test2 := TrainTestSplit(c.n, c.frac, 1)
		assert.Equal(t, train, train2)
		assert.Equal(t, test, test2)
	}
	assert.Panics(t, func() { TrainTestSplit(10, 1.5, 1) })
}
