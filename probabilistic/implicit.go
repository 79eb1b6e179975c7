package probabilistic

import (
	"math"
	"slices"

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
// derivative is the implicit one. Beta and Dirichlet draws are ratios of
// such gammas, so they inherit the gradient.
//
// The slope is a graph of the op's input and output, not numbers computed
// in Go: under autodiff.Vmap a derivative traced on example 0 is rewritten
// for every example, so it must be a function of the nodes, and as a graph
// it can be differentiated again. Its pieces are the partial derivatives
// ∂ⁿ⁺ᵐP/∂αⁿ∂zᵐ of the regularised incomplete gamma function, one op
// (gammaPDerivOp) whose own derivatives are the next members of the family.

const (
	implicitGammaName = "probabilistic.implicit_gamma"
	gammaPDerivName   = "probabilistic.gamma_p_deriv"
)

func init() {
	graph.Register(implicitGammaOp{})
	graph.Register(gammaPDerivOp{})
}

type implicitGammaOp struct {
	u, z []float64 // the CDF levels of the draws and the draws
}

func (implicitGammaOp) Name() string { return implicitGammaName }

// Unreplayable keeps graph.Capture from freezing the draws' levels.
func (implicitGammaOp) Unreplayable() string {
	return "holds its draws' CDF levels in the op, where a captured program would freeze them"
}

func (implicitGammaOp) Arity() int { return 1 }

// Forward solves in float64 for both dtypes; the levels and the draws
// are the op's own data, copied to α's device.
func (o implicitGammaOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	a, dev := in[0], in[0].Device()
	u := tensor.FromValues(tensor.Float64, o.u, a.Shape()...).To(dev)
	z0 := tensor.FromValues(tensor.Float64, o.z, a.Shape()...).To(dev)
	z := tensor.GammaPInv(a.Cast(tensor.Float64), u, z0)
	return tensor.CastTo(g.AllocUninit(a.DType(), a.Shape()...), z)
}

// slope returns dz/dα = −(∂P/∂α)/p at the op's input and output.
func (o implicitGammaOp) slope(out *graph.Node) *graph.Node {
	a := out.Inputs()[0]
	return graph.Neg(graph.Div(gammaPDeriv(1, 0, a, out), gammaPDeriv(0, 1, a, out)))
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

// gammaPDerivOp is ∂ⁿ⁺ᵐP(α, z)/∂αⁿ∂zᵐ elementwise, for α and z of one
// shape: (0, 1) is the density p(z; α) in closed form, higher z-orders and
// every α-order are five-point central differences (error O(h⁴)) of the
// member one order below, with steps of 10⁻³ of the argument, which keeps
// (1, 0) and (0, 2) to about 1e-12 relative and loses about three digits
// per further order. Its derivatives are the members one order up, so the
// family closes under differentiation.
type gammaPDerivOp struct{ n, m int }

func (gammaPDerivOp) Name() string { return gammaPDerivName }

func (gammaPDerivOp) Arity() int { return 2 }

func (o gammaPDerivOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	a, z := in[0], in[1]
	p := tensor.GammaPDeriv(a.Cast(tensor.Float64), z.Cast(tensor.Float64), o.n, o.m)
	return tensor.CastTo(g.AllocUninit(a.DType(), a.Shape()...), p)
}

func (o gammaPDerivOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	a, z := out.Inputs()[0], out.Inputs()[1]
	var da, dz *graph.Node
	if needs[0] {
		da = graph.Mul(ct, gammaPDeriv(o.n+1, o.m, a, z))
	}
	if needs[1] {
		dz = graph.Mul(ct, gammaPDeriv(o.n, o.m+1, a, z))
	}
	return []*graph.Node{da, dz}
}

func (o gammaPDerivOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	a, z := out.Inputs()[0], out.Inputs()[1]
	var sum *graph.Node
	if t[0] != nil {
		sum = graph.Mul(t[0], gammaPDeriv(o.n+1, o.m, a, z))
	}
	if t[1] != nil {
		dz := graph.Mul(t[1], gammaPDeriv(o.n, o.m+1, a, z))
		if sum == nil {
			return dz
		}
		sum = graph.Add(sum, dz)
	}
	return sum
}

// Batch: elementwise in α and z, with nothing per element in the op. The
// op takes operands of one shape, so one shared by every example is first
// broadcast along the other's batch axis.
func (o gammaPDerivOp) Batch(b *graph.Batching, in []*graph.Node, axes []int) (*graph.Node, int) {
	in, axes = slices.Clone(in), slices.Clone(axes)
	for i, j := range []int{1, 0} {
		if axes[i] == graph.NotBatched {
			in[i] = graph.BroadcastTo(graph.Unsqueeze(in[i], axes[j]), in[j].Shape()...)
			axes[i] = axes[j]
		}
	}
	return graph.BatchElementwise(b, o, in, axes)
}

// GammaP returns the regularised lower incomplete gamma function
// P(α, x) = γ(α, x)/Γ(α) elementwise (the CDF of Gamma(α, 1) at x), for
// α > 0 and x ≥ 0 of one shape: the power series below x = α + 1 and the
// continued fraction above (Press et al. 2007, Numerical Recipes, 3rd ed.,
// §6.2). It is differentiable in both arguments to any order: ∂P/∂x is
// the density, and derivatives in α are five-point differences, good to
// about 1e-12 relative at first order and about three digits fewer per
// further order. It panics with a *tensor.Error for operands of different
// shapes or dtypes.
func GammaP(alpha, x *graph.Node) *graph.Node {
	const op = "probabilistic.GammaP"
	if alpha == nil || x == nil || !slices.Equal(alpha.Shape(), x.Shape()) || alpha.DType() != x.DType() {
		tensor.Fail(op, "operands %s must have one shape and dtype", graph.Describe(alpha, x))
	}
	return gammaPDeriv(0, 0, alpha, x)
}

// gammaPDeriv returns the node ∂ⁿ⁺ᵐP/∂αⁿ∂zᵐ at (a, z), which have one shape.
func gammaPDeriv(n, m int, a, z *graph.Node) *graph.Node {
	return graph.Apply(gammaPDerivOp{n, m}, a, z)
}

// GammaQuantile returns the quantile function of Gamma(α, 1) at the
// levels u (one per element of alpha, in row-major order, each in (0, 1)):
// z with P(α, z) = u, differentiable in α by the implicit derivative
// −(∂P/∂α)/p(z), itself a graph (so differentiable again). With u drawn uniformly it is a
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
	z := make([]float64, len(a))
	for i, ai := range a {
		z[i] = sampleGamma(rng, ai)
	}
	u := tensor.GammaPDeriv(tensor.FromValues(tensor.Float64, a, len(a)), tensor.FromValues(tensor.Float64, z, len(z)), 0, 0).Values()
	return graph.Apply(implicitGammaOp{u: u, z: z}, alpha)
}

// RSample draws n reparameterised samples α-wise by implicit
// differentiation and divides by the rate: differentiable in both
// parameters.
func (d *Gamma) RSample(rng *tensor.RNG, n int) *graph.Node {
	shape := sampleShape("probabilistic.Gamma.RSample", n, d.batch, nil)
	z := implicitGamma(rng, graph.BroadcastTo(d.Concentration, shape...))
	return graph.Div(z, d.Rate)
}

// RSample draws X/(X + Y) from reparameterised gammas X ~ Gamma(a, 1) and
// Y ~ Gamma(b, 1): differentiable in a and b.
func (d *Beta) RSample(rng *tensor.RNG, n int) *graph.Node {
	shape := sampleShape("probabilistic.Beta.RSample", n, d.batch, nil)
	x := implicitGamma(rng, graph.BroadcastTo(d.Alpha, shape...))
	y := implicitGamma(rng, graph.BroadcastTo(d.Beta, shape...))
	return graph.Div(x, graph.Add(x, y))
}

// RSample draws normalised reparameterised gammas Gᵢ ~ Gamma(αᵢ, 1):
// differentiable in α.
func (d *Dirichlet) RSample(rng *tensor.RNG, n int) *graph.Node {
	shape := sampleShape("probabilistic.Dirichlet.RSample", n, d.batch, []int{d.k})
	g := implicitGamma(rng, graph.BroadcastTo(d.Concentration, shape...))
	return graph.Div(g, graph.Sum(g, []int{-1}, true))
}
