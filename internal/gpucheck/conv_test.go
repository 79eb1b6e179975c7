//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

// TestConvLibrary runs float32 convolutions and both gradients through
// package tensor on the device, on a strided, padded, grouped geometry
// with a non-contiguous input, against the CPU within 4,000 float32
// roundings relative to max(1, |value|) (each output sums up to 165
// products of standard normals), and logs the device's convolution
// library. GRADUS_CUDNN_REQUIRE=1 requires it to be cuDNN.
func TestConvLibrary(t *testing.T) {
	dev := device(t)
	for _, p := range []tensor.ConvParams{
		{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}, Groups: 2},
		// Dilated and grouped: the fake device's cuDNN refuses its
		// forward direction, which the kernels then compute.
		{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}, Dilation: [2]int{1, 2}, Groups: 2},
	} {
		x := tensor.Permute(randn(tensor.Float32, 1, 3, 9, 11, 4), 0, 3, 1, 2) // (3, 4, 9, 11), not contiguous
		w := randn(tensor.Float32, 2, 6, 2, 3, 3)
		y := tensor.Conv2D(x, w, p)
		dy := randn(tensor.Float32, 3, y.Shape()...)
		dx := tensor.Conv2DInputGrad(dy, w, x.Shape(), p)
		dw := tensor.Conv2DWeightGrad(x, dy, w.Shape(), p)
		xd, wd, dyd := x.To(dev), w.To(dev), dy.To(dev)
		tol := 4000 * eps(tensor.Float32)
		near(t, "forward", tensor.Conv2D(xd, wd, p), y, tol)
		near(t, "input gradient", tensor.Conv2DInputGrad(dyd, wd, x.Shape(), p), dx, tol)
		near(t, "weight gradient", tensor.Conv2DWeightGrad(xd, dyd, w.Shape(), p), dw, tol)
	}
	// Under the TF32 opt-in the products' inputs keep 10 mantissa bits:
	// within 2⁻¹¹ of each input, so about K·2⁻¹⁰ of the terms' sum.
	if err := tensor.SetMatMulPrecision(dev, tensor.MatMulTF32); err != nil {
		t.Fatal(err)
	}
	p := tensor.ConvParams{Padding: [2]int{1, 1}}
	x, w := randn(tensor.Float32, 4, 2, 3, 8, 8), randn(tensor.Float32, 5, 4, 3, 3, 3)
	got := tensor.Conv2D(x.To(dev), w.To(dev), p)
	if err := tensor.SetMatMulPrecision(dev, tensor.MatMulFloat32); err != nil {
		t.Fatal(err)
	}
	near(t, "forward, TF32", got, tensor.Conv2D(x, w, p), 27*0x1p-10)
	lib := dev.ConvLibrary()
	t.Logf("convolutions: %s", lib)
	if os.Getenv("GRADUS_CUDNN_REQUIRE") == "1" && !strings.HasPrefix(lib, "cuDNN 9") && !strings.HasPrefix(lib, "cuDNN 8") {
		t.Errorf("GRADUS_CUDNN_REQUIRE=1, but the convolutions use %q", lib)
	}
	if cpu := tensor.CPU.ConvLibrary(); cpu != "gradus" {
		t.Errorf("CPU.ConvLibrary() = %q, want gradus", cpu)
	}
}
