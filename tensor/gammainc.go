package tensor

import (
	"math"
	"slices"

	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

// The regularised lower incomplete gamma function P(a, x) = γ(a, x)/Γ(a)
// with its partial derivatives, and its inverse in x, for probabilistic's
// reparameterised gamma samples (Figurnov, Mohamed and Mnih, 2018,
// "Implicit reparameterization gradients"). They compute in float64 for
// both dtypes, on the CPU here and on a GPU in
// tensor/internal/cuda/kernels/special.cu, in the same operations (the
// device's exp, log and lgamma differ from Go's by a few ulp, which the
// finite differences of the derivatives amplify).

// maxGammaOrder bounds n + m of GammaPDeriv: its cost is 4ⁿ⁺ᵐ⁻¹
// evaluations of P, and each order loses about three digits.
const maxGammaOrder = 6

// GammaPDeriv returns ∂ⁿ⁺ᵐP(a, x)/∂aⁿ∂xᵐ elementwise for a and x of one
// shape and dtype (a > 0, x ≥ 0): P itself for n = m = 0, by its power
// series below x = a + 1 and its continued fraction above (Press et al.,
// 2007, Numerical Recipes, 3rd ed., §6.2); for m = 1 the density
// x^(a−1)e^(−x)/Γ(a) (0 at x ≤ 0); higher x-orders and every a-order are
// five-point central differences (error O(h⁴)) of the member one order
// below, with steps of 10⁻³ of the argument: about 1e-12 relative at
// first order, about three digits fewer per further order. It panics
// with a *Error for operands of different shapes or dtypes, n or m
// negative, or n + m above 6.
func GammaPDeriv(a, x *Tensor, n, m int) *Tensor { return GammaPDerivTo(nil, a, x, n, m) }

// GammaPDerivTo stores GammaPDeriv(a, x, n, m) in dst (nil allocates) and
// returns it.
func GammaPDerivTo(dst, a, x *Tensor, n, m int) *Tensor {
	const op = "GammaPDeriv"
	checkGammaOperands(op, a, x)
	if n < 0 || m < 0 || n+m > maxGammaOrder {
		Fail(op, "orders (%d, %d): want n, m ≥ 0 and n + m ≤ %d", n, m, maxGammaOrder)
	}
	dst = prepareDst(op, dst, a.dtype, a.shape, a, x)
	checkOverlap(op, dst, a, x)
	return specialRun(op, dst, []*Tensor{a, x}, []int{n, m}, func(v []float64) float64 {
		return gammaPPartial(n, m, v[0], v[1])
	})
}

// GammaPInv returns z with P(a, z) = u elementwise, for a > 0 and u in
// (0, 1), by Newton's method from z0 > 0 (steps that would leave z > 0
// are halved) until the step is below 10⁻¹⁵·z, at most 100 steps. a, u
// and z0 must have one shape and dtype (it panics with a *Error
// otherwise).
func GammaPInv(a, u, z0 *Tensor) *Tensor { return GammaPInvTo(nil, a, u, z0) }

// GammaPInvTo stores GammaPInv(a, u, z0) in dst (nil allocates) and
// returns it.
func GammaPInvTo(dst, a, u, z0 *Tensor) *Tensor {
	const op = "GammaPInv"
	checkGammaOperands(op, a, u, z0)
	dst = prepareDst(op, dst, a.dtype, a.shape, a, u, z0)
	checkOverlap(op, dst, a, u, z0)
	return specialRun(op, dst, []*Tensor{a, u, z0}, nil, func(v []float64) float64 {
		return invGammaP(v[0], v[1], v[2])
	})
}

func checkGammaOperands(op string, ts ...*Tensor) {
	for _, t := range ts {
		if t == nil || t.dtype != ts[0].dtype || !slices.Equal(t.shape, ts[0].shape) {
			Fail(op, "operands %s must have one shape and dtype", describe(ts...))
		}
	}
	if dt := ts[0].dtype; dt != Float32 && dt != Float64 {
		Fail(op, "operands %s: want float32 or float64", describe(ts...))
	}
}

// specialRun sets dst[i] = f(the operands' elements i), on the CPU, or
// runs the GPU kernel named for op with the integer parameters p.
func specialRun(op string, dst *Tensor, in []*Tensor, p []int, f func([]float64) float64) *Tensor {
	defer alive(dst)
	defer alive(in...)
	onCPU := dst.dev == nil
	for _, t := range in {
		onCPU = onCPU && t.dev == nil
	}
	if !onCPU {
		st := sameDevice(op, append([]*Tensor{dst}, in...)...)
		if dst.Size() == 0 {
			return dst
		}
		mems := make([]devices.Mem, len(in))
		for i, t := range in {
			c, done := contiguousOperand(op, t)
			defer done()
			mems[i] = c.mem()
		}
		intoContiguous(op, dst, func(out *Tensor) {
			gpuCheck(op, st.be.Special(kernelName(op), devDType(dst.dtype), dst.Size(), out.mem(), mems, p))
		})
		return dst
	}
	vals := make([][]float64, len(in))
	for i, t := range in {
		vals[i] = t.Values()
	}
	out := make([]float64, dst.Size())
	v := make([]float64, len(in))
	for i := range out {
		for k := range in {
			v[k] = vals[k][i]
		}
		out[i] = f(v)
	}
	copyTrusted(dst, FromValues(dst.dtype, out, dst.shape...))
	return dst
}

// gammaPPartial is ∂ⁿ⁺ᵐP(a, z)/∂aⁿ∂zᵐ: differences in a of the member one
// a-order below, then in z, down to the density (m = 1) or P itself.
func gammaPPartial(n, m int, a, z float64) float64 {
	switch {
	case n > 0:
		return fivePoint(func(x float64) float64 { return gammaPPartial(n-1, m, x, z) }, a)
	case m > 1 && z <= 0:
		return 0 // the density's derivatives, taken as 0 at the boundary
	case m > 1:
		return fivePoint(func(x float64) float64 { return gammaPPartial(0, m-1, a, x) }, z)
	case m == 1:
		if z <= 0 {
			return 0
		}
		return math.Exp(gammaLogPdf(a, z))
	}
	return gammaP(a, z)
}

// fivePoint is f′(x) by the five-point central difference with step
// 10⁻³·x (x > 0, so every point stays positive).
func fivePoint(f func(float64) float64, x float64) float64 {
	h := 1e-3 * x
	return (f(x-2*h) - 8*f(x-h) + 8*f(x+h) - f(x+2*h)) / (12 * h)
}

func gammaLogPdf(a, z float64) float64 {
	lg, _ := math.Lgamma(a)
	return (a-1)*math.Log(z) - z - lg
}

// gammaP is the regularised lower incomplete gamma function P(a, x): its
// power series for x < a + 1, else 1 − Q with Q's continued fraction
// (modified Lentz).
func gammaP(a, x float64) float64 {
	if x <= 0 {
		return 0
	}
	lg, _ := math.Lgamma(a)
	front := math.Exp(a*math.Log(x) - x - lg)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if term < sum*1e-17 {
				break
			}
		}
		return front * sum
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for n := 1; n < 1000; n++ {
		an := -float64(n) * (float64(n) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return 1 - front*h
}

// invGammaP solves P(a, z) = u for z > 0 by Newton's method from z0,
// halving steps that would leave z > 0.
func invGammaP(a, u, z0 float64) float64 {
	z := z0
	for range 100 {
		f := gammaP(a, z) - u
		step := f / math.Exp(gammaLogPdf(a, z))
		next := z - step
		for next <= 0 {
			step /= 2
			next = z - step
		}
		if math.Abs(next-z) <= 1e-15*z {
			return next
		}
		z = next
	}
	return z
}
