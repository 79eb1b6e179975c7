//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	_ "github.com/gradus-ml/gradus/tensor/cuda"
)

// device returns the first CUDA device, or skips (fails with
// GRADUS_CUDA_REQUIRE=1) where there is none.
func device(t testing.TB) tensor.Device {
	t.Helper()
	d, err := tensor.CUDA(0)
	if err != nil {
		if os.Getenv("GRADUS_CUDA_REQUIRE") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return d
}

// randn returns a seeded normal tensor on the CPU.
func randn(dt tensor.DType, seed uint64, shape ...int) *tensor.Tensor {
	return tensor.NewRNG(seed).Normal(dt, 0, 1, shape...)
}

// eps is the unit roundoff of dt.
func eps(dt tensor.DType) float64 {
	if dt == tensor.Float32 {
		return 0x1p-24
	}
	return 0x1p-53
}

// near fails unless got (on any device) equals want (on the CPU) within
// tol relative to max(1, |want|) element by element, infinities and NaN
// where want has them; tol 0 asks for equal bits.
func near(t *testing.T, what string, got, want *tensor.Tensor, tol float64) {
	t.Helper()
	g, w := got.Values(), want.Values()
	if len(g) != len(w) {
		t.Fatalf("%s: %d elements, want %d", what, len(g), len(w))
	}
	worst := 0.0
	for i := range w {
		if g[i] == w[i] || math.IsNaN(g[i]) && math.IsNaN(w[i]) { // infinities and NaN where the CPU has them
			continue
		}
		d := math.Abs(g[i] - w[i])
		if tol == 0 {
			if g[i] != w[i] && !(math.IsNaN(g[i]) && math.IsNaN(w[i])) {
				t.Fatalf("%s: element %d is %v, want %v bit for bit", what, i, g[i], w[i])
			}
			continue
		}
		r := d / max(1, math.Abs(w[i]))
		if !(r <= tol) {
			t.Fatalf("%s: element %d is %v, want %v (relative error %.3g > %.3g)", what, i, g[i], w[i], r, tol)
		}
		worst = max(worst, r)
	}
	if tol > 0 {
		t.Logf("%s: ok (worst relative error %.3g, %.2f of the tolerance)", what, worst, worst/tol)
	} else {
		t.Logf("%s: ok (bit for bit)", what)
	}
}

// TestToRoundTrip moves tensors and views to the device and back.
func TestToRoundTrip(t *testing.T) {
	d := device(t)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := randn(dt, 1, 3, 4, 5)
		g := x.To(d)
		if g.Device() != d || x.Device() != tensor.CPU {
			t.Fatalf("devices %v, %v", g.Device(), x.Device())
		}
		near(t, dt.String()+" round trip", g.To(tensor.CPU), x, 0)
		near(t, dt.String()+" permuted view", tensor.Permute(g, 2, 0, 1).To(tensor.CPU), tensor.Permute(x, 2, 0, 1).Contiguous(), 0)
		near(t, dt.String()+" slice", tensor.Slice(g, 1, 1, 3, 1).Clone().To(tensor.CPU), tensor.Slice(x, 1, 1, 3, 1).Contiguous(), 0)
		if v := g.At(2, 3, 4); v != x.At(2, 3, 4) {
			t.Errorf("At = %v, want %v", v, x.At(2, 3, 4))
		}
		z := tensor.NewOn(d, dt, 7, 3)
		z.Fill(2.5)
		near(t, dt.String()+" fill", z, tensor.Full(dt, 2.5, 7, 3), 0)
	}
}

// TestOpsMatchCPU runs each operation with a GPU kernel on both devices:
// the correctly rounded ones bit for bit, the others within a few
// roundings (the CUDA Math API's functions are within 1-4 ulp, and
// cuBLAS and the reductions add in another order: Higham 2002, §3.1).
func TestOpsMatchCPU(t *testing.T) {
	d := device(t)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		a, b, c := randn(dt, 2, 6, 5, 7), randn(dt, 3, 5, 1), randn(dt, 4, 6, 5, 7)
		m1, m2 := randn(dt, 5, 33, 17), randn(dt, 6, 21, 17)
		cases := []struct {
			name string
			f    func(x ...*tensor.Tensor) *tensor.Tensor
			in   []*tensor.Tensor
			tol  float64 // in units of eps
		}{
			{"Add broadcast", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.Add(x[0], x[1]) }, []*tensor.Tensor{a, b}, 0},
			{"Sub", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.Sub(x[0], x[1]) }, []*tensor.Tensor{a, c}, 0},
			{"Mul transposed", func(x ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Mul(tensor.Permute(x[0], 2, 1, 0), tensor.Permute(x[1], 2, 1, 0))
			}, []*tensor.Tensor{a, c}, 0},
			{"Div", func(x ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Div(x[0], tensor.AddScalar(tensor.Mul(x[1], x[1]), 1))
			}, []*tensor.Tensor{a, c}, 0},
			{"Relu", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.Relu(x[0]) }, []*tensor.Tensor{a}, 0},
			{"ReluGrad", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.ReluGrad(x[0], tensor.Relu(x[1])) }, []*tensor.Tensor{a, c}, 0},
			{"AddScalar, MulScalar", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.MulScalar(tensor.AddScalar(x[0], 0.25), -3) }, []*tensor.Tensor{a}, 0},
			{"Exp", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.Exp(x[0]) }, []*tensor.Tensor{a}, 8},
			{"Tanh", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.Tanh(x[0]) }, []*tensor.Tensor{a}, 8},
			{"Sigmoid", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.Sigmoid(x[0]) }, []*tensor.Tensor{a}, 8},
			{"Sum over axes 0, 2", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.Sum(x[0], []int{0, 2}, false) }, []*tensor.Tensor{a}, 64},
			{"Mean of all", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.Mean(x[0], nil, true) }, []*tensor.Tensor{a}, 256},
			{"MatMul", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.MatMulT(x[0], x[1], false, true) }, []*tensor.Tensor{m1, m2}, 64},
			{"MatMul transA", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.MatMulT(x[0], x[1], true, false) }, []*tensor.Tensor{m1, randn(dt, 7, 33, 9)}, 64},
			{"MatMul batched", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.MatMul(x[0], x[1]) }, []*tensor.Tensor{a, randn(dt, 8, 6, 7, 4)}, 64},
			{"Softmax", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.Softmax(x[0], -1) }, []*tensor.Tensor{a}, 64},
			{"LogSoftmax", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.LogSoftmax(x[0], -1) }, []*tensor.Tensor{a}, 64},
			{"SoftmaxGrad", func(x ...*tensor.Tensor) *tensor.Tensor {
				return tensor.SoftmaxGrad(tensor.Softmax(x[0], -1), x[1], -1)
			}, []*tensor.Tensor{a, c}, 64},
			{"IndexSelect", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.IndexSelect(x[0], 1, []int{4, 0, 0, 2}) }, []*tensor.Tensor{a}, 0},
			{"ScatterAdd unique", func(x ...*tensor.Tensor) *tensor.Tensor { return tensor.ScatterAdd(x[0], 1, []int{4, 0, 3, 1, 2}, 6) }, []*tensor.Tensor{a}, 0},
		}
		for _, tc := range cases {
			gin := make([]*tensor.Tensor, len(tc.in))
			for i, x := range tc.in {
				gin[i] = x.To(d)
			}
			got := tc.f(gin...)
			if got.Device() != d {
				t.Fatalf("%s %v: result on %v", tc.name, dt, got.Device())
			}
			near(t, tc.name+" "+dt.String(), got, tc.f(tc.in...), tc.tol*eps(dt))
		}
	}
}

// TestNonFinite finds a NaN or an infinity anywhere on the device.
func TestNonFinite(t *testing.T) {
	d := device(t)
	x := randn(tensor.Float32, 9, 1000)
	if n, _, _ := tensor.NonFinite(x.To(d)); n != 0 {
		t.Fatalf("NonFinite of finite data = %d", n)
	}
	for _, at := range []int{0, 517, 999} {
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			y := x.Clone()
			y.SetAt(v, at)
			n, first, val := tensor.NonFinite(y.To(d))
			if n != 1 || first != at || !(val == v || math.IsNaN(val) && math.IsNaN(v)) {
				t.Errorf("NonFinite with %v at %d = %d, %d, %v", v, at, n, first, val)
			}
			if tensor.AllFinite(x.To(d), y.To(d)) || !tensor.AllFinite(x.To(d), x.To(d)) {
				t.Errorf("AllFinite with %v at %d is wrong", v, at)
			}
		}
	}
}

// TestDeviceErrors: mixing devices, and an op without a GPU kernel, are
// errors that say what went wrong.
func TestDeviceErrors(t *testing.T) {
	d := device(t)
	x := randn(tensor.Float32, 1, 4, 3)
	g := x.To(d)
	msg := func(f func()) (s string) {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(*tensor.Error); ok {
					s = e.Error()
					return
				}
				panic(r)
			}
		}()
		f()
		return ""
	}
	for _, c := range []struct {
		name string
		f    func()
		want []string
	}{
		{"mixed", func() { tensor.Add(x, g) }, []string{"Add", "different devices", "cpu", "cuda:0"}},
		{"no kernel", func() { tensor.ArgMax(g, 0) }, []string{"ArgMax", "no GPU kernel", "cuda:0", "To(tensor.CPU)"}},
		{"host view", func() { g.Float32s() }, []string{"Float32s", "cuda:0", "To(tensor.CPU)"}},
	} {
		m := msg(c.f)
		for _, w := range c.want {
			if !strings.Contains(m, w) {
				t.Errorf("%s: error %q does not mention %q", c.name, m, w)
			}
		}
		t.Logf("%s: %s", c.name, m)
	}
}

// TestMatMulPrecision turns TF32 and bfloat16 products on and off. On,
// each entry of a float32 product is within the format's rounding of the
// CPU's: inputs cut to 10 (TF32) or 7 (bfloat16) explicit mantissa bits,
// under 2⁻¹⁰ or 2⁻⁷ relative each whether rounded or truncated, so
// |Δ| ≤ 2⁻⁸·(|A|·|B|) or 2⁻⁵·(|A|·|B|) with the float32 sums' rounding to
// spare (Higham 2002, §3.5, with the format's unit roundoff); back at
// float32, within float32's. On the H200 the TF32 product's worst entry
// was 1.6 % of max(1, |entry|). The batched product (cuBLAS's strided
// batched call) is checked the same way.
func TestMatMulPrecision(t *testing.T) {
	d := device(t)
	if err := tensor.SetMatMulPrecision(tensor.CPU, tensor.MatMulTF32); err == nil {
		t.Error("SetMatMulPrecision on the CPU: no error")
	}
	if err := tensor.SetMatMulPrecision(d, tensor.MatMulPrecision(7)); err == nil || !strings.Contains(err.Error(), "unknown precision") {
		t.Errorf("SetMatMulPrecision(7): %v, want an unknown precision error", err)
	}
	a, b := randn(tensor.Float32, 21, 3, 64, 256), randn(tensor.Float32, 22, 3, 256, 64)
	want := tensor.MatMul(a, b).Values()
	bound := tensor.MatMul(tensor.Abs(a), tensor.Abs(b)).Values()
	for _, c := range []struct {
		p tensor.MatMulPrecision
		u float64
	}{{tensor.MatMulTF32, 0x1p-8}, {tensor.MatMulBF16, 0x1p-5}, {tensor.MatMulFloat32, 256 * 0x1p-23}} {
		if err := tensor.SetMatMulPrecision(d, c.p); err != nil {
			t.Fatal(err)
		}
		got := tensor.MatMul(a.To(d), b.To(d)).Values()
		worst := 0.0
		for i := range want {
			r := math.Abs(got[i]-want[i]) / (c.u * bound[i])
			if !(r <= 1) {
				t.Fatalf("%v: entry %d: %v, want %v within %.3g", c.p, i, got[i], want[i], c.u*bound[i])
			}
			worst = max(worst, r)
		}
		t.Logf("%v product within %.2f of its bound", c.p, worst)
		if c.p != tensor.MatMulFloat32 && worst < 1e-3 {
			t.Errorf("%v product within %.2g of its bound: as exact as float32, so the precision was not applied", c.p, worst)
		}
	}
}

// TestOverlapAndEmpty: a product into one of its own operands (cuBLAS
// must not write an operand, so the device computes into scratch), and
// means and variances over an empty axis (NaN, as on the CPU).
func TestOverlapAndEmpty(t *testing.T) {
	d := device(t)
	a := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2)
	b := tensor.FromFloat64s([]float64{0, 1, 1, 0}, 2, 2)
	want := tensor.MatMul(a, b)
	ga := a.To(d)
	tensor.MatMulTo(ga, ga, b.To(d))
	near(t, "MatMulTo into its operand", ga, want, 0)
	e := tensor.New(tensor.Float32, 3, 0).To(d)
	for _, r := range [][]float64{tensor.Mean(e, []int{1}, false).Values(), tensor.Variance(e, []int{1}, false, 0).Values()} {
		for i, v := range r {
			if !math.IsNaN(v) {
				t.Errorf("reduction over an empty axis, element %d = %v, want NaN", i, v)
			}
		}
	}
}

// TestCast converts between float32 and float64 on the device as the CPU
// does, bit for bit (float64 to float32 rounds to nearest), from a
// transposed view too.
func TestCast(t *testing.T) {
	d := device(t)
	x64 := tensor.MulScalar(randn(tensor.Float64, 31, 7, 300), 1e3)
	near(t, "float64 to float32", x64.To(d).Cast(tensor.Float32), x64.Cast(tensor.Float32), 0)
	x32 := randn(tensor.Float32, 32, 7, 300)
	near(t, "float32 to float64, transposed", tensor.Transpose(x32.To(d)).Cast(tensor.Float64), tensor.Transpose(x32).Cast(tensor.Float64), 0)
	if y := x32.To(d).Cast(tensor.Float64); y.Device() != d || y.DType() != tensor.Float64 {
		t.Errorf("Cast gave %v on %v", y.DType(), y.Device())
	}
}
