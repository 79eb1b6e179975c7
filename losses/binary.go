package losses

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
)

// logFloor is where BCE clamps its logarithms, as PyTorch does, so a
// probability of exactly 0 or 1 costs 100 instead of infinity.
const logFloor = -100

// BCE returns the binary cross-entropy of probabilities probs against
// targets in [0, 1], reduced by red (torch.nn.BCELoss):
//
//	−(target·log p + (1 − target)·log(1 − p)),  each log clamped at −100
//
// Prefer BCEWithLogits: it takes the logits and neither saturates nor
// needs the clamp. At p = 0 or 1 the clamped term has zero derivative (its
// logarithm is evaluated at a safe point), so gradients stay finite. probs
// and target must have the same shape and dtype; their values are not
// checked.
func BCE(probs, target *graph.Node, red Reduction) *graph.Node {
	const op = "losses.BCE"
	checkSameShape(op, probs, target)
	checkReduction(op, red)
	g := probs.Graph()
	dt := probs.DType()
	zero, one := g.Scalar(dt, 0), g.Scalar(dt, 1)
	// log p where p > 0, else the floor; the Where on the argument keeps
	// Log's derivative finite on the branch that is not taken.
	pos := graph.Greater(probs, zero)
	logP := graph.Where(pos, graph.Log(graph.Where(pos, probs, one)), g.Scalar(dt, logFloor))
	// log(1 − p) = log1p(−p) where p < 1.
	below := graph.Less(probs, one)
	log1mP := graph.Where(below, graph.Log1p(graph.Neg(graph.Where(below, probs, zero))), g.Scalar(dt, logFloor))
	logP = graph.Clamp(logP, logFloor, math.Inf(1))
	log1mP = graph.Clamp(log1mP, logFloor, math.Inf(1))
	// −(t·log p + (1 − t)·log(1 − p)) = −(log(1 − p) + t·(log p − log(1 − p)))
	l := graph.Add(log1mP, graph.Mul(target, graph.Sub(logP, log1mP)))
	return reduce(graph.Neg(l), red)
}

// BCEWithLogits returns the binary cross-entropy of sigmoid(logits) against
// targets in [0, 1], reduced by red (torch.nn.BCEWithLogitsLoss without
// pos_weight), in the stable form
//
//	softplus(x) − x·t = max(x, 0) − x·t + log(1 + e^−|x|)
//
// which equals −(t·log σ(x) + (1 − t)·log(1 − σ(x))) but never takes the
// logarithm of a saturated sigmoid: it is finite and accurate for any
// finite logit. logits and target must have the same shape and dtype.
func BCEWithLogits(logits, target *graph.Node, red Reduction) *graph.Node {
	const op = "losses.BCEWithLogits"
	checkSameShape(op, logits, target)
	checkReduction(op, red)
	return bceWithLogits(logits, target, red)
}

// bceWithLogits returns softplus(x) − x·t reduced by red; the Sum is one
// fused op (bceSumOp) that makes no full-size intermediates.
func bceWithLogits(x, t *graph.Node, red Reduction) *graph.Node {
	if red == Sum {
		return graph.Apply(bceSumOp{}, x, t)
	}
	return reduce(graph.Sub(graph.Softplus(x), graph.Mul(x, t)), red)
}

// BernoulliNLL returns the negative log-likelihood −log Bernoulli(t | σ(x))
// of targets t under Bernoulli distributions with logits x, reduced by
// red. It is the same function as BCEWithLogits:
//
//	−log p(t) = −(t·log σ(x) + (1 − t)·log(1 − σ(x))) = softplus(x) − x·t
//
// named for its use as a likelihood (e.g. the decoder term of a VAE on
// binarised images). Targets in (0, 1) give the cross-entropy, which is
// not a normalised likelihood there.
func BernoulliNLL(logits, target *graph.Node, red Reduction) *graph.Node {
	const op = "losses.BernoulliNLL"
	checkSameShape(op, logits, target)
	checkReduction(op, red)
	return bceWithLogits(logits, target, red)
}

// Hinge returns the binary hinge loss of scores s against labels y ∈ {−1,
// +1}, reduced by red:
//
//	max(0, 1 − y·s)
//
// the loss of linear support vector machines. The derivative at the kink
// y·s = 1 is taken as 0. The labels' values are not checked; other values
// scale the margin. scores and target must have the same shape and dtype.
func Hinge(scores, target *graph.Node, red Reduction) *graph.Node {
	const op = "losses.Hinge"
	checkSameShape(op, scores, target)
	checkReduction(op, red)
	return reduce(graph.Relu(graph.AddScalar(graph.Neg(graph.Mul(target, scores)), 1)), red)
}
