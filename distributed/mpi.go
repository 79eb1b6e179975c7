//go:build mpi

package distributed

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

static MPI_Comm world(void) { return MPI_COMM_WORLD; }

// Collectives return MPI error codes (MPI_ERRORS_RETURN is set at init)
// instead of aborting, so Go can report them.
static int allreduce_f32(float *buf, int n) { return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }
static int allreduce_f64(double *buf, int n) { return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }
static int bcast_f32(float *buf, int n, int root) { return MPI_Bcast(buf, n, MPI_FLOAT, root, MPI_COMM_WORLD); }
static int bcast_f64(double *buf, int n, int root) { return MPI_Bcast(buf, n, MPI_DOUBLE, root, MPI_COMM_WORLD); }
static int barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }

static int init(int *provided) {
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static int rank_size(int *rank, int *size) {
	int rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_size(MPI_COMM_WORLD, size);
}

static void error_string(int code, char *s, int *n) { MPI_Error_string(code, s, n); }
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"sync"
	"unsafe"
)

// mpiComm is MPI_COMM_WORLD. Go may run a goroutine's C calls on any OS
// thread, so every call holds mu: MPI_THREAD_SERIALIZED is what it needs.
type mpiComm struct {
	mu         sync.Mutex
	rank, size int
	closed     bool
}

var (
	mpiOnce  sync.Once
	mpiWorld *mpiComm
	mpiErr   error
)

// Init initialises MPI (once per process) and returns MPI_COMM_WORLD. Run
// without mpirun, Open MPI starts a single rank (singleton mode); Init then
// says so on standard error.
func Init() (Comm, error) {
	mpiOnce.Do(func() {
		var provided C.int
		if rc := C.init(&provided); rc != C.MPI_SUCCESS {
			mpiErr = mpiError("MPI_Init_thread", rc)
			return
		}
		if provided < C.MPI_THREAD_SERIALIZED {
			mpiErr = fmt.Errorf("distributed: MPI provides thread level %d, need MPI_THREAD_SERIALIZED", int(provided))
			return
		}
		var r, s C.int
		if rc := C.rank_size(&r, &s); rc != C.MPI_SUCCESS {
			mpiErr = mpiError("MPI_Comm_rank/size", rc)
			return
		}
		mpiWorld = &mpiComm{rank: int(r), size: int(s)}
		if os.Getenv("OMPI_COMM_WORLD_SIZE") == "" {
			fmt.Fprintln(os.Stderr, "distributed: not started by mpirun; running as a single rank")
		}
	})
	if mpiErr != nil {
		return nil, mpiErr
	}
	return mpiWorld, nil
}

func (c *mpiComm) Rank() int { return c.rank }
func (c *mpiComm) Size() int { return c.size }

func (c *mpiComm) AllReduceFloat32(buf []float32) error {
	return c.call("MPI_Allreduce", len(buf), func(n C.int) C.int {
		return C.allreduce_f32((*C.float)(unsafe.Pointer(unsafe.SliceData(buf))), n)
	})
}

func (c *mpiComm) AllReduceFloat64(buf []float64) error {
	return c.call("MPI_Allreduce", len(buf), func(n C.int) C.int {
		return C.allreduce_f64((*C.double)(unsafe.Pointer(unsafe.SliceData(buf))), n)
	})
}

func (c *mpiComm) BroadcastFloat32(buf []float32, root int) error {
	if err := c.checkRoot(root); err != nil {
		return err
	}
	return c.call("MPI_Bcast", len(buf), func(n C.int) C.int {
		return C.bcast_f32((*C.float)(unsafe.Pointer(unsafe.SliceData(buf))), n, C.int(root))
	})
}

func (c *mpiComm) BroadcastFloat64(buf []float64, root int) error {
	if err := c.checkRoot(root); err != nil {
		return err
	}
	return c.call("MPI_Bcast", len(buf), func(n C.int) C.int {
		return C.bcast_f64((*C.double)(unsafe.Pointer(unsafe.SliceData(buf))), n, C.int(root))
	})
}

func (c *mpiComm) Barrier() error {
	return c.call("MPI_Barrier", 1, func(C.int) C.int { return C.barrier() })
}

// Close finalises MPI. MPI cannot be initialised again in the process.
func (c *mpiComm) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("distributed: Close on a closed communicator")
	}
	c.closed = true
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Finalize", rc)
	}
	return nil
}

// call runs one collective on n elements under the lock. An empty buffer
// still takes part (every rank must call the collective).
func (c *mpiComm) call(op string, n int, f func(C.int) C.int) error {
	if n > math.MaxInt32 {
		return fmt.Errorf("distributed: %s of %d elements exceeds MPI's int count", op, n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("distributed: %s on a closed communicator", op)
	}
	if rc := f(C.int(n)); rc != C.MPI_SUCCESS {
		return mpiError(op, rc)
	}
	return nil
}

func (c *mpiComm) checkRoot(root int) error {
	if root < 0 || root >= c.size {
		return fmt.Errorf("distributed: broadcast root %d out of range for size %d", root, c.size)
	}
	return nil
}

func mpiError(op string, rc C.int) error {
	buf := make([]byte, C.MPI_MAX_ERROR_STRING)
	var n C.int
	C.error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	return fmt.Errorf("distributed: %s failed: %s (MPI error %d)", op, string(buf[:n]), int(rc))
}
