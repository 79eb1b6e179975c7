package distributed_test

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/gradus-ml/gradus/distributed"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// These tests run in every build. In the default build Init gives the
// single-process communicator; `make test-mpi` builds them with -tags mpi
// and runs them under mpirun on two ranks, where the same assertions check
// the real collectives.

var comm distributed.Comm

func TestMain(m *testing.M) {
	c, err := distributed.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	comm = c
	code := m.Run()
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// Rank r contributes (r+1)·(1, 2, 3), so the sum is size(size+1)/2·(1, 2, 3).
func TestAllReduceSums(t *testing.T) {
	r, s := float64(comm.Rank()+1), float64(comm.Size())
	want := s * (s + 1) / 2
	b32 := []float32{float32(r), float32(2 * r), float32(3 * r)}
	b64 := []float64{r, 2 * r, 3 * r}
	if err := comm.AllReduceFloat32(b32); err != nil {
		t.Fatal(err)
	}
	if err := comm.AllReduceFloat64(b64); err != nil {
		t.Fatal(err)
	}
	for i := range b64 {
		if b64[i] != want*float64(i+1) || float64(b32[i]) != want*float64(i+1) {
			t.Fatalf("rank %d: sums %v %v, want %g·(1, 2, 3)", comm.Rank(), b32, b64, want)
		}
	}
	if err := comm.AllReduceFloat64(nil); err != nil {
		t.Fatalf("an empty all-reduce: %v", err)
	}
}

// The last rank broadcasts its rank; everyone receives it.
func TestBroadcastFromLastRank(t *testing.T) {
	root := comm.Size() - 1
	b := []float64{float64(comm.Rank()), -1}
	if err := comm.BroadcastFloat64(b, root); err != nil {
		t.Fatal(err)
	}
	if b[0] != float64(root) || b[1] != -1 {
		t.Fatalf("rank %d got %v, want (%d, -1)", comm.Rank(), b, root)
	}
	if err := comm.BroadcastFloat32([]float32{1}, comm.Size()); err == nil {
		t.Fatal("a root past the last rank was accepted")
	}
	if err := comm.Barrier(); err != nil {
		t.Fatal(err)
	}
}

func TestShardRange(t *testing.T) {
	// 10 examples over 4 ranks: 3, 3, 2, 2.
	want := [][2]int{{0, 3}, {3, 6}, {6, 8}, {8, 10}}
	for r, w := range want {
		lo, hi := distributed.ShardRange(10, r, 4)
		if lo != w[0] || hi != w[1] {
			t.Errorf("rank %d: [%d, %d), want [%d, %d)", r, lo, hi, w[0], w[1])
		}
	}
	if lo, hi := distributed.ShardRange(2, 2, 3); lo != 2 || hi != 2 {
		t.Errorf("an empty shard: [%d, %d)", lo, hi)
	}
}

// mlp is the model of the equivalence test: 6 → 8 → 3 with tanh.
func mlp(seed uint64) *nn.Sequential {
	rng := tensor.NewRNG(seed)
	return nn.NewSequential(nn.NewLinear(rng, 6, 8, true, tensor.Float64), nn.Tanh{},
		nn.NewLinear(rng, 8, 3, true, tensor.Float64))
}

// step takes one Adam step on the mean squared error of rows [lo, hi) of
// (x, y), averaging the gradients over the ranks when dp is not nil: after
// the backward pass (AverageGradients) or overlapped with it (Gradients).
func step(t *testing.T, m *nn.Sequential, opt *optim.Adam, dp *distributed.DataParallel, overlap bool, x, y *tensor.Tensor, lo, hi int) {
	t.Helper()
	g := graph.New()
	xb := g.Const(tensor.Slice(x, 0, lo, hi, 1))
	yb := g.Const(tensor.Slice(y, 0, lo, hi, 1))
	loss := losses.MSE(m.Forward(xb), yb, losses.Mean)
	var grads []*tensor.Tensor
	switch {
	case dp == nil:
		grads = nn.Gradients(loss, m.Params())
	case overlap:
		var err error
		if grads, err = dp.Gradients(loss, m.Params()); err != nil {
			t.Fatal(err)
		}
	default:
		grads = nn.Gradients(loss, m.Params())
		if err := dp.AverageGradients(grads); err != nil {
			t.Fatal(err)
		}
	}
	if err := opt.Step(grads); err != nil {
		t.Fatal(err)
	}
}

// Data parallelism on the ranks gives the parameters of one process
// training on the whole batch. Each rank starts from its own random
// initialisation, so this also checks the broadcast. With the batch split
// evenly, the mean of the ranks' mean losses is the global mean loss; the
// sums differ only in the order of float64 additions, so after 5 Adam steps
// the parameters agree to a few ulps of their size (tolerance 1e-12).
func TestDataParallelEqualsOneProcess(t *testing.T) {
	for _, overlap := range []bool{false, true} {
		dataParallelEqualsOneProcess(t, overlap)
	}
}

func dataParallelEqualsOneProcess(t *testing.T, overlap bool) {
	const batch, steps = 16, 5
	if batch%comm.Size() != 0 {
		t.Skipf("batch %d does not split evenly over %d ranks", batch, comm.Size())
	}
	rng := tensor.NewRNG(99) // the same data on every rank
	x := rng.Normal(tensor.Float64, 0, 1, batch, 6)
	y := rng.Normal(tensor.Float64, 0, 1, batch, 3)

	par := mlp(uint64(1 + comm.Rank()))
	dp, err := distributed.NewDataParallel(comm, nn.Values(par.Params()))
	if err != nil {
		t.Fatal(err)
	}
	dp.SetBucketElems(40) // several buckets, one gradient alone
	ref := mlp(1)         // rank 0's initialisation
	parOpt := optim.NewAdam(nn.Values(par.Params()), optim.AdamOptions{LR: 0.05})
	refOpt := optim.NewAdam(nn.Values(ref.Params()), optim.AdamOptions{LR: 0.05})
	lo, hi := distributed.ShardRange(batch, comm.Rank(), comm.Size())
	for range steps {
		step(t, par, parOpt, dp, overlap, x, y, lo, hi)
		step(t, ref, refOpt, nil, false, x, y, 0, batch)
	}
	for i, p := range par.Params() {
		a, b := p.Value.Values(), ref.Params()[i].Value.Values()
		for k := range a {
			if math.Abs(a[k]-b[k]) > 1e-12*(1+math.Abs(b[k])) {
				t.Fatalf("rank %d (overlap %v): %s[%d] = %.17g, one process has %.17g", comm.Rank(), overlap, p.Name, k, a[k], b[k])
			}
		}
	}
}

func TestAverageGradientsRejectsMismatches(t *testing.T) {
	p := tensor.Zeros(tensor.Float64, 3)
	dp, err := distributed.NewDataParallel(comm, []*tensor.Tensor{p})
	if err != nil {
		t.Fatal(err)
	}
	if err := dp.AverageGradients(nil); err == nil {
		t.Error("no gradients for one parameter was accepted")
	}
	if err := dp.AverageGradients([]*tensor.Tensor{tensor.Zeros(tensor.Float32, 3)}); err == nil {
		t.Error("a float32 gradient for a float64 parameter was accepted")
	}
	if _, err := distributed.NewDataParallel(comm, []*tensor.Tensor{tensor.Transpose(tensor.Zeros(tensor.Float64, 2, 3))}); err == nil {
		t.Error("a non-contiguous parameter was accepted")
	}
}

// TestRankFailureStopsTheJob runs only when GRADUS_FAIL_RANK names a rank
// (make test-mpi sets it in a second run that must fail): that rank exits
// before a barrier the others wait at. mpirun must then end the whole job
// with an error instead of leaving the others blocked; the make target
// checks that it does so before its timeout.
func TestRankFailureStopsTheJob(t *testing.T) {
	fail := os.Getenv("GRADUS_FAIL_RANK")
	if fail == "" {
		t.Skip("set GRADUS_FAIL_RANK to run (make test-mpi does)")
	}
	if fail == fmt.Sprint(comm.Rank()) {
		fmt.Fprintf(os.Stderr, "rank %d: failing on purpose\n", comm.Rank())
		os.Exit(3)
	}
	if err := comm.Barrier(); err != nil {
		t.Fatalf("rank %d: barrier: %v", comm.Rank(), err)
	}
	t.Fatalf("rank %d passed a barrier that rank %s never reached", comm.Rank(), fail)
}
