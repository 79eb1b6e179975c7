//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// TestCopyKernel copies views of package tensor (a permutation, a
// broadcast, a 3-D slice starting inside its storage) to contiguous
// memory on the device, reading the views' own strides and offsets, and
// compares with the CPU's Contiguous: a copy is exact.
func TestCopyKernel(t *testing.T) {
	d, k := kernels(t)
	for _, ty := range dtypes {
		base := sample(ty, 4*5*6, -10, 10, 4, 5, 6)
		small := sample(ty, 5, -3, 3, 5, 1)
		sliced := tensor.Slice(tensor.Slice(tensor.Slice(base, 0, 1, 3, 1), 1, 0, 5, 2), 2, 2, 5, 1)
		if sliced.Offset() == 0 {
			t.Fatal("the sliced view starts at its storage's start: the case tests no offset")
		}
		for _, c := range []struct {
			name       string
			storage, v *tensor.Tensor
		}{
			{"permuted (2, 0, 1)", base, tensor.Permute(base, 2, 0, 1)},
			{"transposed, sliced", base, tensor.Transpose(tensor.Slice(base, 1, 1, 4, 1))},
			{"broadcast (5, 1) to (4, 5, 6)", small, tensor.Expand(small, 4, 5, 6)},
			{"sliced [1:3, ::2, 2:5]", base, sliced},
		} {
			sb := upload(t, d, c.storage)
			dst, _ := d.Alloc(c.v.Size() * ty.Size())
			x := sb.Slice(c.v.Offset() * ty.Size())
			if err := k.Copy(dt(ty), c.v.Shape(), dst, x, c.v.Strides()); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			what := fmt.Sprintf("copy %v %s, strides %v, offset %d", ty, c.name, c.v.Strides(), c.v.Offset())
			compare(t, what, download(t, d, dst, ty, c.v.Shape()...), c.v.Contiguous(), exact)
			d.Release(sb)
			d.Release(dst)
		}
	}
}

func TestCopyErrors(t *testing.T) {
	d, k := kernels(t)
	b, _ := d.Alloc(1024)
	defer d.Release(b)
	if err := k.Copy(cuda.F32, []int{5}, b, b.Slice(b.Bytes()-16), []int{1}); err == nil || !strings.Contains(err.Error(), "up to element 4 of 4") {
		t.Errorf("Copy reading past a view's end = %v, want an error naming element 4 of 4", err)
	}
	if err := k.Copy(cuda.F64, []int{2}, b, b.Slice(4), []int{1}); err == nil || !strings.Contains(err.Error(), "not a multiple of the 8-byte element") {
		t.Errorf("Copy from a misaligned view = %v, want an alignment error", err)
	}
	if err := k.Copy(cuda.F32, []int{2, 2}, b, b, []int{1}); err == nil {
		t.Error("Copy with one stride for two dimensions succeeded")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "view") {
			t.Errorf("Release of a view: recovered %v, want a panic naming the view", r)
		}
	}()
	d.Release(b.Slice(8))
}

// TestFillScalarKernels: Fill and the scalar kernels against tensor's
// Full, AddScalar and MulScalar, to the bit; s = 0.1 is not representable,
// so its rounding to float32 is checked too.
func TestFillScalarKernels(t *testing.T) {
	d, k := kernels(t)
	const n = 70001
	for _, ty := range dtypes {
		x := sample(ty, n, -10, 10, n)
		xb := upload(t, d, x)
		out, _ := d.Alloc(n * ty.Size())
		if err := k.Fill(dt(ty), n, out, 1.0/3); err != nil {
			t.Fatal(err)
		}
		compare(t, fmt.Sprintf("fill %v", ty), download(t, d, out, ty, n), tensor.Full(ty, 1.0/3, n), exact)
		for _, c := range []struct {
			op  string
			cpu func(*tensor.Tensor, float64) *tensor.Tensor
		}{{"add_scalar", tensor.AddScalar}, {"mul_scalar", tensor.MulScalar}} {
			if err := k.Scalar(c.op, dt(ty), n, out, xb, 0.1); err != nil {
				t.Fatal(err)
			}
			compare(t, fmt.Sprintf("%s %v", c.op, ty), download(t, d, out, ty, n), c.cpu(x, 0.1), exact)
		}
		// In place: dst = x.
		if err := k.Scalar("mul_scalar", dt(ty), n, xb, xb, -2.5); err != nil {
			t.Fatal(err)
		}
		compare(t, fmt.Sprintf("mul_scalar %v in place", ty), download(t, d, xb, ty, n), tensor.MulScalar(x, -2.5), exact)
		d.Release(xb)
		d.Release(out)
	}
	b, _ := d.Alloc(64)
	defer d.Release(b)
	if err := k.Scalar("pow_scalar", cuda.F32, 4, b, b, 2); err == nil || !strings.Contains(err.Error(), "pow_scalar") {
		t.Errorf("Scalar(pow_scalar) = %v, want an error naming it", err)
	}
	if err := k.Fill(cuda.F64, 9, b.Slice(b.Bytes()-64), 0); err == nil || !strings.Contains(err.Error(), "needs 72 bytes, its buffer has 64") {
		t.Errorf("Fill of 9 float64 into 64 bytes = %v", err)
	}
}

// axisCase views a (3, 7, 5) tensor as (outer, axis, inner) around one
// of its axes.
type axisCase struct {
	axis               int
	outer, size, inner int
}

var axisCases = []axisCase{{0, 1, 3, 35}, {1, 3, 7, 5}, {2, 21, 5, 1}}

// TestGatherKernel compares Gather with tensor.IndexSelect on the first,
// a middle and the last axis, with repeated indices: exact.
func TestGatherKernel(t *testing.T) {
	d, k := kernels(t)
	for _, ty := range dtypes {
		x := sample(ty, 3*7*5, -10, 10, 3, 7, 5)
		xb := upload(t, d, x)
		for _, c := range axisCases {
			idx := []int{c.size - 1, 0, 2, 2, 1, c.size - 1}
			want := tensor.IndexSelect(x, c.axis, idx)
			dst, _ := d.Alloc(want.Size() * ty.Size())
			if err := k.Gather(dt(ty), c.outer, c.size, c.inner, dst, xb, idx); err != nil {
				t.Fatal(err)
			}
			compare(t, fmt.Sprintf("gather %v axis %d idx %v", ty, c.axis, idx), download(t, d, dst, ty, want.Shape()...), want, exact)
			d.Release(dst)
		}
		d.Release(xb)
	}
}

// scatterRef is ScatterAdd in a plain Go loop in float64, with, per
// element of dst, the sum of the magnitudes of its terms and their count.
func scatterRef(dst []float64, src []float64, idx []int, outer, axis, inner int) (want, mag, terms []float64) {
	want = append([]float64(nil), dst...)
	mag, terms = make([]float64, len(dst)), make([]float64, len(dst))
	for i, v := range dst {
		mag[i], terms[i] = math.Abs(v), 1
	}
	for o := range outer {
		for i, ix := range idx {
			for j := range inner {
				p := (o*axis+ix)*inner + j
				s := src[(o*len(idx)+i)*inner+j]
				want[p] += s
				mag[p] += math.Abs(s)
				terms[p]++
			}
		}
	}
	return want, mag, terms
}

// TestScatterAddKernel: with distinct indices each element of dst gets
// one addition, exact to the bit; with repeated ones (here many, so
// threads of different blocks collide) the order of the atomic additions
// is unspecified, and the result must be within the error bound of a sum
// in any order, (terms − 1)·ε times the sum of the magnitudes (Higham,
// 2002, Accuracy and Stability of Numerical Algorithms, §4.2), twice over.
func TestScatterAddKernel(t *testing.T) {
	d, k := kernels(t)
	for _, ty := range dtypes {
		for _, c := range axisCases {
			for _, repeat := range []bool{false, true} {
				idx := []int{c.size - 1, 0, 1} // distinct
				if repeat {
					idx = make([]int, 400)
					for i := range idx {
						idx[i] = (i * 5) % c.size
					}
				}
				full := c.outer * c.size * c.inner
				picked := c.outer * len(idx) * c.inner
				dst := sample(ty, full, -1, 1, full)
				src := sample(ty, picked, -3, 2, picked)
				want, mag, terms := scatterRef(dst.Values(), src.Values(), idx, c.outer, c.size, c.inner)
				db, sb := upload(t, d, dst), upload(t, d, src)
				if err := k.ScatterAdd(dt(ty), c.outer, c.size, c.inner, db, idx, sb); err != nil {
					t.Fatal(err)
				}
				got := download(t, d, db, ty, full)
				what := fmt.Sprintf("scatter_add %v axis %d, %d indices", ty, c.axis, len(idx))
				wantT := tensor.FromValues(ty, want, full) // one rounding of the exact sum
				if !repeat {
					compare(t, what+" (distinct)", got, wantT, exact)
				} else {
					bound := make([]float64, full)
					for i := range bound {
						bound[i] = 2*terms[i]*eps(ty)*mag[i] + 1e-300
					}
					compareBound(t, what+" (repeated)", got, wantT, bound)
				}
				d.Release(db)
				d.Release(sb)
			}
		}
	}
}

func TestIndexErrors(t *testing.T) {
	d, k := kernels(t)
	b, _ := d.Alloc(4096)
	defer d.Release(b)
	if err := k.Gather(cuda.F32, 2, 7, 3, b, b, []int{0, 6, 7, 1}); err == nil || !strings.Contains(err.Error(), "index 7 (idx[2]) is out of range [0, 7)") {
		t.Errorf("Gather with index 7 of 7 = %v", err)
	}
	if err := k.ScatterAdd(cuda.F64, 2, 7, 3, b, []int{2, -1}, b); err == nil || !strings.Contains(err.Error(), "index -1 (idx[1])") {
		t.Errorf("ScatterAdd with index -1 = %v", err)
	}
	if err := k.Gather(cuda.F64, 100, 7, 3, b, b, []int{1}); err == nil || !strings.Contains(err.Error(), "needs 16800 bytes") {
		t.Errorf("Gather from a buffer too small = %v", err)
	}
	if err := k.Gather(cuda.F32, 2, 7, -3, b, b, []int{1}); err == nil {
		t.Error("Gather with a negative size succeeded")
	}
}

// TestNonFiniteKernel: false on finite data (with the largest finite
// values and subnormals), true with one NaN, +Inf or −Inf first, last or
// in the middle, for n not a multiple of the block; a NaN just past n is
// not read.
func TestNonFiniteKernel(t *testing.T) {
	d, k := kernels(t)
	for _, ty := range dtypes {
		for _, n := range []int{1, 1000, 70001} {
			big, tiny := math.MaxFloat64, 5e-324
			if ty == tensor.Float32 {
				big, tiny = math.MaxFloat32, 1e-45
			}
			v := sample(ty, n+1, -10, 10, n+1).Values()
			v[n] = math.NaN() // past the end
			if n > 3 {
				v[1], v[2], v[3] = big, -big, tiny
			}
			check := func(what string, want bool) {
				t.Helper()
				xb := upload(t, d, tensor.FromValues(ty, v, n+1))
				got, err := k.NonFinite(dt(ty), n, xb)
				d.Release(xb)
				if err != nil || got != want {
					t.Errorf("NonFinite %v n=%d %s = %v, %v; want %v", ty, n, what, got, err, want)
				}
			}
			check("finite", false)
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				for _, at := range []int{0, n / 2, n - 1} {
					keep := v[at]
					v[at] = bad
					check(fmt.Sprintf("%v at %d", bad, at), true)
					v[at] = keep
				}
			}
		}
	}
}
