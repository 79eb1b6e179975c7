package graph

import (
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Polygamma is the op behind the derivatives of Digamma. Making the order a
// parameter closes the chain: d/dx ψ⁽ⁿ⁾ = ψ⁽ⁿ⁺¹⁾, so Lgamma and Digamma can
// be differentiated to any order.

func init() { Register(polygammaOp{}) }

type polygammaOp struct{ n int }

func (polygammaOp) Name() string { return "polygamma" }

func (polygammaOp) Arity() int { return 1 }

func (o polygammaOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x := in[0].Contiguous()
	dst := g.AllocUninit(x.DType(), x.Shape()...)
	if x.DType() == tensor.Float32 {
		polygammaRun(o.n, dst.Float32s(), x.Float32s())
	} else {
		polygammaRun(o.n, dst.Float64s(), x.Float64s())
	}
	return dst
}

func (o polygammaOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, Mul(ct, Polygamma(o.n+1, out.inputs[0])))
}

func (o polygammaOp) JVP(out *Node, t []*Node) *Node {
	return Mul(t[0], Polygamma(o.n+1, out.inputs[0]))
}

func (o polygammaOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Polygamma returns ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function
// (n = 1 is the trigamma function); n = 0 is Digamma. It is accurate for
// x > 0 and uses the recurrence for negative non-integers (slowly for very
// negative x); it is +Inf or NaN at the poles 0, −1, −2, …. It panics for
// n < 0.
func Polygamma(n int, x *Node) *Node {
	switch {
	case n < 0:
		tensor.Fail("polygamma", "negative order %d (operand %s)", n, Describe(x))
	case n == 0:
		return Digamma(x)
	}
	return Apply(polygammaOp{n}, x)
}

// bernoulli2k holds B₂, B₄, …, B₂₀ for the asymptotic series.
var bernoulli2k = [...]float64{1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
	-691.0 / 2730, 7.0 / 6, -3617.0 / 510, 43867.0 / 798, -174611.0 / 330}

// polygammaRun sets dst[i] = ψ⁽ⁿ⁾(x[i]) for n ≥ 1.
func polygammaRun[T float32 | float64](n int, dst, x []T) {
	// Series coefficients c_k = B₂ₖ·(2k+n−1)!/(2k)!, shared by all elements.
	var coef [len(bernoulli2k)]T
	for k := range coef {
		c := bernoulli2k[k]
		for j := 2*(k+1) + 1; j <= 2*(k+1)+n-1; j++ {
			c *= float64(j)
		}
		coef[k] = T(c)
	}
	factN := T(1) // n!
	for j := 2; j <= n; j++ {
		factN *= T(j)
	}
	sign := T(1) // (−1)ⁿ⁺¹
	if n%2 == 0 {
		sign = -1
	}
	// Shift x up to where the asymptotic series converges fast: its terms
	// shrink roughly like ((2k+n)/(2πz))².
	zmin := T(10 + 2*n)
	dst = dst[:len(x)]
	for i, xi := range x {
		switch {
		case xi != xi || xi < -1e6:
			dst[i] = T(math.NaN())
			continue
		case xi <= 0 && xi == T(math.Floor(float64(xi))):
			if n%2 == 1 {
				dst[i] = T(math.Inf(1))
			} else {
				dst[i] = T(math.NaN())
			}
			continue
		}
		var s T // Σ 1/(x+k)ⁿ⁺¹ over the shifted-away terms
		z := xi
		for z < zmin {
			s += powInt(1/z, n+1)
			z++
		}
		inv := 1 / z
		inv2 := inv * inv
		zn := powInt(inv, n) // z⁻ⁿ
		a := factN/T(n)*zn + factN/2*zn*inv
		term := zn * inv2 // z^−(n+2)
		for _, c := range coef {
			a += c * term
			term *= inv2
		}
		dst[i] = sign * (factN*s + a)
	}
}

// powInt returns xᵏ for k ≥ 0 by repeated squaring.
func powInt[T float32 | float64](x T, k int) T {
	r := T(1)
	for k > 0 {
		if k&1 == 1 {
			r *= x
		}
		x *= x
		k >>= 1
	}
	return r
}
