//go:build linux && (amd64 || arm64)

package cuda_test

// Tests of kernels/special.cu against package tensor's CPU functions.
// polygamma does only IEEE operations (sums, products, quotients of the
// recurrence and the series), in the CPU's order without FMA contraction,
// so it must agree bit for bit. log_ndtr calls erfc, log and log1p (the
// CUDA Math API's erfcf within 4 ulp, erfc 5, log and log1p 1 or 2; Go's
// and math32's within a few), so it gets tolMath; near Φ = 1 log Φ ≈
// Φ − 1 is far smaller than the rounding of Φ, hence the condition factor
// 1 + 1/|log Φ|. The Bessel functions run their series in float64 on both
// sides and differ by the last log or log1p: tolMath.

import (
	"fmt"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

func logNdtrCond(x float64) float64 {
	if l := math.Abs(tensor.LogNdtr(tensor.FromValues(tensor.Float64, []float64{x}, 1)).At(0)); l > 0 {
		return 1 + 1/l
	}
	return 1
}

func init() {
	for op, c := range map[string]unaryCase{
		"log_ndtr":          {cpu: tensor.LogNdtr, lo: -45, hi: 9, cond: logNdtrCond},
		"log_bessel_i0":     {cpu: tensor.LogBesselI0, lo: -70, hi: 70},
		"bessel_i1_over_i0": {cpu: tensor.BesselI1OverI0, lo: -70, hi: 70},
	} {
		unaryCases[op] = c
	}
}

// TestSpecialSpecials runs the unary kernels of special.cu on the special
// values and on the switches between their methods (±3, ±5, −12, −37 of
// log Φ; ±30 of the Bessel functions).
func TestSpecialSpecials(t *testing.T) {
	d, k := kernels(t)
	edges := []float64{3, 3.0001, 5, 5.0001, -12, -12.001, -37, -37.001, 30, 30.0001, -30, -30.0001, 1e-5, -1e-5, 700, -800}
	for _, op := range []string{"log_ndtr", "log_bessel_i0", "bessel_i1_over_i0"} {
		c := unaryCases[op]
		vals := append(append([]float64{}, specials...), edges...)
		for _, ty := range dtypes {
			x := tensor.FromValues(ty, vals, len(vals))
			xb := upload(t, d, x)
			out, _ := d.Alloc(len(vals) * ty.Size())
			if err := k.Unary(op, dt(ty), len(vals), out, xb); err != nil {
				t.Fatal(err)
			}
			what, got, want := fmt.Sprintf("%s %v specials", op, ty), download(t, d, out, ty, len(vals)), c.cpu(x)
			compareBound(t, what, got, want, unaryBound(c, ty, x.Values(), want.Values()))
			d.Release(xb)
			d.Release(out)
		}
	}
}

// TestPolygammaKernel compares Param("polygamma", n) with tensor.Polygamma
// bit for bit, for orders 1 to 6 on the special values, negative
// non-integers and a sweep of (−8, 40).
func TestPolygammaKernel(t *testing.T) {
	d, k := kernels(t)
	vals := append(append([]float64{}, specials...), -0.3, -1.5, -2.1, -3.7, -7.99, -1e7)
	vals = append(vals, sample(tensor.Float64, 1001, -8.05, 40, 1001).Values()...)
	for n := 1; n <= 6; n++ {
		for _, ty := range dtypes {
			x := tensor.FromValues(ty, vals, len(vals))
			xb := upload(t, d, x)
			out, _ := d.Alloc(len(vals) * ty.Size())
			if err := k.Param("polygamma", dt(ty), len(vals), out, xb, float64(n), 0); err != nil {
				t.Fatal(err)
			}
			compareBits(t, fmt.Sprintf("polygamma(%d) %v", n, ty), download(t, d, out, ty, len(vals)), tensor.Polygamma(n, x))
			d.Release(xb)
			d.Release(out)
		}
	}
	buf, _ := d.Alloc(64)
	defer d.Release(buf)
	for _, p := range []float64{0, -1, 1.5} {
		if err := k.Param("polygamma", cuda.F32, 4, buf, buf, p, 0); err == nil {
			t.Errorf("Param(polygamma, %g) succeeded; the order must be a whole number from 1", p)
		}
	}
}
