package gp

import "fmt"

// RowPartition splits CG inference's kernel products by rows over a group
// of processes. Its methods match distributed.Comm's, so an MPI
// communicator (distributed.Init built with the tag mpi) is a RowPartition:
//
//	comm, _ := distributed.Init()
//	opts := gp.ExactOptions{Inference: gp.CG, CG: gp.CGOptions{Partition: comm}}
//
// With Size() > 1, each rank computes its own contiguous blocks of rows of
// every product K̂·V and its share of the gradient pass, and AllReduceFloat64
// sums the parts, so every rank holds the whole product. Conjugate
// gradients, Lanczos quadrature, the preconditioner and the probes (drawn
// from the same seed) are replicated on every rank. Every rank must
// therefore build the same model on the same data and make the same
// LogMarginalLikelihood and Predict calls in the same order.
type RowPartition interface {
	// Rank is this process's index in the group, 0 ≤ Rank < Size.
	Rank() int
	// Size is the number of processes in the group.
	Size() int
	// AllReduceFloat64 replaces buf, on every rank, by the elementwise sum
	// of the ranks' bufs.
	AllReduceFloat64(buf []float64) error
}

// rows returns the rows [lo, hi) of the operator this rank computes: the
// row blocks of k.block rows are split evenly over the ranks, so a rank's
// blocks are exactly the blocks an unpartitioned product computes and the
// products agree bit for bit.
func (k *kernelOp) rows() (lo, hi int) {
	if !k.partitioned() {
		return 0, k.n
	}
	nb := (k.n + k.block - 1) / k.block
	r, s := k.part.Rank(), k.part.Size()
	return min(k.n, nb*r/s*k.block), min(k.n, nb*(r+1)/s*k.block)
}

// partitioned reports whether products are split over several ranks.
func (k *kernelOp) partitioned() bool { return k.part != nil && k.part.Size() > 1 }

// reduce sums buf over the ranks, keeping the first error in k.err (a
// LinearOperator's MatMul cannot return one; callers check k.err).
func (k *kernelOp) reduce(buf []float64) {
	if k.err != nil {
		return
	}
	if err := k.part.AllReduceFloat64(buf); err != nil {
		k.err = fmt.Errorf("all-reduce of a kernel product over %d ranks (rank %d): %w", k.part.Size(), k.part.Rank(), err)
	}
}

// checkPartition validates a partition's rank and size.
func checkPartition(p RowPartition) error {
	if p == nil {
		return nil
	}
	if s, r := p.Size(), p.Rank(); s < 1 || r < 0 || r >= s {
		return fmt.Errorf("gp.NewExact: CG partition has rank %d of size %d", r, s)
	}
	return nil
}
