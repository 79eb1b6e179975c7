//go:build !(linux && (amd64 || arm64))

package cuda

import (
	"errors"

	"github.com/gradus-ml/gradus/tensor/internal/cuda"
	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

// newBackend is never reached here: cuda.OpenDevice fails first on
// platforms without bindings.
func newBackend(*cuda.Driver) (devices.Backend, error) {
	return nil, errors.New("cuda: no bindings on this platform")
}
