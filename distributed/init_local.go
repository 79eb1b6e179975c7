//go:build !mpi

package distributed

// Init returns the communicator of this build: without the mpi tag, the
// single-process Local one.
func Init() (Comm, error) { return NewLocal(), nil }
