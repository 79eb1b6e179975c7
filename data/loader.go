package data

import (
	"fmt"
	"iter"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"

	"github.com/gradus-ml/gradus/tensor"
)

// Example is one item of a Dataset: its features and what it is learned
// against. Class labels are ints, as everywhere in Gradus (losses,
// metrics, classifiers); a regression target is a tensor, so that one
// example can have several outputs. A dataset with neither (a generative
// model's) leaves both zero.
type Example struct {
	X      *tensor.Tensor
	Label  int            // class index 0 … classes−1 (0 when there are no labels)
	Target *tensor.Tensor // regression target, nil when there is none
}

// Dataset is indexed access to examples. Get must be safe to call from
// several goroutines (the loader's workers) and deterministic.
type Dataset interface {
	Len() int
	Get(i int) Example
}

// TensorDataset serves the rows of X (n, …) with their class labels or
// their regression targets (either may be nil; NewLoader checks that the
// ones given have n rows).
type TensorDataset struct {
	X       *tensor.Tensor // (n, …) features
	Labels  []int          // (n) class labels, or nil
	Targets *tensor.Tensor // (n, …) regression targets, or nil
}

// Len returns the number of rows.
func (d TensorDataset) Len() int { return d.X.Shape()[0] }

// Get returns row i (a view of X) with its label and target (a view of
// Targets). It panics with a *tensor.Error when i is not a row of X or
// has no label or target.
func (d TensorDataset) Get(i int) Example {
	if d.X == nil || d.X.Dim() == 0 || i < 0 || i >= d.X.Shape()[0] {
		tensor.Fail("data.TensorDataset.Get", "row %d of X %v", i, d.X)
	}
	if d.Labels != nil && i >= len(d.Labels) {
		tensor.Fail("data.TensorDataset.Get", "row %d has no label: %d labels", i, len(d.Labels))
	}
	if d.Targets != nil && (d.Targets.Dim() == 0 || i >= d.Targets.Shape()[0]) {
		tensor.Fail("data.TensorDataset.Get", "row %d has no target: Targets has shape %s", i, tensor.FormatShape(d.Targets.Shape()))
	}
	e := Example{X: row(d.X, i)}
	if d.Labels != nil {
		e.Label = d.Labels[i]
	}
	if d.Targets != nil {
		e.Target = row(d.Targets, i)
	}
	return e
}

// check panics, naming op, unless Labels and Targets fit X.
func (d TensorDataset) check(op string) {
	if d.X == nil || d.X.Dim() == 0 {
		tensor.Fail(op, "TensorDataset.X must be a tensor with a row axis")
	}
	n := d.X.Shape()[0]
	if d.Labels != nil && len(d.Labels) != n {
		tensor.Fail(op, "TensorDataset has %d labels for %d rows of X", len(d.Labels), n)
	}
	if d.Targets != nil && (d.Targets.Dim() == 0 || d.Targets.Shape()[0] != n) {
		tensor.Fail(op, "TensorDataset.Targets has shape %s, want %d rows like X", tensor.FormatShape(d.Targets.Shape()), n)
	}
}

func row(t *tensor.Tensor, i int) *tensor.Tensor {
	return tensor.Squeeze(tensor.Slice(t, 0, i, i+1, 1), 0)
}

// Batch is a collated group of examples.
type Batch struct {
	X       *tensor.Tensor // the examples' features stacked along a new first axis
	Labels  []int          // the examples' class labels (zeros when the data has none)
	Targets *tensor.Tensor // the examples' regression targets stacked, nil when they have none
	Index   []int          // the dataset indices, in batch order
}

// Len returns the number of examples in the batch: len(Index), or the
// rows of X for a batch made by hand without an Index.
func (b Batch) Len() int {
	if b.Index == nil && b.X != nil && b.X.Dim() > 0 {
		return b.X.Shape()[0]
	}
	return len(b.Index)
}

// Collate stacks the examples' features (all of one shape) into a batch,
// with their labels and, if the examples have targets, their targets
// stacked likewise.
func Collate(examples []Example, index []int) Batch {
	xs := make([]*tensor.Tensor, len(examples))
	labels := make([]int, len(examples))
	var ts []*tensor.Tensor
	for i, e := range examples {
		xs[i], labels[i] = tensor.Unsqueeze(e.X, 0), e.Label
		if (e.Target != nil) != (examples[0].Target != nil) {
			tensor.Fail("data.Collate", "example %d has a target and example 0 has not, or the other way round", i)
		}
		if e.Target != nil {
			ts = append(ts, tensor.Unsqueeze(e.Target, 0))
		}
	}
	b := Batch{X: tensor.Concat(0, xs...), Labels: labels, Index: append([]int(nil), index...)}
	if ts != nil {
		b.Targets = tensor.Concat(0, ts...)
	}
	return b
}

// Sampler gives the order in which an epoch visits a dataset's indices. It
// must depend only on its configuration and the epoch number.
type Sampler interface {
	Indices(epoch int) []int
}

// Sequential visits 0 … N−1 in order.
type Sequential struct{ N int }

// Indices returns 0 … N−1. It panics with a *tensor.Error for a negative N.
func (s Sequential) Indices(int) []int {
	checkCount("data.Sequential", "N", s.N)
	out := make([]int, s.N)
	for i := range out {
		out[i] = i
	}
	return out
}

// Random visits a permutation of 0 … N−1 drawn from the seed and the
// epoch, the same on every run and platform.
type Random struct {
	N    int
	Seed uint64
}

// Indices returns the epoch's permutation. It panics with a *tensor.Error
// for a negative N.
func (s Random) Indices(epoch int) []int {
	checkCount("data.Random", "N", s.N)
	return tensor.NewRNG(s.Seed*0x9E3779B97F4A7C15 + uint64(epoch)).Perm(s.N)
}

// Weighted draws Count indices with replacement, index i with probability
// proportional to Weights[i].
type Weighted struct {
	Weights []float64
	Count   int
	Seed    uint64
}

// Indices returns the epoch's draws. It panics with a *tensor.Error for a
// negative Count, or weights that are negative, not finite or all zero.
func (s Weighted) Indices(epoch int) []int {
	checkCount("data.Weighted", "Count", s.Count)
	cum := make([]float64, len(s.Weights))
	total := 0.0
	for i, w := range s.Weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			tensor.Fail("data.Weighted", "weight %d is %g: weights must be finite and not negative", i, w)
		}
		total += w
		cum[i] = total
	}
	if total <= 0 {
		tensor.Fail("data.Weighted", "the weights sum to %g", total)
	}
	rng := tensor.NewRNG(s.Seed*0x9E3779B97F4A7C15 + uint64(epoch))
	out := make([]int, s.Count)
	for k := range out {
		u := rng.Float64() * total
		out[k] = sort.SearchFloat64s(cum, u)
		if out[k] == len(cum) {
			out[k]--
		}
	}
	return out
}

// checkCount panics, naming op and the field, when a sampler's count is
// negative.
func checkCount(op, field string, n int) {
	if n < 0 {
		tensor.Fail(op, "%s = %d must not be negative", field, n)
	}
}

// Sharded gives rank Rank of Size its part of Inner's order: every
// Size-th index starting at Rank, after padding the order by wrapping
// around to a multiple of Size (PyTorch's DistributedSampler), so every
// rank gets the same number of indices and together they cover all.
type Sharded struct {
	Inner      Sampler
	Rank, Size int
}

// Indices returns this rank's part of the epoch. It panics with a
// *tensor.Error unless 0 ≤ Rank < Size and Inner is set.
func (s Sharded) Indices(epoch int) []int {
	if s.Size <= 0 || s.Rank < 0 || s.Rank >= s.Size {
		tensor.Fail("data.Sharded", "rank %d of %d: want Size ≥ 1 and 0 ≤ Rank < Size", s.Rank, s.Size)
	}
	if s.Inner == nil {
		tensor.Fail("data.Sharded", "the Inner sampler is nil")
	}
	all := s.Inner.Indices(epoch)
	if len(all) == 0 {
		return nil
	}
	per := (len(all) + s.Size - 1) / s.Size
	for i := 0; len(all) < per*s.Size; i++ {
		all = append(all, all[i])
	}
	out := make([]int, 0, per)
	for i := s.Rank; i < len(all); i += s.Size {
		out = append(out, all[i])
	}
	return out
}

// LoaderOptions configures a Loader.
type LoaderOptions struct {
	BatchSize int     // examples per batch (required)
	DropLast  bool    // leave out a short last batch
	Sampler   Sampler // nil: Random over the dataset, seeded by Seed
	// Collate builds a batch; nil is Collate (stacking), done by the
	// loader into reused buffers (see Loader.Release).
	Collate func(examples []Example, index []int) Batch
	// Workers > 0 builds batches on goroutines, up to Prefetch batches
	// ahead of the consumer (default 2·Workers). Batches arrive in the same
	// order, with the same contents, as without workers. At most
	// GOMAXPROCS−1 workers (and at least one) are started, so that loading
	// never takes every core from the training step's GEMM: the work of a
	// worker is a copy of the batch's rows, far less than a training step,
	// and one worker keeps ahead of it.
	Workers  int
	Prefetch int
	// Transform, if set, changes each example as it is loaded (see
	// Transform), with a generator seeded from Seed, the epoch and the
	// example's index.
	Transform Transform
	// Seed seeds the shuffle of the default sampler (Random{N, Seed}) and
	// the transforms' generators. An explicit Sampler has its own seed.
	Seed uint64
}

// Loader deals a Dataset out in batches.
//
// With the default collation the loader stacks the examples into batch
// buffers that it can reuse: a consumer that calls Release on a batch once
// it is done with it (after the training step that read it) lets the
// loader build a later batch in the same memory, so a steady-state epoch
// allocates no batch tensors. Release is optional; an unreleased batch is
// ordinary garbage-collected memory.
type Loader struct {
	ds   Dataset
	opts LoaderOptions
	// rows, labels and targets are a TensorDataset's contiguous features,
	// its labels and its contiguous targets when batches are plain row
	// gathers (default collation, no transform): the loader then copies
	// rows straight into the batch without making an Example per row.
	rows    *tensor.Tensor
	labels  []int
	targets *tensor.Tensor
	workers int
	pool    batchPool
}

// NewLoader returns a loader over ds. It panics with a *tensor.Error for a
// nil dataset, a batch size below 1, negative Workers or Prefetch, or a
// TensorDataset whose labels or targets do not have one row per row of X.
func NewLoader(ds Dataset, opts LoaderOptions) *Loader {
	const op = "data.NewLoader"
	if opts.BatchSize < 1 {
		tensor.Fail(op, "batch size %d: it must be at least 1", opts.BatchSize)
	}
	if opts.Workers < 0 || opts.Prefetch < 0 {
		tensor.Fail(op, "Workers %d and Prefetch %d must not be negative", opts.Workers, opts.Prefetch)
	}
	var td TensorDataset
	switch d := ds.(type) {
	case nil:
		tensor.Fail(op, "the dataset is nil")
	case TensorDataset:
		td = d
		td.check(op)
	case *TensorDataset:
		if d == nil {
			tensor.Fail(op, "the dataset is a nil *TensorDataset")
		}
		td = *d
		td.check(op)
	}
	if n := ds.Len(); n < 0 {
		tensor.Fail(op, "the dataset's Len is %d", n)
	}
	if opts.Sampler == nil {
		opts.Sampler = Random{N: ds.Len(), Seed: opts.Seed}
	}
	l := &Loader{ds: ds, opts: opts}
	if opts.Workers > 0 {
		l.workers = min(opts.Workers, max(1, runtime.GOMAXPROCS(0)-1))
		if l.opts.Prefetch <= 0 {
			l.opts.Prefetch = 2 * opts.Workers
		}
	}
	l.pool.limit = l.opts.Prefetch + 8
	if opts.Collate == nil && opts.Transform == nil && td.X != nil {
		l.rows, l.labels = td.X.Contiguous(), td.Labels
		if td.Targets != nil {
			l.targets = td.Targets.Contiguous()
		}
	}
	return l
}

// Release hands a batch of this loader back for reuse: its tensor, labels
// and index may be overwritten by a later batch, so neither the batch nor
// anything sharing its memory (a graph constant made from b.X, say) may be
// read afterwards. Release each batch at most once. Batches made by a
// custom Collate, short last batches and batches of other loaders are left
// alone.
func (l *Loader) Release(b Batch) { l.pool.put(b.X) }

// Epoch returns the batches of the given epoch, in order. It panics with
// a *tensor.Error when the sampler gives an index outside the dataset.
func (l *Loader) Epoch(epoch int) iter.Seq[Batch] {
	idx := l.opts.Sampler.Indices(epoch)
	n := l.ds.Len()
	for i, k := range idx {
		if k < 0 || k >= n {
			tensor.Fail("data.Loader.Epoch", "the sampler's index %d of epoch %d is %d, outside the dataset's 0 … %d", i, epoch, k, n-1)
		}
	}
	bounds := make([][2]int, 0, (len(idx)+l.opts.BatchSize-1)/l.opts.BatchSize)
	for lo := 0; lo < len(idx); lo += l.opts.BatchSize {
		hi := min(lo+l.opts.BatchSize, len(idx))
		if hi-lo < l.opts.BatchSize && l.opts.DropLast {
			break
		}
		bounds = append(bounds, [2]int{lo, hi})
	}
	build := func(b int) Batch { return l.build(epoch, idx[bounds[b][0]:bounds[b][1]]) }
	if l.workers <= 0 {
		return func(yield func(Batch) bool) {
			for b := range bounds {
				if !yield(build(b)) {
					return
				}
			}
		}
	}
	return func(yield func(Batch) bool) {
		// At most Prefetch batches are in flight, batch b in results[b mod
		// Prefetch]: a slot is taken before b is handed to a worker and
		// given back when the consumer has received b, so b+Prefetch never
		// finds its channel still full.
		results := make([]chan built, min(l.opts.Prefetch, len(bounds)))
		for i := range results {
			results[i] = make(chan built, 1)
		}
		jobs := make(chan int)
		slots := make(chan struct{}, len(results))
		done := make(chan struct{})
		var wg sync.WaitGroup
		defer func() { close(done); wg.Wait() }()
		go func() {
			defer close(jobs)
			for b := range bounds {
				select {
				case slots <- struct{}{}:
				case <-done:
					return
				}
				select {
				case jobs <- b:
				case <-done:
					return
				}
			}
		}()
		for range l.workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := range jobs {
					results[b%len(results)] <- l.safeBuild(epoch, b, build)
				}
			}()
		}
		for b := range bounds {
			res := <-results[b%len(results)]
			<-slots
			if res.panic != nil {
				// The deferred close(done) and wg.Wait stop the workers
				// while this panic unwinds through the caller's loop.
				panic(res.panic)
			}
			if !yield(res.batch) {
				return
			}
		}
	}
}

// built is a worker's batch, or the panic that building it raised.
type built struct {
	batch Batch
	panic *WorkerPanic
}

// WorkerPanic is the value an epoch's iteration panics with, in the
// caller's goroutine, when building a batch panicked in a worker (a
// Dataset's Get, a Transform or a Collate of the user's): a worker's panic
// would otherwise end the process, out of the caller's reach. It is an
// error; train's loop recovers it and ends Fit with it.
type WorkerPanic struct {
	Epoch, Batch int    // the epoch and the 0-based batch within it
	Value        any    // what the worker panicked with
	Stack        []byte // the worker's stack at the panic
}

// Error names the batch and the panic's value.
func (p *WorkerPanic) Error() string {
	return fmt.Sprintf("data.Loader: building batch %d of epoch %d panicked: %v", p.Batch, p.Epoch, p.Value)
}

// Unwrap returns the panic's value when it is an error.
func (p *WorkerPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// safeBuild builds batch b, turning a panic into a *WorkerPanic.
func (l *Loader) safeBuild(epoch, b int, build func(int) Batch) (res built) {
	defer func() {
		if r := recover(); r != nil {
			res.panic = &WorkerPanic{Epoch: epoch, Batch: b, Value: r, Stack: debug.Stack()}
		}
	}()
	return built{batch: build(b)}
}

// build makes the batch of the dataset indices part.
func (l *Loader) build(epoch int, part []int) Batch {
	if l.rows != nil {
		return l.gather(part)
	}
	ex := make([]Example, len(part))
	for i, k := range part {
		ex[i] = l.ds.Get(k)
		if l.opts.Transform != nil {
			ex[i] = l.opts.Transform(ex[i], exampleRNG(l.opts.Seed, epoch, k))
		}
	}
	if l.opts.Collate != nil {
		return l.opts.Collate(ex, part)
	}
	return l.stack(ex, part)
}

// NumBatches returns the number of batches of an epoch.
func (l *Loader) NumBatches(epoch int) int {
	n := len(l.opts.Sampler.Indices(epoch))
	if l.opts.DropLast {
		return n / l.opts.BatchSize
	}
	return (n + l.opts.BatchSize - 1) / l.opts.BatchSize
}
