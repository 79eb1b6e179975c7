package data

import (
	"iter"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Batcher deals the indices 0..n−1 out in mini-batches, in a new random
// order every epoch. The order depends only on the seed and the epoch
// number, so the same seed gives the same batches on every run.
//
//	b := data.NewBatcher(len(labels), 128, data.BatchOptions{Seed: 1})
//	rows := data.NewGatherer(x)
//	var yb []int
//	for epoch := range 10 {
//		for idx := range b.Epoch() {
//			xb := rows.Gather(idx) // (len(idx), 784), reused buffer
//			yb = data.GatherLabels(yb[:0], labels, idx)
//			...
//		}
//	}
type Batcher struct {
	n, size int
	opts    BatchOptions
	rng     *tensor.RNG
	perm    []int
}

// BatchOptions configures a Batcher. The zero value shuffles with seed 0
// and keeps a smaller last batch.
type BatchOptions struct {
	Seed      uint64 // seeds the shuffling
	DropLast  bool   // leave out the last batch if it is smaller than the batch size
	NoShuffle bool   // deal the indices in order 0..n−1 (for evaluation)
}

// NewBatcher returns a Batcher over n samples in batches of size. It panics
// if n is negative or size is not positive.
func NewBatcher(n, size int, opts BatchOptions) *Batcher {
	if n < 0 || size <= 0 {
		tensor.Fail("data.NewBatcher", "need n ≥ 0 and batch size > 0, got n = %d, size = %d", n, size)
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	return &Batcher{n: n, size: size, opts: opts, rng: tensor.NewRNG(opts.Seed), perm: perm}
}

// NumBatches returns the number of batches in an epoch.
func (b *Batcher) NumBatches() int {
	if b.opts.DropLast {
		return b.n / b.size
	}
	return (b.n + b.size - 1) / b.size
}

// Epoch shuffles the indices (unless NoShuffle) and returns an iterator
// over the batches of one epoch. Every index appears exactly once per
// epoch, except those of a short last batch with DropLast. The yielded
// slices share the Batcher's memory: they are valid until the next call
// to Epoch, and must not be modified.
func (b *Batcher) Epoch() iter.Seq[[]int] {
	if !b.opts.NoShuffle {
		// Fisher–Yates in place, so an epoch allocates nothing.
		for i := len(b.perm) - 1; i > 0; i-- {
			j := b.rng.Intn(i + 1)
			b.perm[i], b.perm[j] = b.perm[j], b.perm[i]
		}
	}
	return func(yield func([]int) bool) {
		for lo := 0; lo < b.n; lo += b.size {
			hi := min(lo+b.size, b.n)
			if hi-lo < b.size && b.opts.DropLast {
				return
			}
			if !yield(b.perm[lo:hi:hi]) {
				return
			}
		}
	}
}

// Gatherer copies rows of a source tensor into a reused batch tensor, so a
// training loop does not allocate per batch.
type Gatherer struct {
	src  *tensor.Tensor
	row  int                    // elements per row of src
	bufs map[int]*tensor.Tensor // one buffer per batch size seen (usually two)
	out  []int                  // shape scratch
}

// NewGatherer returns a Gatherer over the rows (first axis) of src, a
// float32 or float64 tensor of at least one dimension. A non-contiguous src
// is copied once.
func NewGatherer(src *tensor.Tensor) *Gatherer {
	if len(src.Shape()) == 0 {
		tensor.Fail("data.NewGatherer", "source must have a row axis, got a scalar")
	}
	src = src.Contiguous()
	row := 1
	for _, d := range src.Shape()[1:] {
		row *= d
	}
	return &Gatherer{src: src, row: row, bufs: map[int]*tensor.Tensor{}}
}

// Gather returns the tensor (len(idx), src's other dims...) holding the rows
// idx of the source in that order. The result is a buffer owned by the
// Gatherer, overwritten by the next Gather of the same length. It panics if
// an index is out of range.
func (g *Gatherer) Gather(idx []int) *tensor.Tensor {
	n := g.src.Shape()[0]
	for _, i := range idx {
		if i < 0 || i >= n {
			tensor.Fail("data.Gather", "row index %d out of range for a source with %d rows", i, n)
		}
	}
	dst, ok := g.bufs[len(idx)]
	if !ok {
		g.out = append(g.out[:0], len(idx))
		g.out = append(g.out, g.src.Shape()[1:]...)
		dst = tensor.New(g.src.DType(), g.out...)
		g.bufs[len(idx)] = dst
	}
	switch g.src.DType() {
	case tensor.Float32:
		gatherRows(dst.Float32s(), g.src.Float32s(), idx, g.row)
	default:
		gatherRows(dst.Float64s(), g.src.Float64s(), idx, g.row)
	}
	return dst
}

// gatherRows copies rows idx of src (row elements each) into dst.
func gatherRows[T float32 | float64](dst, src []T, idx []int, row int) {
	for k, i := range idx {
		copy(dst[k*row:(k+1)*row], src[i*row:(i+1)*row])
	}
}

// GatherLabels appends labels[idx[k]] for each k to dst and returns it;
// pass dst[:0] of a reused slice to avoid allocating.
func GatherLabels(dst, labels, idx []int) []int {
	for _, i := range idx {
		dst = append(dst, labels[i])
	}
	return dst
}

// TrainTestSplit shuffles the indices 0..n−1 with seed and splits them into
// train and test sets, with ⌈testFraction·n⌉ test indices (scikit-learn's
// rounding). It panics unless 0 ≤ testFraction ≤ 1.
func TrainTestSplit(n int, testFraction float64, seed uint64) (train, test []int) {
	if !(testFraction >= 0 && testFraction <= 1) || n < 0 {
		tensor.Fail("data.TrainTestSplit", "need n ≥ 0 and 0 ≤ testFraction ≤ 1, got n = %d, testFraction = %g", n, testFraction)
	}
	perm := tensor.NewRNG(seed).Perm(n)
	// The tolerance keeps 0.3·10 from rounding up to 4 through representation error.
	nTest := int(math.Ceil(testFraction*float64(n) - 1e-9))
	return perm[nTest:], perm[:nTest]
}
