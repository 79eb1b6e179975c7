//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// dnn returns the device's cuDNN handle, skipping the test where cuDNN
// is not installed (it is optional) unless GRADUS_CUDNN_REQUIRE is set.
func dnn(t *testing.T) (*cuda.Driver, *cuda.DNN) {
	t.Helper()
	d := device(t)
	n, err := d.DNN()
	if err != nil {
		if os.Getenv("GRADUS_CUDNN_REQUIRE") == "" && errors.Is(err, cuda.ErrNoDriver) {
			t.Skipf("cuDNN is not installed: %v", err)
		}
		t.Fatalf("cuDNN: %v", err)
	}
	v, path := n.Version()
	t.Logf("cuDNN %d from %s", v, path)
	return d, n
}

// TestDNNConv checks cuDNN's convolution and both gradients against the
// CPU's (tensor.Conv2D, Conv2DInputGrad, Conv2DWeightGrad) on every
// geometry of convCases: each output within float32 rounding of the sum
// of its terms' magnitudes, which the same function of |x| and |w| gives.
func TestDNNConv(t *testing.T) {
	d, n := dnn(t)
	for _, c := range convCases {
		t.Run(c.name, func(t *testing.T) {
			g := convGeom(c.x, c.w, c.p)
			groups := max(c.p.Groups, 1)
			o := c.w[0]
			x := sample(tensor.Float32, size(c.x), -1, 1, c.x...)
			w := sample(tensor.Float32, size(c.w), -0.7, 0.9, c.w...)
			y := tensor.Conv2D(x, w, c.p)
			dy := sample(tensor.Float32, y.Size(), -1.3, 0.6, y.Shape()...)
			abs := func(t *tensor.Tensor) *tensor.Tensor { return tensor.Abs(t) }
			cases := []struct {
				dir        cuda.ConvDirection
				a, b, want *tensor.Tensor
				mag        *tensor.Tensor
			}{
				{cuda.ConvForward, x, w, y, tensor.Conv2D(abs(x), abs(w), c.p)},
				{cuda.ConvBackwardData, w, dy, tensor.Conv2DInputGrad(dy, w, c.x, c.p), tensor.Conv2DInputGrad(abs(dy), abs(w), c.x, c.p)},
				{cuda.ConvBackwardFilter, x, dy, tensor.Conv2DWeightGrad(x, dy, c.w, c.p), tensor.Conv2DWeightGrad(abs(x), abs(dy), c.w, c.p)},
			}
			for _, k := range cases {
				out := upload(t, d, tensor.Full(tensor.Float32, 7, k.want.Shape()...)) // overwritten: beta 0
				if err := n.Conv(k.dir, g, o, groups, upload(t, d, k.a), upload(t, d, k.b), out); err != nil {
					t.Fatalf("direction %d: %v", k.dir, err)
				}
				got := download(t, d, out, tensor.Float32, k.want.Shape()...)
				mag := k.mag.Values()
				bound := make([]float64, len(mag))
				for i, m := range mag {
					bound[i] = 1e-5*m + 1e-7
				}
				compareBound(t, []string{"forward", "data gradient", "filter gradient"}[k.dir], got, k.want, bound)
			}
		})
	}
}

// TestDNNConvNotServed: a geometry that a direction's algorithm does not
// support (the fake device's forward refuses dilated grouped
// convolutions; a real cuDNN may serve it) gives ErrNotServed and leaves
// the output alone, and the directions that serve it are right.
func TestDNNConvNotServed(t *testing.T) {
	d, n := dnn(t)
	p := tensor.ConvParams{Padding: [2]int{1, 2}, Dilation: [2]int{2, 2}, Groups: 2}
	xs, ws := []int{2, 4, 9, 10}, []int{6, 2, 3, 3}
	g := convGeom(xs, ws, p)
	x := sample(tensor.Float32, size(xs), -1, 1, xs...)
	w := sample(tensor.Float32, size(ws), -0.7, 0.9, ws...)
	y := tensor.Conv2D(x, w, p)
	dy := sample(tensor.Float32, y.Size(), -1.3, 0.6, y.Shape()...)
	for dir, c := range []struct{ a, b, want *tensor.Tensor }{
		{x, w, y}, {w, dy, tensor.Conv2DInputGrad(dy, w, xs, p)}, {x, dy, tensor.Conv2DWeightGrad(x, dy, ws, p)},
	} {
		out := upload(t, d, tensor.Full(tensor.Float32, 7, c.want.Shape()...))
		err := n.Conv(cuda.ConvDirection(dir), g, ws[0], 2, upload(t, d, c.a), upload(t, d, c.b), out)
		got := download(t, d, out, tensor.Float32, c.want.Shape()...)
		switch {
		case errors.Is(err, cuda.ErrNotServed):
			compare(t, fmt.Sprintf("direction %d, not served: the output untouched", dir), got, tensor.Full(tensor.Float32, 7, c.want.Shape()...), exact)
		case err != nil:
			t.Fatalf("direction %d: %v", dir, err)
		default:
			compare(t, fmt.Sprintf("direction %d", dir), got, c.want, tol{1e-5, 1e-5})
		}
	}
}

// TestDNNConvChecks: a geometry whose channels do not split into the
// groups, or a buffer too small, is an error naming it, before cuDNN is
// called.
func TestDNNConvChecks(t *testing.T) {
	d, n := dnn(t)
	c := convCases[0]
	g := convGeom(c.x, c.w, c.p)
	buf := upload(t, d, tensor.New(tensor.Float32, 8))
	big := upload(t, d, tensor.New(tensor.Float32, 4096))
	if err := n.Conv(cuda.ConvForward, g, 4, 3, big, big, big); err == nil || !strings.Contains(err.Error(), "groups") {
		t.Errorf("3 groups of 3 channels: err = %v, want one naming the groups", err)
	}
	if err := n.Conv(cuda.ConvForward, g, 4, 1, buf, big, big); err == nil || !strings.Contains(err.Error(), "x needs 252 float32 elements") {
		t.Errorf("an 8-element input: err = %v, want one naming its size", err)
	}
	var cerr *cuda.Error
	if err := n.Conv(cuda.ConvDirection(7), g, 4, 1, big, big, big); err == nil || errors.As(err, &cerr) {
		t.Errorf("direction 7: err = %v, want the binding's own error", err)
	}
}

func size(shape []int) int {
	n := 1
	for _, v := range shape {
		n *= v
	}
	return n
}
