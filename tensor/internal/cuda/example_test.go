//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"errors"
	"fmt"

	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// ExampleOpen binds the driver, copies a vector to the device, applies
// the exp kernel and copies the result back. Its output depends on the
// machine (on one without a GPU it prints why), so it is compiled but not
// run.
func ExampleOpen() {
	d, err := cuda.Open()
	if errors.Is(err, cuda.ErrNoDriver) {
		fmt.Println("no GPU:", err)
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	k, err := d.Kernels() // compiled by NVRTC on first use, then cached on disk
	if err != nil {
		fmt.Println(err)
		return
	}
	x := []float32{0, 1, 2}
	buf, err := d.Alloc(4 * len(x))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Release(buf)
	if err := cuda.Upload(d, buf, x); err != nil {
		fmt.Println(err)
		return
	}
	if err := k.Unary("exp", cuda.F32, len(x), buf, buf); err != nil {
		fmt.Println(err)
		return
	}
	if err := cuda.Download(d, x, buf); err != nil { // waits for the kernel
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name(), x)
}
