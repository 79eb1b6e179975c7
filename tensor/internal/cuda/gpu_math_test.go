//go:build linux && (amd64 || arm64)

package cuda_test

// Tests of kernels/math.cu and kernels/reduce.cu against package tensor's
// CPU operations. Results that are correctly rounded on both sides
// (comparisons, Maximum and Minimum, Sign, Clamp, LeakyRelu and its
// gradient, Where, copies, Max and Min reductions) must agree bit for bit,
// the sign of zero included. The others get tolerances from the error
// bounds of the CUDA Math API (NVIDIA, 2025, CUDA C++ Programming Guide,
// "Mathematical Functions": sinf, cosf, erff 2 ulp, tanf and powf 4 ulp,
// lgammaf 6 ulp outside (−10.001, −2.264), logf and expm1f 1 ulp; in
// double sin, cos, erf, tan, pow 2 ulp, lgamma 4 ulp outside (−23.0001,
// −2.2637), log and expm1 1 ulp) and the CPU's own (Go's math within a
// few ulp, math32's float32 Sin and Cos reducing the argument in float32):
// tolMath's 32 ulp (float32) or about 450 ulp (float64) of the result's
// magnitude, times the problem's condition number where rounding an
// intermediate value is amplified (near the zeros of sin, cos, lgamma and
// digamma, or by |y·log x| in xʸ).

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// unaryCase is the element type of unaryCases (gpu_kernels_test.go).
type unaryCase = struct {
	cpu    func(*tensor.Tensor) *tensor.Tensor
	lo, hi float64
	exact  bool
	cond   func(x float64) float64
}

// digamma64 is ψ(x) from the CPU's float64 Digamma, for tolerances.
func digamma64(x float64) float64 {
	return tensor.Digamma(tensor.FromValues(tensor.Float64, []float64{x}, 1)).At(0)
}

// The condition factors (see unaryCase.cond): how much a relative error
// of x, or an absolute error of the intermediate terms, is amplified in
// the result. sin: |x·cot x|; cos: |x·tan x|; lgamma: |x·ψ(x)/lgamma(x)|;
// digamma: the sum of its terms' magnitudes (recurrence 1/x, log x, the
// reflection's π·cot πx) over |ψ(x)|, as those terms cancel near its zero.
func sinCond(x float64) float64 {
	if s := math.Sin(x); s != 0 {
		return 1 + math.Abs(x*math.Cos(x)/s)
	}
	return 1
}

func cosCond(x float64) float64 { return 1 + math.Abs(x*math.Tan(x)) }

func lgammaCond(x float64) float64 {
	if lg, _ := math.Lgamma(x); lg != 0 && !math.IsInf(lg, 0) {
		return 1 + math.Abs(x*digamma64(x)/lg)
	}
	return 1
}

func digammaCond(x float64) float64 {
	psi := digamma64(x)
	if psi == 0 || math.IsInf(psi, 0) || math.IsNaN(psi) {
		return 1
	}
	mag := math.Abs(psi) + 1/math.Abs(x) + math.Log(math.Abs(x)+10) + 1
	if x < 0 {
		mag += math.Abs(math.Pi/math.Tan(math.Pi*x)) + math.Log(11-x)
	}
	return mag / math.Abs(psi)
}

func init() {
	for op, c := range map[string]unaryCase{
		"sign":    {cpu: tensor.Sign, lo: -10, hi: 10, exact: true},
		"sin":     {cpu: tensor.Sin, lo: -10, hi: 10, cond: sinCond},
		"cos":     {cpu: tensor.Cos, lo: -10, hi: 10, cond: cosCond},
		"erf":     {cpu: tensor.Erf, lo: -5, hi: 5},
		"lgamma":  {cpu: tensor.Lgamma, lo: 0.01, hi: 30, cond: lgammaCond},
		"digamma": {cpu: tensor.Digamma, lo: 0.01, hi: 30, cond: digammaCond},
	} {
		unaryCases[op] = c
	}
	cmp := func(f func(a, b *tensor.Tensor) *tensor.Tensor) binaryCase {
		return binaryCase{cpu: f, lo: -10, hi: 10, exact: true}
	}
	for op, c := range map[string]binaryCase{
		// xʸ = e^(y·log x): a rounding of log x is amplified by |y·log x|.
		"pow": {cpu: tensor.Pow, lo: -4, hi: 4, mag: powMag},
		// 0·log y = 0 is exact; elsewhere one log and one product.
		"xlogy":   {cpu: tensor.Xlogy, lo: 0.01, hi: 20},
		"maximum": cmp(tensor.Maximum), "minimum": cmp(tensor.Minimum),
		"equal": cmp(tensor.Equal), "not_equal": cmp(tensor.NotEqual),
		"less": cmp(tensor.Less), "less_equal": cmp(tensor.LessEqual),
		"greater": cmp(tensor.Greater), "greater_equal": cmp(tensor.GreaterEqual),
	} {
		binaryCases[op] = c
	}
}

func powMag(x, y float64) float64 {
	return math.Abs(math.Pow(x, y)) * (1 + math.Abs(y*math.Log(math.Abs(x))))
}

// specials are the values every kernel is tried on: signed zeros and
// infinities, NaN, integers and half-integers of both signs (the poles
// and the reflection of lgamma and digamma, Pow's odd and even
// exponents), ties, and very small and large magnitudes.
var specials = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2, -2, 3, -3, 2.5, -2.5, -7.25, 0.1,
	1.4616321449683622, 7, 1e-30, -1e-30, 1e30, -1e30, math.Inf(1), math.Inf(-1), math.NaN()}

// compareBits fails the test unless got and want agree bit for bit (any
// NaN equals any NaN; −0 differs from +0).
func compareBits(tb testing.TB, what string, got, want *tensor.Tensor) {
	tb.Helper()
	g, w := got.Values(), want.Contiguous().Values()
	if len(g) != len(w) {
		tb.Fatalf("%s: %d values, want %d", what, len(g), len(w))
	}
	for i := range g {
		if math.IsNaN(g[i]) && math.IsNaN(w[i]) || math.Float64bits(g[i]) == math.Float64bits(w[i]) {
			continue
		}
		tb.Fatalf("%s: element %d = %v (sign bit %v), want %v (sign bit %v)", what, i, g[i], math.Signbit(g[i]), w[i], math.Signbit(w[i]))
	}
}

// boundAt is tolMath's bound for a result of magnitude mag (an error
// scale), or 0 where the CPU's result w is not finite: an infinite or
// NaN result must be matched exactly.
func boundAt(ty tensor.DType, mag, w float64) float64 {
	if math.IsInf(w, 0) || math.IsNaN(w) {
		return 0
	}
	return tolMath[ty].atol + tolMath[ty].rtol*mag
}

// unaryBound is the tolerance of unary case c at the inputs x with the
// CPU's results w.
func unaryBound(c unaryCase, ty tensor.DType, x, w []float64) []float64 {
	b := make([]float64, len(x))
	for i := range b {
		cond := 1.0
		if c.cond != nil {
			cond = c.cond(x[i])
		}
		b[i] = boundAt(ty, cond*math.Abs(w[i]), w[i])
	}
	return b
}

// TestMathUnarySpecials runs the unary kernels of math.cu on the special
// values, and lgamma and digamma on negative non-integers too.
func TestMathUnarySpecials(t *testing.T) {
	d, k := kernels(t)
	neg := []float64{-0.3, -1.5, -2.1, -3.7, -9.99, -10.5, -40.25}
	for _, op := range []string{"sign", "sin", "cos", "erf", "lgamma", "digamma"} {
		c := unaryCases[op]
		vals := specials
		if op == "lgamma" || op == "digamma" {
			vals = append(append([]float64{}, specials...), neg...)
		}
		for _, ty := range dtypes {
			x := tensor.FromValues(ty, vals, len(vals))
			xb := upload(t, d, x)
			out, _ := d.Alloc(len(vals) * ty.Size())
			if err := k.Unary(op, dt(ty), len(vals), out, xb); err != nil {
				t.Fatal(err)
			}
			what, got, want := fmt.Sprintf("%s %v specials", op, ty), download(t, d, out, ty, len(vals)), c.cpu(x)
			if c.exact {
				compareBits(t, what, got, want)
			} else {
				compareBound(t, what, got, want, unaryBound(c, ty, x.Values(), want.Values()))
			}
			d.Release(xb)
			d.Release(out)
		}
	}
}

// TestMathBinarySpecials runs the binary kernels of math.cu on every pair
// of special values, broadcasting a column (k, 1) against a row (k).
func TestMathBinarySpecials(t *testing.T) {
	d, k := kernels(t)
	n := len(specials)
	shape := []int{n, n}
	for _, op := range []string{"pow", "maximum", "minimum", "xlogy", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"} {
		c := binaryCases[op]
		for _, ty := range dtypes {
			a := tensor.FromValues(ty, specials, n, 1)
			b := tensor.FromValues(ty, specials, n)
			want := c.cpu(a, b)
			ab, bb := upload(t, d, a), upload(t, d, b)
			res, _ := d.Alloc(n * n * ty.Size())
			if err := k.Binary(op, dt(ty), shape, res, ab, []int{1, 0}, bb, []int{0, 1}); err != nil {
				t.Fatal(err)
			}
			got := download(t, d, res, ty, shape...)
			what := fmt.Sprintf("%s %v specials", op, ty)
			if c.exact {
				compareBits(t, what, got, want)
			} else {
				bound := make([]float64, n*n)
				for i := range bound {
					x, y := float64(float32OrSelf(ty, specials[i/n])), float64(float32OrSelf(ty, specials[i%n]))
					mag := math.Abs(want.Values()[i])
					if c.mag != nil {
						mag = c.mag(x, y)
					}
					bound[i] = boundAt(ty, mag, want.Values()[i])
				}
				compareBound(t, what, got, want, bound)
			}
			d.Release(ab)
			d.Release(bb)
			d.Release(res)
		}
	}
}

// float32OrSelf rounds v to ty.
func float32OrSelf(ty tensor.DType, v float64) float64 {
	if ty == tensor.Float32 {
		return float64(float32(v))
	}
	return v
}

// TestParamKernels compares Param's kernels with PowScalar, LeakyRelu,
// Elu and Clamp on the special values and a range, for several
// parameters (signed zero bounds among them: Clamp(−0, 0, …) is +0).
func TestParamKernels(t *testing.T) {
	d, k := kernels(t)
	negZero, inf := math.Copysign(0, -1), math.Inf(1)
	cases := []struct {
		op     string
		p, q   float64
		cpu    func(x *tensor.Tensor) *tensor.Tensor
		exact  bool
		powMag bool
	}{
		{op: "leaky_relu", p: 0.01, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.LeakyRelu(x, 0.01) }, exact: true},
		{op: "leaky_relu", p: -0.5, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.LeakyRelu(x, -0.5) }, exact: true},
		{op: "clamp", p: -1, q: 1, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.Clamp(x, -1, 1) }, exact: true},
		{op: "clamp", p: 0, q: 0, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.Clamp(x, 0, 0) }, exact: true},
		{op: "clamp", p: negZero, q: negZero, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.Clamp(x, negZero, negZero) }, exact: true},
		{op: "clamp", p: -inf, q: 2.5, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.Clamp(x, -inf, 2.5) }, exact: true},
		{op: "clamp", p: 0.1, q: inf, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.Clamp(x, 0.1, inf) }, exact: true},
		{op: "elu", p: 1, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.Elu(x, 1) }},
		{op: "elu", p: 0.3, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.Elu(x, 0.3) }},
	}
	for _, p := range []float64{2, 3, -1, 0.5, -0.5, 1, 0, 2.5, -2, 1.0 / 3, math.NaN(), inf, -inf} {
		cases = append(cases, struct {
			op     string
			p, q   float64
			cpu    func(x *tensor.Tensor) *tensor.Tensor
			exact  bool
			powMag bool
		}{op: "pow_scalar", p: p, cpu: func(x *tensor.Tensor) *tensor.Tensor { return tensor.PowScalar(x, p) }, powMag: true})
	}
	for _, c := range cases {
		for _, ty := range dtypes {
			vals := append(append([]float64{}, specials...), sample(tensor.Float64, 301, -6, 6, 301).Values()...)
			x := tensor.FromValues(ty, vals, len(vals))
			xb := upload(t, d, x)
			out, _ := d.Alloc(len(vals) * ty.Size())
			if err := k.Param(c.op, dt(ty), len(vals), out, xb, c.p, c.q); err != nil {
				t.Fatal(err)
			}
			what, got, want := fmt.Sprintf("%s(%g, %g) %v", c.op, c.p, c.q, ty), download(t, d, out, ty, len(vals)), c.cpu(x)
			if c.exact {
				compareBits(t, what, got, want)
			} else {
				xs, ws := x.Values(), want.Values()
				bound := make([]float64, len(xs))
				for i := range bound {
					mag := math.Abs(ws[i])
					if c.powMag {
						mag = powMag(xs[i], float32OrSelf(ty, c.p))
					}
					bound[i] = boundAt(ty, mag, ws[i])
				}
				compareBound(t, what, got, want, bound)
			}
			d.Release(xb)
			d.Release(out)
		}
	}
	buf, _ := d.Alloc(64)
	defer d.Release(buf)
	b := buf.Slice(buf.Bytes() - 64) // exactly 64 bytes: Alloc may round up
	if err := k.Param("clamp", cuda.F32, 4, b, b, 1, -1); err == nil || !strings.Contains(err.Error(), "lower bound 1 exceeds upper bound -1") {
		t.Errorf("Param(clamp, 1, -1) = %v, want an error naming the bounds", err)
	}
	if err := k.Param("softsign", cuda.F32, 4, b, b, 1, 0); err == nil || !strings.Contains(err.Error(), `no kernel "softsign"`) {
		t.Errorf("Param(softsign) = %v, want an error naming it", err)
	}
}

// TestLeakyReluGradKernel compares ParamBinary("leaky_relu_grad") with
// tensor.LeakyReluGrad on every pair of special values (v a column, x a
// row) and on a transposed v.
func TestLeakyReluGradKernel(t *testing.T) {
	d, k := kernels(t)
	n := len(specials)
	for _, slope := range []float64{0.2, -0.01, 0} {
		for _, ty := range dtypes {
			v := tensor.FromValues(ty, specials, n, 1)
			x := tensor.FromValues(ty, specials, n)
			vb, xb := upload(t, d, v), upload(t, d, x)
			res, _ := d.Alloc(n * n * ty.Size())
			if err := k.ParamBinary("leaky_relu_grad", dt(ty), []int{n, n}, res, vb, []int{1, 0}, xb, []int{0, 1}, slope); err != nil {
				t.Fatal(err)
			}
			compareBits(t, fmt.Sprintf("leaky_relu_grad %v slope %g", ty, slope), download(t, d, res, ty, n, n), tensor.LeakyReluGrad(v, x, slope))
			d.Release(vb)
			d.Release(xb)
			// v read through a transpose: (7, 5) stored, viewed as (5, 7).
			vs := sample(ty, 35, -3, 3, 7, 5)
			xs := sample(ty, 35, -1, 1, 5, 7)
			vb, xb = upload(t, d, vs), upload(t, d, xs)
			if err := k.ParamBinary("leaky_relu_grad", dt(ty), []int{5, 7}, res, vb, []int{1, 5}, xb, []int{7, 1}, slope); err != nil {
				t.Fatal(err)
			}
			compareBits(t, fmt.Sprintf("leaky_relu_grad %v transposed", ty), download(t, d, res, ty, 5, 7), tensor.LeakyReluGrad(tensor.Transpose(vs), xs, slope))
			d.Release(vb)
			d.Release(xb)
			d.Release(res)
		}
	}
	buf, _ := d.Alloc(64)
	defer d.Release(buf)
	b := buf.Slice(buf.Bytes() - 64) // exactly 64 bytes: Alloc may round up
	if err := k.ParamBinary("elu_grad", cuda.F32, []int{2}, b, b, []int{1}, b, []int{1}, 1); err == nil || !strings.Contains(err.Error(), `no kernel "elu_grad"`) {
		t.Errorf("ParamBinary(elu_grad) = %v, want an error naming it", err)
	}
	if err := k.ParamBinary("leaky_relu_grad", cuda.F32, []int{20}, b, b, []int{1}, b, []int{0}, 1); err == nil || !strings.Contains(err.Error(), "reads a up to element 19 of 16") {
		t.Errorf("ParamBinary past a's end = %v, want an error naming the element", err)
	}
}

// TestWhereKernel compares Where with tensor.Where over three broadcast
// operands (cond with 0, −0, NaN and nonzero values) and a transposed a.
func TestWhereKernel(t *testing.T) {
	d, k := kernels(t)
	out := []int{4, 5, 6}
	for _, ty := range dtypes {
		cv := []float64{0, math.Copysign(0, -1), math.NaN(), 1, -2, 0, 3, 0, math.Inf(-1), 0, 1e-30, 0,
			0, 1, 0, 1, 0, 1, 0, 0, 5, 5, 0, 0}
		cond := tensor.FromValues(ty, cv, 4, 1, 6)
		b := sample(ty, 20, -5, 5, 4, 5, 1)
		base := sample(ty, 30, -9, 9, 6, 5) // a is its transpose, (5, 6)
		a := tensor.Transpose(base)
		want := tensor.Where(cond, a, b)
		cb, ab, bb := upload(t, d, cond), upload(t, d, base), upload(t, d, b)
		cs, _ := cuda.BroadcastStrides(cond.Shape(), out)
		bs, _ := cuda.BroadcastStrides(b.Shape(), out)
		as := []int{0, 1, 5} // (5, 6) transposed from (6, 5), broadcast over 4
		res, _ := d.Alloc(4 * 5 * 6 * ty.Size())
		if err := k.Where(dt(ty), out, res, cb, cs, ab, as, bb, bs); err != nil {
			t.Fatal(err)
		}
		compareBits(t, fmt.Sprintf("where %v", ty), download(t, d, res, ty, out...), want)
		if err := k.Where(dt(ty), out, res, cb, cs, ab, as, bb, []int{1000, 1, 1}); err == nil || !strings.Contains(err.Error(), "Where (b)") {
			t.Errorf("Where reading past b = %v, want an error naming b", err)
		}
		if err := k.Where(dt(ty), out, res, cb, cs[:2], ab, as, bb, bs); err == nil || !strings.Contains(err.Error(), "one stride per dimension") {
			t.Errorf("Where with 2 strides for cond = %v, want an error", err)
		}
		for _, buf := range []*cuda.Buffer{cb, ab, bb, res} {
			d.Release(buf)
		}
	}
}

// TestCopyStridedKernel writes into strided views of a buffer (a slice
// that starts inside it, a permutation) from broadcast and contiguous
// sources, and compares the whole buffer with tensor.CopyInto into the
// same view of the CPU's copy: the elements outside the view must stay.
func TestCopyStridedKernel(t *testing.T) {
	d, k := kernels(t)
	for _, ty := range dtypes {
		base := sample(ty, 4*5*6, -10, 10, 4, 5, 6)
		for _, c := range []struct {
			name string
			view func(*tensor.Tensor) *tensor.Tensor
			src  *tensor.Tensor
		}{
			{"slice [1:4, :, ::2] from (5, 1)", func(b *tensor.Tensor) *tensor.Tensor {
				return tensor.Slice(tensor.Slice(b, 0, 1, 4, 1), 2, 0, 6, 2)
			}, sample(ty, 5, 20, 30, 5, 1)},
			{"permuted (2, 0, 1) from contiguous", func(b *tensor.Tensor) *tensor.Tensor {
				return tensor.Permute(b, 2, 0, 1)
			}, sample(ty, 120, 20, 30, 6, 4, 5)},
			{"slice [2:3, 1:4, 5:6] from one value", func(b *tensor.Tensor) *tensor.Tensor {
				return tensor.Slice(tensor.Slice(tensor.Slice(b, 0, 2, 3, 1), 1, 1, 4, 1), 2, 5, 6, 1)
			}, tensor.FromValues(ty, []float64{math.Copysign(0, -1)}, 1)},
		} {
			ref := base.Clone()
			v := c.view(ref)
			tensor.CopyInto(v, c.src)
			bb, sb := upload(t, d, base), upload(t, d, c.src)
			xs, err := cuda.BroadcastStrides(c.src.Shape(), v.Shape())
			if err != nil {
				t.Fatal(err)
			}
			if err := k.CopyStrided(dt(ty), v.Shape(), bb.Slice(v.Offset()*ty.Size()), v.Strides(), sb, xs); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			what := fmt.Sprintf("copy_strided %v %s (strides %v, offset %d)", ty, c.name, v.Strides(), v.Offset())
			compareBits(t, what, download(t, d, bb, ty, 4, 5, 6), ref)
			d.Release(bb)
			d.Release(sb)
		}
	}
	buf, _ := d.Alloc(64)
	defer d.Release(buf)
	b := buf.Slice(buf.Bytes() - 64) // exactly 64 bytes: Alloc may round up
	if err := k.CopyStrided(cuda.F32, []int{2, 2}, b, []int{0, 1}, b, []int{2, 1}); err == nil || !strings.Contains(err.Error(), "destination stride 0 of dimension 0") {
		t.Errorf("CopyStrided to a broadcast view = %v, want an error naming the zero stride", err)
	}
	if err := k.CopyStrided(cuda.F32, []int{4, 4}, b.Slice(16), []int{4, 1}, b, []int{4, 1}); err == nil || !strings.Contains(err.Error(), "b up to 15 of 12") {
		t.Errorf("CopyStrided past dst's end = %v, want an error naming the element", err)
	}
}
