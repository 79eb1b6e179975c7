package losses

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// KLDiagGaussian returns KL(N(μ, diag σ²) ‖ N(0, I)) for each row, with
// σ² = exp(logvar), reduced by red over the rows:
//
//	½·Σⱼ (μⱼ² + σⱼ² − log σⱼ² − 1)
//
// the sum running over the last axis, so for mu (N, D) the unreduced result
// has shape (N) and Mean averages over the batch (the VAE convention: sum
// over latent dimensions, mean over samples). mu and logvar must have the
// same shape and dtype, with at least one axis.
func KLDiagGaussian(mu, logvar *graph.Node, red Reduction) *graph.Node {
	const op = "losses.KLDiagGaussian"
	checkSameShape(op, mu, logvar)
	checkReduction(op, red)
	if mu.Dim() == 0 {
		tensor.Fail(op, "operands %s are 0-d: want at least one axis to sum over", graph.Describe(mu, logvar))
	}
	t := graph.Sub(graph.Add(graph.Square(mu), graph.Exp(logvar)), logvar)
	kl := graph.MulScalar(graph.AddScalar(t, -1), 0.5)
	return reduce(graph.Sum(kl, []int{-1}, false), red)
}

// KLDiagGaussians returns KL(N(μ₁, diag σ₁²) ‖ N(μ₂, diag σ₂²)) for each
// row, with σᵢ² = exp(logvarᵢ), reduced by red over the rows:
//
//	½·Σⱼ (log σ₂ⱼ² − log σ₁ⱼ² + (σ₁ⱼ² + (μ₁ⱼ − μ₂ⱼ)²)/σ₂ⱼ² − 1)
//
// computed with exp(logvar₁ − logvar₂) and exp(−logvar₂), so no variance
// is formed and divided. The four operands broadcast (a prior (D) against
// a batch (N, D)); the sum runs over the last axis of the broadcast shape,
// which must have at least one axis.
func KLDiagGaussians(mu1, logvar1, mu2, logvar2 *graph.Node, red Reduction) *graph.Node {
	const op = "losses.KLDiagGaussians"
	checkNodes(op, mu1, logvar1, mu2, logvar2)
	checkReduction(op, red)
	shape := tensor.BroadcastShapes(op, mu1.Shape(), logvar1.Shape(), mu2.Shape(), logvar2.Shape())
	if len(shape) == 0 {
		tensor.Fail(op, "operands %s are 0-d: want at least one axis to sum over", graph.Describe(mu1, logvar1, mu2, logvar2))
	}
	dlv := graph.Sub(logvar2, logvar1)
	ratio := graph.Exp(graph.Neg(dlv))                                                // σ₁²/σ₂²
	dm := graph.Mul(graph.Square(graph.Sub(mu1, mu2)), graph.Exp(graph.Neg(logvar2))) // (μ₁−μ₂)²/σ₂²
	t := graph.AddScalar(graph.Add(graph.Add(dlv, ratio), dm), -1)
	t = graph.BroadcastTo(graph.MulScalar(t, 0.5), shape...)
	return reduce(graph.Sum(t, []int{-1}, false), red)
}
