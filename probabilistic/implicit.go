package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Reparameterised gamma samples by implicit differentiation (Figurnov,
// Mohamed and Mnih 2018): a draw z ~ Gamma(α, 1) is held fixed at its CDF
// level u = P(α, z), so z(α) = P⁻¹(α, u) and
//
//	dz/dα = −(∂P/∂α)(α, z) / p(z; α),
//
// with p the density. The op computes z(α) by Newton's method from the
// stored draw, so its value at the drawing α is the draw itself, and its
// derivative is the implicit one; ∂P/∂α is taken by a central difference
// of the regularised incomplete gamma function (relative error ~1e-8).
// Beta and Dirichlet draws are ratios of such gammas, so they inherit the
// gradient. Only first derivatives are provided.

const implicitGammaName = "probabilistic.implicit_gamma"

func init() { graph.Register(implicitGammaOp{}) }

type implicitGammaOp struct {
	u, z []float64 // the CDF levels of the draws and the draws
}

func (implicitGammaOp) Name() string { return implicitGammaName }

func (implicitGammaOp) Arity() int { return 1 }

func (o implicitGammaOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	a := in[0].Contiguous().Values()
	out := make([]float64, len(a))
	for i, ai := range a {
		out[i] = invGammaP(ai, o.u[i], o.z[i])
	}
	return tensor.FromValues(in[0].DType(), out, in[0].Shape()...)
}

// slope returns dz/dα at the op's output, as a constant of its graph.
func (o implicitGammaOp) slope(out *graph.Node) *graph.Node {
	a := out.Inputs()[0].Value().Contiguous().Values()
	z := out.Value().Contiguous().Values()
	s := make([]float64, len(a))
	for i := range a {
		s[i] = -gammaPdA(a[i], z[i]) / math.Exp(gammaLogPdf(a[i], z[i]))
	}
	return out.Graph().Const(tensor.FromValues(out.DType(), s, out.Shape()...))
}

func (o implicitGammaOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	return []*graph.Node{graph.Mul(ct, o.slope(out))}
}

func (o implicitGammaOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	if t[0] == nil {
		return nil
	}
	return graph.Mul(t[0], o.slope(out))
}

// Batch loops over the examples (vmap): each reuses the op's levels u.
func (o implicitGammaOp) Batch(b *graph.Batching, in []*graph.Node, axes []int) (*graph.Node, int) {
	return graph.BatchLoop(b, o, in, axes)
}

// GammaQuantile returns the quantile function of Gamma(α, 1) at the
// levels u (one per element of alpha, in row-major order, each in (0, 1)):
// z with P(α, z) = u, differentiable in α by the implicit derivative
// −(∂P/∂α)/p(z) (first order). With u drawn uniformly it is a
// reparameterised gamma sampler. It panics with a *tensor.Error if the
// counts differ or a level is outside (0, 1).
func GammaQuantile(alpha *graph.Node, u []float64) *graph.Node {
	const op = "probabilistic.GammaQuantile"
	if alpha == nil || alpha.Size() != len(u) {
		tensor.Fail(op, "%d levels for concentration %s", len(u), graph.Describe(alpha))
	}
	a := alpha.Value().Contiguous().Values()
	z := make([]float64, len(u))
	for i, ui := range u {
		if !(ui > 0 && ui < 1) {
			tensor.Fail(op, "level %d is %g, outside (0, 1)", i, ui)
		}
		z[i] = gammaStart(a[i], ui)
	}
	return graph.Apply(implicitGammaOp{u: append([]float64(nil), u...), z: z}, alpha)
}

// gammaStart is a starting point for Newton's method on P(a, z) = u: the
// Wilson–Hilferty approximation, or the small-z form (u·Γ(a + 1))^{1/a}
// where that is negative or a is small.
func gammaStart(a, u float64) float64 {
	x := math.Sqrt2 * math.Erfinv(2*u-1)
	if a > 0.5 {
		c := 1 - 1/(9*a) + x/(3*math.Sqrt(a))
		if c > 0 {
			return a * c * c * c
		}
	}
	lg, _ := math.Lgamma(a + 1)
	return math.Max(math.Exp((math.Log(u)+lg)/a), 1e-300)
}

// implicitGamma returns reparameterised draws of Gamma(α, 1) for the
// concentration node alpha (already broadcast to the sample shape).
func implicitGamma(rng *tensor.RNG, alpha *graph.Node) *graph.Node {
	a := alpha.Value().Contiguous().Values()
	u, z := make([]float64, len(a)), make([]float64, len(a))
	for i, ai := range a {
		z[i] = sampleGamma(rng, ai)
		u[i] = gammaP(ai, z[i])
	}
	return graph.Apply(implicitGammaOp{u: u, z: z}, alpha)
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

// gammaPdA is ∂P(a, x)/∂a by a central difference.
func gammaPdA(a, x float64) float64 {
	h := 1e-5 * math.Max(a, 1e-2)
	return (gammaP(a+h, x) - gammaP(a-h, x)) / (2 * h)
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

// RSample draws n reparameterised samples α-wise by implicit
// differentiation and divides by the rate: differentiable in both
// parameters (first derivatives).
func (d *Gamma) RSample(rng *tensor.RNG, n int) *graph.Node {
	shape := sampleShape("probabilistic.Gamma.RSample", n, d.batch, nil)
	z := implicitGamma(rng, graph.BroadcastTo(d.Concentration, shape...))
	return graph.Div(z, d.Rate)
}

// RSample draws X/(X + Y) from reparameterised gammas X ~ Gamma(a, 1) and
// Y ~ Gamma(b, 1): differentiable in a and b (first derivatives).
func (d *Beta) RSample(rng *tensor.RNG, n int) *graph.Node {
	shape := sampleShape("probabilistic.Beta.RSample", n, d.batch, nil)
	x := implicitGamma(rng, graph.BroadcastTo(d.Alpha, shape...))
	y := implicitGamma(rng, graph.BroadcastTo(d.Beta, shape...))
	return graph.Div(x, graph.Add(x, y))
}

// RSample draws normalised reparameterised gammas Gᵢ ~ Gamma(αᵢ, 1):
// differentiable in α (first derivatives).
func (d *Dirichlet) RSample(rng *tensor.RNG, n int) *graph.Node {
	shape := sampleShape("probabilistic.Dirichlet.RSample", n, d.batch, []int{d.k})
	g := implicitGamma(rng, graph.BroadcastTo(d.Concentration, shape...))
	return graph.Div(g, graph.Sum(g, []int{-1}, true))
}
