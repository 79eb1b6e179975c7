package gan

import (
	"slices"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// GradientPenalty returns WGAN-GP's penalty (Gulrajani et al. 2017, eq. 3)
//
//	λ · mean_i (‖∇ₓ D(x̂_i)‖₂ − 1)²,   x̂_i = ε_i·real_i + (1 − ε_i)·fake_i,
//
// a scalar node. critic maps a batch (N, …) to one score per sample, (N)
// or (N, 1); real and fake are batches of the same shape and eps holds the
// N interpolation weights (drawn from U(0, 1) afresh each step, e.g. with
// rng.Uniform(dt, 0, 1, n)).
//
// The input gradient ∇ₓ D is built by autodiff.Grad as ordinary graph
// nodes, so differentiating the returned penalty with respect to the
// critic's parameters (nn.Gradients) differentiates through that gradient:
// the second-order term that makes the penalty train the critic. real and
// fake are treated as constants (the penalty is the critic's alone, as in
// the paper), so a fake batch straight from the generator needs no
// StopGradient. The critic must score each sample on its own (no batch
// normalisation): the gradient of Σᵢ D(x̂_i) with respect to x̂_i is then
// ∇D(x̂_i). A tiny constant (1e-12) inside the square root keeps the
// norm's derivative finite at a zero gradient.
//
// GradientPenalty panics with a *tensor.Error if the shapes or dtypes do
// not match or the critic does not return one score per sample.
func GradientPenalty(critic func(*graph.Node) *graph.Node, real, fake *graph.Node, eps *tensor.Tensor, lambda float64) *graph.Node {
	const op = "gan.GradientPenalty"
	if critic == nil || real == nil || fake == nil || eps == nil {
		tensor.Fail(op, "critic, real, fake and eps are required")
	}
	rs := real.Shape()
	if len(rs) < 2 || !slices.Equal(rs, fake.Shape()) || real.DType() != fake.DType() {
		tensor.Fail(op, "real %s %v and fake %s %v must be batches (N, …) of one shape and dtype",
			tensor.FormatShape(rs), real.DType(), tensor.FormatShape(fake.Shape()), fake.DType())
	}
	n := rs[0]
	if eps.Size() != n || eps.DType() != real.DType() {
		tensor.Fail(op, "eps %s %v must hold %d interpolation weights in %v", tensor.FormatShape(eps.Shape()), eps.DType(), n, real.DType())
	}
	g := real.Graph()
	bshape := make([]int, len(rs)) // (N, 1, …, 1) broadcasts over each sample
	for i := range bshape {
		bshape[i] = 1
	}
	bshape[0] = n
	e := graph.Reshape(g.Const(eps), bshape...)
	r, f := graph.StopGradient(real), graph.StopGradient(fake)
	xhat := graph.Add(f, graph.Mul(e, graph.Sub(r, f)))
	scores := critic(xhat)
	if scores == nil || scores.Size() != n {
		got := "nil"
		if scores != nil {
			got = tensor.FormatShape(scores.Shape())
		}
		tensor.Fail(op, "the critic returned %s for a batch of %d: want one score per sample", got, n)
	}
	grad := autodiff.Grad(graph.Sum(scores, nil, false), xhat)[0]
	sq := graph.Sum(graph.Square(graph.Reshape(grad, n, -1)), []int{1}, false)
	norm := graph.Sqrt(graph.AddScalar(sq, 1e-12))
	return graph.MulScalar(graph.Mean(graph.Square(graph.AddScalar(norm, -1)), nil, false), lambda)
}

// CriticLoss is the Wasserstein critic's loss mean D(fake) − mean D(real)
// (to be minimised), from the critic's scores on a real and a fake batch.
func CriticLoss(realScores, fakeScores *graph.Node) *graph.Node {
	checkScores("gan.CriticLoss", realScores, fakeScores)
	return graph.Sub(graph.Mean(fakeScores, nil, false), graph.Mean(realScores, nil, false))
}

// WassersteinGeneratorLoss is the Wasserstein generator's loss
// −mean D(G(z)), from the critic's scores on a fake batch.
func WassersteinGeneratorLoss(fakeScores *graph.Node) *graph.Node {
	checkScores("gan.WassersteinGeneratorLoss", fakeScores)
	return graph.Neg(graph.Mean(fakeScores, nil, false))
}

// DiscriminatorLoss is the standard GAN discriminator's binary cross
// entropy, mean over real samples of −log σ(l) plus mean over fake samples
// of −log(1 − σ(l)), from the logits l on a real and a fake batch.
func DiscriminatorLoss(realLogits, fakeLogits *graph.Node) *graph.Node {
	checkScores("gan.DiscriminatorLoss", realLogits, fakeLogits)
	return graph.Add(
		losses.BCEWithLogits(realLogits, onesLike(realLogits), losses.Mean),
		losses.BCEWithLogits(fakeLogits, zerosLike(fakeLogits), losses.Mean))
}

// GeneratorLoss is the non-saturating generator loss of the standard GAN,
// mean −log σ(D(G(z))) (Goodfellow et al. 2014, §3): the same minimax game
// with gradients that do not vanish while the discriminator wins.
func GeneratorLoss(fakeLogits *graph.Node) *graph.Node {
	checkScores("gan.GeneratorLoss", fakeLogits)
	return losses.BCEWithLogits(fakeLogits, onesLike(fakeLogits), losses.Mean)
}

func onesLike(x *graph.Node) *graph.Node {
	return x.Graph().Const(tensor.Ones(x.DType(), x.Shape()...))
}

func zerosLike(x *graph.Node) *graph.Node {
	return x.Graph().Const(tensor.Zeros(x.DType(), x.Shape()...))
}

func checkScores(op string, ns ...*graph.Node) {
	for _, n := range ns {
		if n == nil {
			tensor.Fail(op, "nil scores")
		}
	}
	if len(ns) == 2 && ns[0].DType() != ns[1].DType() {
		tensor.Fail(op, "real scores %v and fake scores %v have different dtypes", ns[0].DType(), ns[1].DType())
	}
}
