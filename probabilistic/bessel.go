package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// The modified Bessel function of the first kind I₀ enters the von Mises
// normaliser. Two ops carry it: log I₀(x), whose derivative is the ratio
// R(x) = I₁(x)/I₀(x), and R itself, whose derivative 1 − R/x − R² (½ at
// 0) is again in terms of R, so derivatives of any order exist. Both are
// computed in float64: by their power series for |x| ≤ 30 and by Hankel's
// asymptotic expansion beyond, where e^x cancels in R and is added as x in
// log I₀ (so nothing overflows).

const (
	logI0Name  = "probabilistic.log_i0"
	i1OverI0   = "probabilistic.i1_over_i0"
	besselEdge = 30.0
)

func init() {
	graph.Register(logI0Op{})
	graph.Register(besselRatioOp{})
}

// besselSeries returns I₀(x) − 1 and I₁(x) for |x| ≤ 30 by their power
// series Σ_{k≥1} (x²/4)ᵏ/(k!)² and (x/2)·Σ (x²/4)ᵏ/(k!(k+1)!); I₀ − 1
// keeps log I₀ = log1p(I₀ − 1) accurate for small x.
func besselSeries(x float64) (i0m1, i1 float64) {
	q := x * x / 4
	t0, t1 := 1.0, 1.0
	i1 = 1
	for k := 1; k < 200; k++ {
		fk := float64(k)
		t0 *= q / (fk * fk)
		t1 *= q / (fk * (fk + 1))
		i0m1 += t0
		i1 += t1
		if t0 < 1e-17*(1+i0m1) && t1 < 1e-17*i1 {
			break
		}
	}
	return i0m1, x / 2 * i1
}

// hankel returns the sums S₀ and S₁ of the asymptotic expansions
// Iᵥ(x) ≈ eˣ/√(2πx)·Σₖ (−1)ᵏ aₖ(ν)/xᵏ, aₖ(ν) = Π_{j≤k}(4ν² − (2j−1)²)/(k!·8ᵏ),
// for ν = 0 and 1 and x > 30, stopping at the smallest term.
func hankel(x float64) (s0, s1 float64) {
	t0, t1 := 1.0, 1.0
	s0, s1 = 1, 1
	for k := 1; k < 40; k++ {
		odd := float64(2*k-1) * float64(2*k-1)
		n0 := -t0 * (0 - odd) / (float64(k) * 8 * x)
		n1 := -t1 * (4 - odd) / (float64(k) * 8 * x)
		if math.Abs(n0) > math.Abs(t0) {
			break // the series has started to diverge
		}
		t0, t1 = n0, n1
		s0 += t0
		s1 += t1
		if math.Abs(t0) < 1e-17 && math.Abs(t1) < 1e-17 {
			break
		}
	}
	return s0, s1
}

// logI0 returns log I₀(x).
func logI0(x float64) float64 {
	x = math.Abs(x)
	if x <= besselEdge {
		i0m1, _ := besselSeries(x)
		return math.Log1p(i0m1)
	}
	s0, _ := hankel(x)
	return x - 0.5*math.Log(2*math.Pi*x) + math.Log(s0)
}

// besselRatio returns I₁(x)/I₀(x), an odd function.
func besselRatio(x float64) float64 {
	ax := math.Abs(x)
	var r float64
	if ax <= besselEdge {
		i0m1, i1 := besselSeries(ax)
		r = i1 / (1 + i0m1)
	} else {
		s0, s1 := hankel(ax)
		r = s1 / s0
	}
	return math.Copysign(r, x)
}

// applyScalar fills a tensor like in[0] with f of each element.
func applyScalar(g *graph.Graph, in *tensor.Tensor, f func(float64) float64) *tensor.Tensor {
	x := in.Contiguous()
	out := g.AllocUninit(x.DType(), x.Shape()...)
	if x.DType() == tensor.Float64 {
		dst := out.Float64s()
		for i, v := range x.Float64s() {
			dst[i] = f(v)
		}
		return out
	}
	dst := out.Float32s()
	for i, v := range x.Float32s() {
		dst[i] = float32(f(float64(v)))
	}
	return out
}

type logI0Op struct{}

func (logI0Op) Name() string { return logI0Name }

func (logI0Op) Arity() int { return 1 }

func (logI0Op) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	return applyScalar(g, in[0], logI0)
}

func (logI0Op) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	return []*graph.Node{graph.Mul(ct, BesselI1OverI0(out.Inputs()[0]))}
}

func (logI0Op) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	if t[0] == nil {
		return nil
	}
	return graph.Mul(t[0], BesselI1OverI0(out.Inputs()[0]))
}

// Batch is elementwise (vmap).
func (o logI0Op) Batch(b *graph.Batching, in []*graph.Node, axes []int) (*graph.Node, int) {
	return graph.BatchElementwise(b, o, in, axes)
}

type besselRatioOp struct{}

func (besselRatioOp) Name() string { return i1OverI0 }

func (besselRatioOp) Arity() int { return 1 }

func (besselRatioOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	return applyScalar(g, in[0], besselRatio)
}

// ratioSlope returns R'(x) = 1 − R/x − R², with its limit ½ at x = 0.
func ratioSlope(out *graph.Node) *graph.Node {
	x := out.Inputs()[0]
	g := x.Graph()
	zero := graph.Equal(x, g.Scalar(x.DType(), 0))
	safe := graph.Where(zero, g.Scalar(x.DType(), 1), x)
	slope := graph.Sub(graph.Sub(g.Scalar(x.DType(), 1), graph.Div(out, safe)), graph.Square(out))
	return graph.Where(zero, g.Scalar(x.DType(), 0.5), slope)
}

func (besselRatioOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	return []*graph.Node{graph.Mul(ct, ratioSlope(out))}
}

func (besselRatioOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	if t[0] == nil {
		return nil
	}
	return graph.Mul(t[0], ratioSlope(out))
}

// Batch is elementwise (vmap).
func (o besselRatioOp) Batch(b *graph.Batching, in []*graph.Node, axes []int) (*graph.Node, int) {
	return graph.BatchElementwise(b, o, in, axes)
}

// LogBesselI0 returns log I₀(x) elementwise, the log of the modified
// Bessel function of the first kind of order 0, finite for every finite x
// (I₀ itself overflows beyond x ≈ 713). It is differentiable to any order:
// its derivative is BesselI1OverI0.
func LogBesselI0(x *graph.Node) *graph.Node { return graph.Apply(logI0Op{}, x) }

// BesselI1OverI0 returns I₁(x)/I₀(x) elementwise, the derivative of
// log I₀ and the mean resultant length of a von Mises distribution with
// concentration x. It is differentiable to any order.
func BesselI1OverI0(x *graph.Node) *graph.Node { return graph.Apply(besselRatioOp{}, x) }
