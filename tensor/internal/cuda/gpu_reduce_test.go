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

// reduceRows returns the test matrices of the last-axis reductions: rows
// of a sampled range for several widths, and rows of special values
// (NaN, ±Inf, all −Inf, ties of −0 and +0 in both orders, equal maxima),
// with the ±0 ties also far apart in a wide row, so that different
// threads hold them.
func reduceRows(ty tensor.DType) []*tensor.Tensor {
	var out []*tensor.Tensor
	for _, cols := range []int{1, 3, 256, 1000} {
		out = append(out, sample(ty, 37*cols, -3, 3, 37, cols))
	}
	nan, inf, nz := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	out = append(out, tensor.FromValues(ty, []float64{
		nan, 1, 2, 1, nan, inf, -inf, -inf, -inf, nz, 0, -1, 0, nz, -1, 0, nz, 1, nz, 0, 1,
		inf, 1, 2, -inf, 0, 1, 3, 3, 3, 1e30, 1e30, -1e30, 0, inf, 1, 700, 700, 700,
	}, 13, 3))
	wide := make([]float64, 2*600)
	for j := range 600 {
		wide[j], wide[600+j] = -1, 1
	}
	wide[5], wide[260] = nz, 0 // max of row 0: the first, −0
	wide[600+5], wide[600+260] = 0, nz
	out = append(out, tensor.FromValues(ty, wide, 2, 600))
	return out
}

// TestReduceKernels compares the last-axis reductions with tensor's Max,
// Min, Prod, LogSumExp and Variance over axis −1. Max and Min must agree
// bit for bit. The others sum or multiply in another order: a product of
// cols factors rounds cols times on either side (2·cols·ε relative); a
// sum's rounding is about √cols·ε of its terms' magnitude (4√cols + 16
// taken, as in TestRowKernels), which for log Σ exp is absolute plus
// exp's and log's ulps, and for the variance is of Σd² (the correction
// (Σd)²/n being far smaller).
func TestReduceKernels(t *testing.T) {
	d, k := kernels(t)
	for _, ty := range dtypes {
		e := eps(ty)
		for _, x := range reduceRows(ty) {
			rows, cols := x.Shape()[0], x.Shape()[1]
			xs := x.Values()
			xb := upload(t, d, x)
			res, _ := d.Alloc(rows * ty.Size())
			name := func(op string) string { return fmt.Sprintf("%s %v %d×%d", op, ty, rows, cols) }
			run := func(op string, f func() error) *tensor.Tensor {
				if err := f(); err != nil {
					t.Fatalf("%s: %v", name(op), err)
				}
				return download(t, d, res, ty, rows)
			}
			got := run("max_last", func() error { return k.MaxLast(dt(ty), rows, cols, res, xb) })
			compareBits(t, name("max_last"), got, tensor.Max(x, []int{-1}, false))
			got = run("min_last", func() error { return k.MinLast(dt(ty), rows, cols, res, xb) })
			compareBits(t, name("min_last"), got, tensor.Min(x, []int{-1}, false))

			sum := 16 + 4*math.Sqrt(float64(cols))
			rowBound := func(want *tensor.Tensor, f func(r int, w float64) float64) []float64 {
				b := make([]float64, rows)
				for r := range b {
					if w := want.At(r); !math.IsInf(w, 0) && !math.IsNaN(w) { // else exact
						b[r] = f(r, w) + 1e-300
					}
				}
				return b
			}
			absMax := func(r int) float64 {
				m := 0.0
				for _, v := range xs[r*cols : (r+1)*cols] {
					if !math.IsInf(v, 0) {
						m = max(m, math.Abs(v))
					}
				}
				return m
			}
			want := tensor.Prod(x, []int{-1}, false)
			got = run("prod_last", func() error { return k.ProdLast(dt(ty), rows, cols, res, xb) })
			compareBound(t, name("prod_last"), got, want, rowBound(want, func(_ int, w float64) float64 {
				return 2 * float64(cols) * e * math.Abs(w)
			}))
			want = tensor.LogSumExp(x, []int{-1}, false)
			got = run("logsumexp_last", func() error { return k.LogSumExpLast(dt(ty), rows, cols, res, xb) })
			compareBound(t, name("logsumexp_last"), got, want, rowBound(want, func(r int, w float64) float64 {
				return sum * e * (math.Abs(w) + absMax(r) + 1)
			}))
			for _, ddof := range []int{0, 1, 3} {
				want = tensor.Variance(x, []int{-1}, false, ddof)
				what := fmt.Sprintf("variance_last ddof %d", ddof)
				got = run(what, func() error { return k.VarianceLast(dt(ty), rows, cols, ddof, res, xb) })
				compareBound(t, name(what), got, want, rowBound(want, func(r int, w float64) float64 {
					m := absMax(r)
					return 4 * sum * e * (math.Abs(w) + m*m*float64(cols)/float64(max(cols-ddof, 1)))
				}))
			}
			d.Release(xb)
			d.Release(res)
		}
	}
	buf, _ := d.Alloc(64)
	defer d.Release(buf)
	b := buf.Slice(buf.Bytes() - 64) // exactly 64 bytes: Alloc may round up
	if err := k.VarianceLast(cuda.F32, 2, 0, 0, b, b); err == nil || !strings.Contains(err.Error(), "cols must be positive") {
		t.Errorf("VarianceLast with 0 columns = %v, want an error", err)
	}
	if err := k.MaxLast(cuda.F64, 3, 3, b, b); err == nil || !strings.Contains(err.Error(), "needs 72 bytes") {
		t.Errorf("MaxLast past x's end = %v, want an error naming the size", err)
	}
}
