package logreg

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// logNdtrOp is log Φ(x), the log of the standard normal CDF, elementwise.
// The probit likelihood needs it for large negative margins, where
// log(½(1 + erf(x/√2))) computed from graph.Erf rounds to log 0. Its
// kernels (CPU and GPU) are tensor.LogNdtr's.
type logNdtrOp struct{}

const (
	logNdtrName  = "logreg.log_ndtr"
	halfLog2Pi   = 0.9189385332046727 // ½·log 2π
	invSqrtTwo64 = 1 / math.Sqrt2
)

func init() { graph.Register(logNdtrOp{}) }

func (logNdtrOp) Name() string { return logNdtrName }

func (logNdtrOp) Arity() int { return 1 }

func (logNdtrOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.LogNdtrTo(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0])
}

// The derivative is φ(x)/Φ(x) = exp(log φ(x) − log Φ(x)), formed in log
// space so it stays finite (≈ −x) far in the lower tail. It uses the
// op's own output, so second derivatives come from differentiating it again.
func (logNdtrOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	return []*graph.Node{graph.Mul(ct, millsInv(out))}
}

func (logNdtrOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	if t[0] == nil {
		return nil
	}
	return graph.Mul(t[0], millsInv(out))
}

// Batch is elementwise (vmap).
func (o logNdtrOp) Batch(b *graph.Batching, in []*graph.Node, axes []int) (*graph.Node, int) {
	return graph.BatchElementwise(b, o, in, axes)
}

// millsInv returns φ(x)/Φ(x) for the node out = log Φ(x).
func millsInv(out *graph.Node) *graph.Node {
	x := out.Inputs()[0]
	logPdf := graph.AddScalar(graph.MulScalar(graph.Square(x), -0.5), -halfLog2Pi)
	return graph.Exp(graph.Sub(logPdf, out))
}

// LogNdtr returns log Φ(x), the logarithm of the standard normal cumulative
// distribution function, elementwise, accurate in both tails (SciPy's
// log_ndtr). It is differentiable to any order.
func LogNdtr(x *graph.Node) *graph.Node { return graph.Apply(logNdtrOp{}, x) }

// logNdtr is log Φ(x) in float64 for one sample's probabilities (probs):
// tensor.LogNdtr's float64 kernel, erfc in the body, log1p in the upper
// tail, and the asymptotic series of the Mills ratio below −37, where erfc
// underflows.
func logNdtr(x float64) float64 {
	switch {
	case x > 5:
		return math.Log1p(-0.5 * math.Erfc(x*invSqrtTwo64))
	case x > -37:
		return math.Log(0.5 * math.Erfc(-x*invSqrtTwo64))
	default:
		// Φ(x) = φ(x)/(−x)·(1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸ − 945/x¹⁰ + …).
		z := 1 / (x * x)
		s := 1 + z*(-1+z*(3+z*(-15+z*(105+z*(-945)))))
		return -0.5*x*x - math.Log(-x) - halfLog2Pi + math.Log(s)
	}
}
