//go:build !(linux && (amd64 || arm64))

package cuda

import "runtime"

// Driver is the CUDA driver; this build has no CUDA support, so Open
// always fails.
type Driver struct{}

// Open reports that this build has no CUDA support.
func Open() (*Driver, error) { return OpenDevice(DefaultSearch(), 0) }

// OpenDevice reports that this build has no CUDA support: CUDA is bound
// on linux/amd64 and linux/arm64 only.
func OpenDevice(Search, int) (*Driver, error) {
	return nil, unavailable("this build has no CUDA support (" + runtime.GOOS + "/" + runtime.GOARCH +
		"; CUDA is bound on linux/amd64 and linux/arm64)")
}

// Name returns "".
func (*Driver) Name() string { return "" }

// Ordinal returns 0.
func (*Driver) Ordinal() int { return 0 }

// DeviceCount returns 0.
func (*Driver) DeviceCount() int { return 0 }
