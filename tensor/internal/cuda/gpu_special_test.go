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

// TestGammaKernels compares gamma_p_deriv and gamma_p_inv with
// tensor.GammaPDeriv and GammaPInv. Both compute in double; the device's
// exp, log and lgamma differ from Go's by a few ulp (CUDA Math API:
// exp and log 1 ulp, lgamma 4), so P agrees within tolMath, and each
// level of five-point differences (steps h = 10⁻³ of the argument,
// a ≥ 0.5) multiplies that by up to 1.5/h = 3000. float32 results are
// double results rounded once: tolMath.
func TestGammaKernels(t *testing.T) {
	d, k := kernels(t)
	const n = 600
	for _, ty := range dtypes {
		a, x := sample(ty, n, 0.5, 6, n), sample(ty, n, 0.05, 15, n)
		for i, v := range x.Values() { // some on each side of x = a + 1, one at 0
			if i%7 == 0 {
				x.SetAt(v*0.1, i)
			}
		}
		x.SetAt(0, 3)
		ab, xb := upload(t, d, a), upload(t, d, x)
		out, _ := d.Alloc(n * ty.Size())
		for _, o := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {0, 2}, {1, 1}, {2, 0}, {0, 3}, {1, 2}} {
			if err := k.GammaPDeriv(dt(ty), n, out, ab, xb, o[0], o[1]); err != nil {
				t.Fatal(err)
			}
			want := tensor.GammaPDeriv(a, x, o[0], o[1])
			levels := o[0] + max(o[1]-1, 0)
			ws := want.Values()
			bound := make([]float64, n)
			for i, w := range ws {
				bound[i] = tolMath[ty].rtol * max(1, math.Abs(w))
				if ty == tensor.Float64 {
					bound[i] *= math.Pow(3000, float64(levels))
				}
			}
			compareBound(t, fmt.Sprintf("gamma_p_deriv(%d, %d) %v", o[0], o[1], ty), download(t, d, out, ty, n), want, bound)
		}
		u := sample(ty, n, 0.02, 0.98, n)
		ub, zb := upload(t, d, u), upload(t, d, a) // Newton from z0 = a, the mean
		if err := k.GammaPInv(dt(ty), n, out, ab, ub, zb); err != nil {
			t.Fatal(err)
		}
		want := tensor.GammaPInv(a, u, a)
		compare(t, fmt.Sprintf("gamma_p_inv %v", ty), download(t, d, out, ty, n), want, tol{rtol: 1e-11 + tolMath[ty].rtol})
		// The solution solves P(a, z) = u.
		back := tensor.GammaPDeriv(a, want, 0, 0)
		compare(t, fmt.Sprintf("P(a, gamma_p_inv) %v", ty), back, u, tol{rtol: 1e-5})
		for _, b := range []*cuda.Buffer{ab, xb, ub, zb, out} {
			d.Release(b)
		}
	}
	buf, _ := d.Alloc(64)
	defer d.Release(buf)
	if err := k.GammaPDeriv(cuda.F64, 2, buf, buf, buf, 4, 3); err == nil {
		t.Error("GammaPDeriv of order 7 succeeded")
	}
}
