package losses

import (
	"math"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// MSE returns the squared error (pred − target)², reduced by red
// (torch.nn.MSELoss). pred and target must have the same shape and dtype.
func MSE(pred, target *graph.Node, red Reduction) *graph.Node {
	const op = "losses.MSE"
	checkSameShape(op, pred, target)
	checkReduction(op, red)
	return reduce(graph.Square(graph.Sub(pred, target)), red)
}

// L1 returns the absolute error |pred − target|, reduced by red
// (torch.nn.L1Loss). Its derivative at pred = target is taken as 0.
// pred and target must have the same shape and dtype.
func L1(pred, target *graph.Node, red Reduction) *graph.Node {
	const op = "losses.L1"
	checkSameShape(op, pred, target)
	checkReduction(op, red)
	return reduce(graph.Abs(graph.Sub(pred, target)), red)
}

// Huber returns the Huber loss of d = pred − target, reduced by red
// (torch.nn.HuberLoss):
//
//	½d²            if |d| < delta
//	delta·(|d| − ½delta)  otherwise
//
// quadratic near zero and linear in the tails, so outliers pull with a
// bounded gradient ±delta. It is computed as ½·clamp(d, ±delta)² +
// delta·max(|d| − delta, 0): no cancellation for large |d|, and the second
// derivative stays 1 at d = 0 (a form built on |d| would lose it to the
// kink of |d| there). It panics unless 0 < delta < ∞.
func Huber(pred, target *graph.Node, delta float64, red Reduction) *graph.Node {
	const op = "losses.Huber"
	checkSameShape(op, pred, target)
	checkReduction(op, red)
	if !(delta > 0) || math.IsInf(delta, 1) {
		tensor.Fail(op, "delta %v must be positive and finite", delta)
	}
	d := graph.Sub(pred, target)
	quad := graph.MulScalar(graph.Square(graph.Clamp(d, -delta, delta)), 0.5)
	lin := graph.MulScalar(graph.Relu(graph.AddScalar(graph.Abs(d), -delta)), delta)
	return reduce(graph.Add(quad, lin), red)
}

// GaussianNLL returns the negative log-likelihood of target under
// N(mean, variance), reduced by red (torch.nn.GaussianNLLLoss):
//
//	½·(log v + (target − mean)²/v)  [+ ½·log 2π if full],  v = max(variance, eps)
//
// mean and target must have the same shape. variance has that shape too,
// or that shape without its last axis (one variance per row), or with a last
// axis of size 1 (broadcast over it), as in PyTorch. As in PyTorch the clamp
// to eps guards the logarithm only: the gradient passes through it
// unchanged (straight-through), so a variance driven below eps can recover.
// Unlike PyTorch, negative variances are not rejected (they are clamped
// too). It panics unless eps ≥ 0.
func GaussianNLL(mean, variance, target *graph.Node, full bool, eps float64, red Reduction) *graph.Node {
	const op = "losses.GaussianNLL"
	checkSameShape(op, mean, target)
	checkNodes(op, mean, variance)
	checkReduction(op, red)
	if !(eps >= 0) || math.IsInf(eps, 1) {
		tensor.Fail(op, "eps %v must be non-negative and finite", eps)
	}
	ms, vs := mean.Shape(), variance.Shape()
	switch {
	case slices.Equal(vs, ms):
	case len(ms) > 0 && slices.Equal(vs, ms[:len(ms)-1]):
		variance = graph.Unsqueeze(variance, -1)
	case len(ms) > 0 && len(vs) == len(ms) && vs[len(vs)-1] == 1 && slices.Equal(vs[:len(vs)-1], ms[:len(ms)-1]):
	default:
		tensor.Fail(op, "variance %s does not fit mean %s: want the same shape, the shape without the last axis, or a last axis of size 1",
			graph.Describe(variance), graph.Describe(mean))
	}
	// v = variance + stop(max(variance, eps) − variance): the value of the
	// clamp with the derivative of the identity.
	v := graph.Add(variance, graph.StopGradient(graph.Sub(graph.Clamp(variance, eps, math.Inf(1)), variance)))
	sq := graph.Square(graph.Sub(target, mean))
	l := graph.Add(graph.Log(v), graph.Div(sq, v))
	if full {
		l = graph.AddScalar(l, math.Log(2*math.Pi))
	}
	return reduce(graph.MulScalar(l, 0.5), red)
}
