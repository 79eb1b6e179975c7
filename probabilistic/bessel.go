package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// The modified Bessel function of the first kind I₀ enters the von Mises
// normaliser. Two ops carry it: log I₀(x), whose derivative is the ratio
// R(x) = I₁(x)/I₀(x), and R itself, whose derivative 1 − R/x − R² (½ at
// 0) is again in terms of R, so derivatives of any order exist. Both are
// computed in float64: by their power series for |x| ≤ 30 and by Hankel's
// asymptotic expansion beyond, where e^x cancels in R and is added as x in
// log I₀ (so nothing overflows); tensor.LogBesselI0 and
// tensor.BesselI1OverI0 are the kernels, on the CPU and the GPU.

const (
	logI0Name = "probabilistic.log_i0"
	i1OverI0  = "probabilistic.i1_over_i0"
)

func init() {
	graph.Register(logI0Op{})
	graph.Register(besselRatioOp{})
}

type logI0Op struct{}

func (logI0Op) Name() string { return logI0Name }

func (logI0Op) Arity() int { return 1 }

func (logI0Op) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.LogBesselI0To(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0])
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
	return tensor.BesselI1OverI0To(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0])
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
