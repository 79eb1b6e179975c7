// Package distributed runs training over several processes: a small
// communicator interface (rank, size, in-place all-reduce, broadcast,
// barrier) and data-parallel helpers built on it.
//
// The default build has one implementation, the single-process Local
// communicator, and no dependency. Built with the tag mpi (which needs cgo
// and Open MPI: Debian's libopenmpi-dev and openmpi-bin), Init returns a
// communicator over MPI_COMM_WORLD, so that
//
//	go build -tags mpi -o train ./examples/mnist-mlp
//	mpirun -np 2 ./train -ranks ...
//
// trains one model on two processes. Without mpirun, an mpi build runs as a
// single rank (MPI's singleton mode) and says so on standard error.
//
// Data parallelism (DataParallel): every rank holds the whole model; rank 0
// broadcasts the initial parameters, each rank computes gradients on its
// shard of the batch, and the gradients are averaged by all-reduce before
// every optimiser step, so all ranks take identical steps. Gradients
// computes them and starts the all-reduce of each bucket while the rest of
// the backward pass runs; AverageGradients reduces gradients computed
// beforehand.
package distributed

import "fmt"

// Comm is a communicator over a fixed group of processes (ranks 0 … Size−1).
// Collective calls must be made by every rank in the same order with
// buffers of the same length; they block until the collective completes.
type Comm interface {
	// Rank is this process's index in the group.
	Rank() int
	// Size is the number of processes in the group.
	Size() int
	// AllReduceFloat32 replaces buf, on every rank, by the elementwise sum
	// of the ranks' bufs.
	AllReduceFloat32(buf []float32) error
	// AllReduceFloat64 is AllReduceFloat32 for float64 buffers.
	AllReduceFloat64(buf []float64) error
	// BroadcastFloat32 copies root's buf into every other rank's buf.
	BroadcastFloat32(buf []float32, root int) error
	// BroadcastFloat64 is BroadcastFloat32 for float64 buffers.
	BroadcastFloat64(buf []float64, root int) error
	// Barrier returns once every rank has called it.
	Barrier() error
	// Close releases the communicator (MPI_Finalize for MPI). Collectives
	// fail after it.
	Close() error
}

// Local is the communicator of a single process: rank 0 of 1. Its
// collectives leave buffers unchanged.
type Local struct{ closed bool }

// NewLocal returns a single-process communicator.
func NewLocal() *Local { return &Local{} }

// Rank returns 0.
func (*Local) Rank() int { return 0 }

// Size returns 1.
func (*Local) Size() int { return 1 }

// AllReduceFloat32 leaves buf as it is: the sum over one rank.
func (l *Local) AllReduceFloat32([]float32) error { return l.check("AllReduceFloat32") }

// AllReduceFloat64 leaves buf as it is: the sum over one rank.
func (l *Local) AllReduceFloat64([]float64) error { return l.check("AllReduceFloat64") }

// BroadcastFloat32 checks that root is 0 and leaves buf as it is.
func (l *Local) BroadcastFloat32(_ []float32, root int) error {
	return l.checkRoot("BroadcastFloat32", root)
}

// BroadcastFloat64 checks that root is 0 and leaves buf as it is.
func (l *Local) BroadcastFloat64(_ []float64, root int) error {
	return l.checkRoot("BroadcastFloat64", root)
}

// Barrier returns at once.
func (l *Local) Barrier() error { return l.check("Barrier") }

// Close marks the communicator closed.
func (l *Local) Close() error {
	if err := l.check("Close"); err != nil {
		return err
	}
	l.closed = true
	return nil
}

func (l *Local) check(op string) error {
	if l.closed {
		return fmt.Errorf("distributed: %s on a closed communicator", op)
	}
	return nil
}

func (l *Local) checkRoot(op string, root int) error {
	if err := l.check(op); err != nil {
		return err
	}
	if root != 0 {
		return fmt.Errorf("distributed: %s: root %d out of range for size 1", op, root)
	}
	return nil
}
