package gp

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// fakeGroup is an in-process stand-in for an MPI communicator: size
// goroutine ranks whose AllReduceFloat64 sums their buffers in rank order.
type fakeGroup struct {
	size    int
	mu      sync.Mutex
	cond    *sync.Cond
	bufs    [][]float64
	arrived int
	gen     int
}

func newFakeGroup(size int) *fakeGroup {
	g := &fakeGroup{size: size, bufs: make([][]float64, size)}
	g.cond = sync.NewCond(&g.mu)
	return g
}

type fakeRank struct {
	g    *fakeGroup
	rank int
}

func (r fakeRank) Rank() int { return r.rank }
func (r fakeRank) Size() int { return r.g.size }

// AllReduceFloat64 waits for every rank's buffer; the last to arrive sums
// them in rank order into every buffer and releases the others.
func (r fakeRank) AllReduceFloat64(buf []float64) error {
	g := r.g
	g.mu.Lock()
	defer g.mu.Unlock()
	gen := g.gen
	g.bufs[r.rank] = buf
	g.arrived++
	if g.arrived < g.size {
		for gen == g.gen {
			g.cond.Wait()
		}
		return nil
	}
	sum := make([]float64, len(buf))
	for _, b := range g.bufs {
		if len(b) != len(buf) {
			return fmt.Errorf("fake all-reduce: lengths differ")
		}
		for i, v := range b {
			sum[i] += v
		}
	}
	for _, b := range g.bufs {
		copy(b, sum)
	}
	g.arrived = 0
	g.gen++
	g.cond.Broadcast()
	return nil
}

// failing is a partition of two ranks whose all-reduce fails.
type failing struct{}

func (failing) Rank() int                        { return 0 }
func (failing) Size() int                        { return 2 }
func (failing) AllReduceFloat64([]float64) error { return errors.New("peer gone") }

// partResult is one rank's LML, gradient and predictive mean and variance.
type partResult struct {
	lml        float64
	grad       map[string][]float64
	mean, vari []float64
	err        error
}

func partRun(mk func() kernel.Kernel, x, y, xs *tensor.Tensor, cg CGOptions) (out partResult) {
	defer func() {
		if r := recover(); r != nil {
			out.err = fmt.Errorf("panic: %v", r)
		}
	}()
	m, err := NewExact(x, y, ExactOptions{Kernel: mk(), Noise: 0.05, Mean: ConstantMean, Inference: CG, CG: cg})
	if err != nil {
		return partResult{err: err}
	}
	if err := m.Hyperparam("mean").Set(0.2); err != nil {
		return partResult{err: err}
	}
	g := graph.New()
	l, err := m.LogMarginalLikelihood(g)
	if err != nil {
		return partResult{err: err}
	}
	nodes := make([]*graph.Node, len(m.Hyperparams()))
	for i, p := range m.Hyperparams() {
		nodes[i] = p.RawNode(g)
	}
	gs := autodiff.Grad(l, nodes...)
	out.lml, out.grad = l.Item(), map[string][]float64{}
	for i, p := range m.Hyperparams() {
		out.grad[p.Name()] = gs[i].Value().Values()
	}
	pred, err := m.Predict(xs)
	if err != nil {
		return partResult{err: err}
	}
	out.mean, out.vari = pred.Mean.Values(), pred.Var.Values()
	return out
}

// Kernel products split by rows over 2 and 3 in-process ranks give every
// rank the unpartitioned LML, gradient (RBF, and Matérn 3/2 ARD whose
// lengthscale gradient has a column part; RBF in float32 tiles) and
// predictions to 1e-12: the
// products agree bit for bit (row blocks align with the ranks' shares),
// and the gradient pass's partial sums differ only in order.
func TestCGPartitionMatchesOneProcess(t *testing.T) {
	kernels := map[string]func() kernel.Kernel{
		"rbf":        func() kernel.Kernel { return kernel.NewScale(kernel.NewRBF(0.9, 1.3), 1.2) },
		"matern32":   func() kernel.Kernel { return kernel.NewScale(kernel.NewMatern32(0.7, 1.2), 0.9) },
		"rq-isotrop": func() kernel.Kernel { return kernel.NewRationalQuadratic(0.8, 1.5) },
		"rbf-f32":    func() kernel.Kernel { return kernel.NewScale(kernel.NewRBF(0.9, 1.3), 1.2) },
	}
	x, y := toyData(8, 300, 2)
	xs, _ := toyData(9, 20, 2)
	for name, mk := range kernels {
		t.Run(name, func(t *testing.T) {
			cg := CGOptions{Probes: 8, Rank: 20, Tol: 1e-8, Seed: 5, BlockRows: 16}
			if name == "rbf-f32" { // float32 tiles: blocks of 64 rows
				cg = CGOptions{Probes: 8, Rank: 20, Tol: 1e-5, Seed: 5, Float32: true}
			}
			want := partRun(mk, x, y, xs, cg)
			require.NoError(t, want.err)
			for _, size := range []int{2, 3} {
				grp := newFakeGroup(size)
				got := make([]partResult, size)
				var wg sync.WaitGroup
				for r := 0; r < size; r++ {
					wg.Add(1)
					go func(r int) {
						defer wg.Done()
						c := cg
						c.Partition = fakeRank{grp, r}
						got[r] = partRun(mk, x, y, xs, c)
					}(r)
				}
				wg.Wait()
				for r, g := range got {
					require.NoError(t, g.err, "rank %d of %d", r, size)
					assert.InDelta(t, want.lml, g.lml, 1e-12*math.Abs(want.lml), "LML, rank %d of %d", r, size)
					for p, v := range want.grad {
						for i := range v {
							assert.InDelta(t, v[i], g.grad[p][i], 1e-12*math.Max(1, math.Abs(v[i])), "%s[%d], rank %d of %d", p, i, r, size)
						}
					}
					assert.Equal(t, want.mean, g.mean, "predictive mean, rank %d of %d", r, size)
					assert.Equal(t, want.vari, g.vari, "predictive variance, rank %d of %d", r, size)
				}
			}
		})
	}
}

// A failed all-reduce is an error of the call, and a partition with an
// impossible rank is refused by NewExact.
func TestCGPartitionErrors(t *testing.T) {
	x, y := toyData(8, 100, 2)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(1), Noise: 0.05, Inference: CG, CG: CGOptions{Partition: failing{}}})
	require.NoError(t, err)
	_, err = m.LogMarginalLikelihood(graph.New())
	assert.ErrorContains(t, err, "gp.LogMarginalLikelihood: all-reduce of a kernel product over 2 ranks (rank 0): peer gone")
	_, err = m.Predict(x)
	assert.ErrorContains(t, err, "gp.Predict: all-reduce")
	_, err = NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(1), Noise: 0.05, Inference: CG, CG: CGOptions{Partition: fakeRank{newFakeGroup(2), 2}}})
	assert.ErrorContains(t, err, "gp.NewExact: CG partition has rank 2 of size 2")
}
