package distributed_test

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// The communicator is a gp.RowPartition as it stands.
var _ gp.RowPartition = comm

// cgLML returns the CG estimate of a GP's log marginal likelihood and its
// gradient on a fixed synthetic problem (n = 300, 2-D inputs, an ARD RBF
// kernel), with the kernel products partitioned over part when it is not
// nil.
func cgLML(t *testing.T, part gp.RowPartition) (float64, []float64) {
	t.Helper()
	rng := tensor.NewRNG(11)
	x := rng.Uniform(tensor.Float64, -2, 2, 300, 2)
	xv := x.Float64s()
	y := make([]float64, 300)
	noise := rng.Normal(tensor.Float64, 0, 0.1, 300).Float64s()
	for i := range y {
		y[i] = math.Sin(2*xv[2*i]) + 0.5*math.Cos(3*xv[2*i+1]) + noise[i]
	}
	m, err := gp.NewExact(x, tensor.FromFloat64s(y, 300), gp.ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.8, 1.1), 1), Noise: 0.05, Inference: gp.CG,
		CG: gp.CGOptions{Probes: 8, Rank: 16, Tol: 1e-8, Seed: 3, BlockRows: 16, Partition: part}})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	l, err := m.LogMarginalLikelihood(g)
	if err != nil {
		t.Fatalf("rank %d: %v", comm.Rank(), err)
	}
	nodes := make([]*graph.Node, len(m.Hyperparams()))
	for i, p := range m.Hyperparams() {
		nodes[i] = p.RawNode(g)
	}
	var grad []float64
	for _, gv := range autodiff.Grad(l, nodes...) {
		grad = append(grad, gv.Value().Values()...)
	}
	return l.Item(), grad
}

// GP kernel products partitioned by rows over the communicator's ranks
// (two under make test-mpi) give every rank the single-process CG log
// marginal likelihood and gradient to 1e-10 relative.
func TestGPPartitionedKernelProduct(t *testing.T) {
	want, wantGrad := cgLML(t, nil)
	got, gotGrad := cgLML(t, comm)
	if d := math.Abs(got - want); d > 1e-10*math.Abs(want) {
		t.Fatalf("rank %d of %d: partitioned LML %.17g, one process %.17g", comm.Rank(), comm.Size(), got, want)
	}
	for i := range wantGrad {
		if d := math.Abs(gotGrad[i] - wantGrad[i]); d > 1e-10*math.Max(1, math.Abs(wantGrad[i])) {
			t.Errorf("rank %d of %d: gradient[%d] partitioned %.17g, one process %.17g", comm.Rank(), comm.Size(), i, gotGrad[i], wantGrad[i])
		}
	}
	t.Logf("rank %d of %d: LML %.17g (one process %.17g)", comm.Rank(), comm.Size(), got, want)
}
