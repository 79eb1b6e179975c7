//go:build linux && (amd64 || arm64)

package cuda

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/gradus-ml/gradus/tensor/internal/cuda"
	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

// EnvDNN names the environment variable that turns cuDNN off ("off" or
// "0"): the convolutions then run on Gradus's own im2col and col2im
// kernels around cuBLAS products, as where cuDNN is not installed.
const EnvDNN = "GRADUS_CUDNN"

// dnnState is a backend's cuDNN, loaded on the first float32
// convolution.
type dnnState struct {
	once sync.Once
	n    *cuda.DNN
	why  string // why cuDNN is not used, when it is not
}

func (s *dnnState) load(d *cuda.Driver) *cuda.DNN {
	s.once.Do(func() {
		if v := os.Getenv(EnvDNN); v == "off" || v == "0" {
			s.why = "not used: " + EnvDNN + "=" + v
			return
		}
		n, err := d.DNN()
		if err != nil {
			s.why = fmt.Sprintf("not used: %v", err)
			return
		}
		s.n = n
	})
	return s.n
}

// Conv runs a float32 convolution's product in cuDNN (devices.ConvLibrary).
func (b *backend) Conv(dir int, dt devices.DType, g devices.ConvGeom, o, groups int, x, y, out devices.Mem) (bool, error) {
	if dt != devices.F32 {
		return false, nil // float64 convolutions keep the kernels and cuBLAS's DGEMM
	}
	n := b.dnn.load(b.d)
	if n == nil {
		return false, nil
	}
	err := n.Conv(cuda.ConvDirection(dir), geom(g), o, groups, buf(x), buf(y), buf(out))
	if errors.Is(err, cuda.ErrNotServed) {
		return false, nil // the kernels compute it
	}
	return true, err
}

// ConvServes reports whether cuDNN serves dt (devices.ConvLibrary).
func (b *backend) ConvServes(dt devices.DType) bool {
	return dt == devices.F32 && b.dnn.load(b.d) != nil
}

// ConvLibrary describes the convolutions' library (devices.ConvLibrary).
func (b *backend) ConvLibrary() string {
	n := b.dnn.load(b.d)
	if n == nil {
		return "cuDNN " + b.dnn.why
	}
	v, path := n.Version()
	return fmt.Sprintf("cuDNN %d (%s) for float32", v, path)
}
