// Package cuda links the CUDA device into a program. Importing it for its
// side effect,
//
//	import _ "github.com/gradus-ml/gradus/tensor/cuda"
//
// lets tensor.CUDA bind the NVIDIA driver, NVRTC, cuBLAS, cuSOLVER and, where
// it is installed, cuDNN at run time
// (with purego: no cgo, so CGO_ENABLED=0 builds and cross-compiles keep
// working). Loading those libraries with dlopen makes the program link
// the C library dynamically; programs that do not import this package
// stay statically linked and never look for a driver.
//
// The libraries are looked up in the folders of the GRADUS_CUDA_PATH
// environment variable (colon-separated), by the dynamic loader, and in
// the usual CUDA and pip folders; docs/gpu.md has the details and the
// state of the work.
package cuda

import (
	"fmt"
	"sync"

	"github.com/gradus-ml/gradus/tensor/internal/cuda"
	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

func init() { devices.CUDA = open }

var opened struct {
	sync.Mutex
	backends map[int]devices.Backend
}

// open binds the driver, opens device ordinal and loads its kernels and
// cuBLAS, once per process.
func open(ordinal int) (devices.Backend, error) {
	opened.Lock()
	defer opened.Unlock()
	if be := opened.backends[ordinal]; be != nil {
		return be, nil
	}
	d, err := cuda.OpenDevice(cuda.DefaultSearch(), ordinal)
	if err != nil {
		return nil, err
	}
	be, err := newBackend(d)
	if err != nil {
		return nil, fmt.Errorf("cuda: %s: %w", d.Name(), err)
	}
	if opened.backends == nil {
		opened.backends = map[int]devices.Backend{}
	}
	opened.backends[ordinal] = be
	return be, nil
}
