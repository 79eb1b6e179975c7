//go:build linux && (amd64 || arm64)

package cuda_test

// Negative strides (slices with a negative step): the operand's Buffer
// points at its element 0 inside the buffer it was sliced from, and the
// kernels read back from there. Copies are exact.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// reversedViews are views of a (4, 5, 6) tensor with negative steps.
var reversedViews = []struct {
	name string
	view func(*tensor.Tensor) *tensor.Tensor
}{
	{"[:, ::-1, :]", func(b *tensor.Tensor) *tensor.Tensor { return tensor.Slice(b, 1, math.MaxInt, math.MinInt, -1) }},
	{"[::-1, 1:4, ::-2]", func(b *tensor.Tensor) *tensor.Tensor {
		return tensor.Slice(tensor.Slice(tensor.Slice(b, 0, math.MaxInt, math.MinInt, -1), 1, 1, 4, 1), 2, math.MaxInt, math.MinInt, -2)
	}},
	{"[::-1] permuted (2, 0, 1)", func(b *tensor.Tensor) *tensor.Tensor {
		return tensor.Permute(tensor.Slice(b, 2, math.MaxInt, math.MinInt, -1), 2, 0, 1)
	}},
}

// TestNegativeStrides copies reversed views to contiguous memory (Copy),
// adds one to a contiguous operand (Binary) and writes one (CopyStrided
// into a reversed destination), against tensor's CPU results bit for bit.
func TestNegativeStrides(t *testing.T) {
	d, k := kernels(t)
	for _, ty := range dtypes {
		base := sample(ty, 4*5*6, -10, 10, 4, 5, 6)
		bb := upload(t, d, base)
		defer d.Release(bb)
		for _, c := range reversedViews {
			v := c.view(base)
			n := v.Size()
			at := bb.Slice(v.Offset() * ty.Size())
			what := fmt.Sprintf("%v %s (strides %v, offset %d)", ty, c.name, v.Strides(), v.Offset())

			out, _ := d.Alloc(n * ty.Size())
			if err := k.Copy(dt(ty), v.Shape(), out, at, v.Strides()); err != nil {
				t.Fatalf("copy %s: %v", what, err)
			}
			compareBits(t, "copy "+what, download(t, d, out, ty, v.Shape()...), v.Contiguous())

			other := sample(ty, n, 1, 2, v.Shape()...)
			ob := upload(t, d, other)
			os, _ := cuda.BroadcastStrides(other.Shape(), v.Shape())
			if err := k.Binary("sub", dt(ty), v.Shape(), out, at, v.Strides(), ob, os); err != nil {
				t.Fatalf("sub %s: %v", what, err)
			}
			compareBits(t, "sub "+what, download(t, d, out, ty, v.Shape()...), tensor.Sub(v, other))

			dst := upload(t, d, base)
			if err := k.CopyStrided(dt(ty), v.Shape(), dst.Slice(v.Offset()*ty.Size()), v.Strides(), ob, os); err != nil {
				t.Fatalf("copy_strided %s: %v", what, err)
			}
			ref := base.Clone()
			tensor.CopyInto(c.view(ref), other)
			compareBits(t, "copy_strided into "+what, download(t, d, dst, ty, 4, 5, 6), ref)
			d.Release(out)
			d.Release(ob)
			d.Release(dst)
		}
	}
	// A reversed view must not reach before the buffer it was sliced from.
	buf, _ := d.Alloc(64)
	defer d.Release(buf)
	out, _ := d.Alloc(64)
	defer d.Release(out)
	if err := k.Copy(cuda.F32, []int{4}, out, buf.Slice(8), []int{-1}); err == nil || !strings.Contains(err.Error(), "reads a back to element -3 (its buffer starts at -2)") {
		t.Errorf("Copy reaching before its buffer = %v, want an error naming the element", err)
	}
}
