package vae

import (
	"math"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// HVAEOptions describes a two-level hierarchical VAE (NewHVAE).
type HVAEOptions struct {
	Input   int   // data dimension, e.g. 784
	Hidden  []int // bottom-up hidden sizes x → d₁; the decoder z₁ → x uses them reversed
	Latent1 int   // dimension of z₁, the level next to the data
	// Hidden2 are the hidden sizes d₁ → d₂ of the second bottom-up stage;
	// the top-down prior network z₂ → z₁ uses them reversed.
	Hidden2    []int
	Latent2    int          // dimension of z₂, the top level
	Likelihood Likelihood   // Bernoulli (default) or Gaussian
	DType      tensor.DType // Float32 (default) or Float64
	Beta       float64      // weight of both KL terms in Loss; 0 means 1 (the ELBO)
}

// HVAE is a two-level hierarchical VAE with the generative model
//
//	p(z₂) p(z₁|z₂) p(x|z₁),   p(z₂) = N(0, I),
//	p(z₁|z₂) = N(μₚ(z₂), diag σₚ²(z₂)),   p(x|z₁) Bernoulli or Gaussian,
//
// and the top-down (ladder) inference model of Sønderby et al. (2016),
// "Ladder variational autoencoders", the top-down inference model that
// shares its path with the generative one:
//
//	q(z₂|x) q(z₁|z₂, x),   q(z₂|x) = N(μ₂(x), diag σ₂²(x)),
//	q(z₁|z₂, x) = N(μ₁, σ₁²),  σ₁⁻² = σ̂⁻² + σₚ⁻²,  μ₁ = σ₁²·(μ̂/σ̂² + μₚ/σₚ²),
//
// where (μ̂, σ̂²) is a bottom-up Gaussian estimate of z₁ from x and (μₚ,
// σₚ²) the top-down prior p(z₁|z₂): the posterior of z₁ merges the
// evidence of x with the prior by precision weighting, so the encoder
// shares the generative path. The bottom-up pass is deterministic: x →
// d₁ (Hidden) gives (μ̂, log σ̂²), d₁ → d₂ (Hidden2) gives q(z₂|x).
//
// We chose this form over the bottom-up q(z₁|x) q(z₂|z₁) because every
// KL term of its ELBO is between two diagonal Gaussians and so analytic
// given the sample of z₂:
//
//	ELBO = E_q[log p(x|z₁)] − KL(q(z₂|x) ‖ p(z₂)) − E_q(z₂|x)[KL(q(z₁|z₂,x) ‖ p(z₁|z₂))],
//
// estimated with one reparameterised sample z₂ = μ₂ + σ₂·ε₂, z₁ = μ₁ + σ₁·ε₁
// (the bottom-up form leaves a Monte Carlo log-ratio for the z₁ level).
// It is also exact where it can be: when x depends linearly on z₁ with
// Gaussian noise and the latents are one-dimensional, the true posterior
// p(z₂|x) p(z₁|z₂, x) has exactly this form, and the ELBO equals log p(x).
type HVAE struct {
	Up1     *Encoder // x → d₁ → (μ̂, log σ̂²), the bottom-up estimate of z₁
	Up2     *Encoder // d₁ → d₂ → (μ₂, log σ₂²) of q(z₂|x)
	Prior   *Encoder // z₂ → (μₚ, log σₚ²) of p(z₁|z₂)
	Decoder *Decoder // z₁ → p(x|z₁)
	Input   int
	Latent1 int
	Latent2 int
	Beta    float64 // the KL weight of Loss; 1 for the ELBO
}

// NewHVAE returns a hierarchical VAE with PyTorch's default Linear
// initialisation drawn from rng. It panics with a *tensor.Error if a size
// is not positive or Beta is negative or infinite.
func NewHVAE(rng *tensor.RNG, cfg HVAEOptions) *HVAE {
	const op = "vae.NewHVAE"
	if cfg.Input <= 0 || cfg.Latent1 <= 0 || cfg.Latent2 <= 0 {
		tensor.Fail(op, "Input = %d, Latent1 = %d and Latent2 = %d must be positive", cfg.Input, cfg.Latent1, cfg.Latent2)
	}
	for _, h := range append(slices.Clone(cfg.Hidden), cfg.Hidden2...) {
		if h <= 0 {
			tensor.Fail(op, "hidden sizes %v and %v must be positive", cfg.Hidden, cfg.Hidden2)
		}
	}
	if cfg.Beta == 0 {
		cfg.Beta = 1
	}
	if !(cfg.Beta > 0) || math.IsInf(cfg.Beta, 0) {
		tensor.Fail(op, "Beta = %g must be positive and finite", cfg.Beta)
	}
	if cfg.Likelihood != Bernoulli && cfg.Likelihood != Gaussian {
		tensor.Fail(op, "unknown likelihood %d", cfg.Likelihood)
	}
	dt := cfg.DType
	if dt != tensor.Float64 {
		dt = tensor.Float32
	}
	d1 := cfg.Input
	if len(cfg.Hidden) > 0 {
		d1 = cfg.Hidden[len(cfg.Hidden)-1]
	}
	rev := func(h []int) []int { r := slices.Clone(h); slices.Reverse(r); return r }
	return &HVAE{
		Up1:     NewEncoder(rng, cfg.Input, cfg.Hidden, cfg.Latent1, dt),
		Up2:     NewEncoder(rng, d1, cfg.Hidden2, cfg.Latent2, dt),
		Prior:   NewEncoder(rng, cfg.Latent2, rev(cfg.Hidden2), cfg.Latent1, dt),
		Decoder: newDecoder(rng, cfg.Latent1, rev(cfg.Hidden), cfg.Input, dt, cfg.Likelihood),
		Input:   cfg.Input, Latent1: cfg.Latent1, Latent2: cfg.Latent2, Beta: cfg.Beta,
	}
}

// Params lists the parameters under "up1.", "up2.", "prior." and
// "decoder.".
func (m *HVAE) Params() []nn.NamedParam {
	ps := nn.Prefix("up1", m.Up1.Params())
	ps = append(ps, nn.Prefix("up2", m.Up2.Params())...)
	ps = append(ps, nn.Prefix("prior", m.Prior.Params())...)
	return append(ps, nn.Prefix("decoder", m.Decoder.Params())...)
}

// SetTraining does nothing: the layers behave the same in both modes.
func (m *HVAE) SetTraining(bool) {}

// HPosterior is the inference network's output for a batch: the
// parameters of q(z₂|x), the sample z₂, the top-down prior p(z₁|z₂) at
// that sample and the merged q(z₁|z₂, x). Every field is (…, latent).
type HPosterior struct {
	Mu2, LogVar2           *graph.Node // q(z₂|x)
	Z2                     *graph.Node // μ₂ + σ₂·ε₂
	PriorMu1, PriorLogVar1 *graph.Node // p(z₁|z₂)
	Mu1, LogVar1           *graph.Node // q(z₁|z₂, x)
}

// Infer runs the inference network on x (N, Input) with the noise ε₂
// (N, Latent2) of z₂: pass zeros to use the mean of q(z₂|x). It panics
// with a *tensor.Error if the shapes do not fit.
func (m *HVAE) Infer(x, eps2 *graph.Node) HPosterior {
	m.check("vae.HVAE.Infer", x, nil, eps2)
	return m.infer(x, eps2)
}

func (m *HVAE) infer(x, eps2 *graph.Node) HPosterior {
	return m.topDown(m.bottomUp(x), eps2)
}

// bottomUp is the deterministic pass x → d₁ → d₂: the bottom-up estimate
// (μ̂, log σ̂²) of z₁ and q(z₂|x).
type bottomUp struct{ muHat, lvHat, mu2, lv2 *graph.Node }

func (m *HVAE) bottomUp(x *graph.Node) bottomUp {
	d1 := mlp(m.Up1.Hidden, x)
	var b bottomUp
	b.muHat, b.lvHat = m.Up1.Head.MeanLayer.Forward(d1), m.Up1.Head.ScaleLayer.Forward(d1)
	b.mu2, b.lv2 = m.Up2.forward(d1)
	return b
}

// topDown samples z₂ with eps2 and merges the prior p(z₁|z₂) with the
// bottom-up estimate.
func (m *HVAE) topDown(b bottomUp, eps2 *graph.Node) HPosterior {
	q := HPosterior{Mu2: b.mu2, LogVar2: b.lv2}
	q.Z2 = Sample(q.Mu2, q.LogVar2, eps2)
	q.PriorMu1, q.PriorLogVar1 = m.Prior.forward(q.Z2)
	// Precision weighting in log-variances: the weight of the bottom-up
	// mean is σ̂⁻²/(σ̂⁻² + σₚ⁻²) = sigmoid(log σₚ² − log σ̂²), and
	// log σ₁² = −log(σ̂⁻² + σₚ⁻²) = log σ̂² − softplus(log σ̂² − log σₚ²);
	// neither forms a precision, so neither overflows.
	w := graph.Sigmoid(graph.Sub(q.PriorLogVar1, b.lvHat))
	q.Mu1 = graph.Add(q.PriorMu1, graph.Mul(w, graph.Sub(b.muHat, q.PriorMu1)))
	q.LogVar1 = graph.Sub(b.lvHat, graph.Softplus(graph.Sub(b.lvHat, q.PriorLogVar1)))
	return q
}

// check validates x (N, Input) and the noise (N, Latent1), (N, Latent2)
// (eps1 may be nil) for op.
func (m *HVAE) check(op string, x, eps1, eps2 *graph.Node) {
	if x.Dim() != 2 || x.Shape()[1] != m.Input {
		tensor.Fail(op, "x has shape %v, want (N, %d)", x.Shape(), m.Input)
	}
	n := x.Shape()[0]
	want := func(name string, e *graph.Node, l int) {
		if e != nil && (!slices.Equal(e.Shape(), []int{n, l}) || e.DType() != x.DType()) {
			tensor.Fail(op, "%s is %v %v, want (%d, %d) %v like x", name, e.Shape(), e.DType(), n, l, x.DType())
		}
	}
	want("eps1", eps1, m.Latent1)
	want("eps2", eps2, m.Latent2)
}

// ELBO returns, for each row of x (N, Input), the single-sample evidence
// lower bound
//
//	log p(x|z₁) − KL(q(z₂|x) ‖ N(0, I)) − KL(q(z₁|z₂, x) ‖ p(z₁|z₂))
//
// with z₂ = μ₂ + σ₂·ε₂ and z₁ = μ₁ + σ₁·ε₁, and its three terms (each (N)).
// eps1 (N, Latent1) and eps2 (N, Latent2) are standard normal noise,
// usually constants. It is an unbiased estimate of the ELBO and
// differentiable in every parameter. It panics with a *tensor.Error if the
// shapes or dtypes do not fit.
func (m *HVAE) ELBO(x, eps1, eps2 *graph.Node) (elbo, logLik, kl1, kl2 *graph.Node) {
	m.check("vae.HVAE.ELBO", x, eps1, eps2)
	q := m.infer(x, eps2)
	z1 := Sample(q.Mu1, q.LogVar1, eps1)
	logLik = m.Decoder.logLik(m.Decoder.forward(z1), x)
	kl2 = losses.KLDiagGaussian(q.Mu2, q.LogVar2, losses.None)
	kl1 = losses.KLDiagGaussians(q.Mu1, q.LogVar1, q.PriorMu1, q.PriorLogVar1, losses.None)
	return graph.Sub(graph.Sub(logLik, kl1), kl2), logLik, kl1, kl2
}

// Loss returns the negative ELBO summed over the rows of x, with both KL
// terms weighed by Beta: Σₙ (−log p(x|z₁) + β·(KL₁ + KL₂)). For a
// Bernoulli decoder the reconstruction term is losses.BCEWithLogits with
// the Sum reduction, one fused op.
func (m *HVAE) Loss(x, eps1, eps2 *graph.Node) *graph.Node {
	m.check("vae.HVAE.Loss", x, eps1, eps2)
	q := m.infer(x, eps2)
	out := m.Decoder.forward(Sample(q.Mu1, q.LogVar1, eps1))
	var rec *graph.Node
	if m.Decoder.Likelihood == Bernoulli {
		rec = losses.BCEWithLogits(out, x, losses.Sum)
	} else {
		rec = graph.Neg(graph.Sum(m.Decoder.logLik(out, x), nil, false))
	}
	kl := graph.Add(losses.KLDiagGaussian(q.Mu2, q.LogVar2, losses.Sum),
		losses.KLDiagGaussians(q.Mu1, q.LogVar1, q.PriorMu1, q.PriorLogVar1, losses.Sum))
	if beta := m.Beta; beta != 0 && beta != 1 {
		kl = graph.MulScalar(kl, beta)
	}
	return graph.Add(rec, kl)
}

// IWAE returns the K-sample importance-weighted bound for each row of x
// (N, Input), drawing the noise of the K·N samples (z₁, z₂) from rng:
//
//	log (1/K)·Σₖ exp(log p(x|z₁ₖ) + log p(z₁ₖ|z₂ₖ) + log p(z₂ₖ) − log q(z₂ₖ|x) − log q(z₁ₖ|z₂ₖ, x)).
//
// It is at least the ELBO in expectation and tends to log p(x) as K
// grows. The graph holds K·N decoder outputs, so evaluate large data in
// chunks of rows. It panics if k < 1 or x does not fit.
func (m *HVAE) IWAE(x *graph.Node, rng *tensor.RNG, k int) *graph.Node {
	if k < 1 {
		tensor.Fail("vae.HVAE.IWAE", "k = %d must be at least 1", k)
	}
	m.check("vae.HVAE.IWAE", x, nil, nil)
	g, n, dt := x.Graph(), x.Shape()[0], x.DType()
	eps2 := g.Const(normal(rng, dt, k, n, m.Latent2))
	eps1 := g.Const(normal(rng, dt, k, n, m.Latent1))
	// The bottom-up pass depends on x only: run it once and broadcast.
	b := m.bottomUp(x)
	bk := func(v *graph.Node) *graph.Node { return graph.BroadcastTo(v, k, n, v.Shape()[1]) }
	q := m.topDown(bottomUp{bk(b.muHat), bk(b.lvHat), bk(b.mu2), bk(b.lv2)}, eps2)
	xk := graph.BroadcastTo(x, k, n, m.Input)
	z1 := Sample(q.Mu1, q.LogVar1, eps1)
	logLik := m.Decoder.logLik(m.Decoder.forward(z1), xk) // (k, n)
	sum := func(v *graph.Node) *graph.Node { return graph.Sum(v, []int{-1}, false) }
	// log N(z; μ, σ²) = −½(Σ(z−μ)²/σ² + Σ log σ² + l·log 2π); the 2π
	// terms of the two priors and the two posteriors cancel. With z = μ +
	// σ·ε the posterior's quadratic term is Σε².
	logPz2 := sum(graph.Square(q.Z2))
	logPz1 := graph.Add(sum(graph.Mul(graph.Square(graph.Sub(z1, q.PriorMu1)), graph.Exp(graph.Neg(q.PriorLogVar1)))),
		sum(q.PriorLogVar1))
	logQ := graph.Add(graph.Add(sum(graph.Square(eps2)), sum(q.LogVar2)), graph.Add(sum(graph.Square(eps1)), sum(q.LogVar1)))
	logW := graph.Add(logLik, graph.MulScalar(graph.Sub(logQ, graph.Add(logPz2, logPz1)), 0.5)) // (k, n)
	return graph.AddScalar(graph.LogSumExp(logW, []int{0}, false), -math.Log(float64(k)))
}

// Generate returns the decoder's output (logits for Bernoulli, means for
// Gaussian) at ancestral samples of the generative model: z₂ = ε₂ and
// z₁ = μₚ(z₂) + σₚ(z₂)·ε₁, for standard normal eps2 (N, Latent2) and
// eps1 (N, Latent1). Pass zeros as eps1 to decode the prior mean of z₁.
func (m *HVAE) Generate(eps1, eps2 *graph.Node) *graph.Node {
	if eps2.Dim() != 2 || eps2.Shape()[1] != m.Latent2 {
		tensor.Fail("vae.HVAE.Generate", "eps2 has shape %v, want (N, %d)", eps2.Shape(), m.Latent2)
	}
	n := eps2.Shape()[0]
	if !slices.Equal(eps1.Shape(), []int{n, m.Latent1}) {
		tensor.Fail("vae.HVAE.Generate", "eps1 has shape %v, want (%d, %d)", eps1.Shape(), n, m.Latent1)
	}
	mu, lv := m.Prior.forward(eps2)
	return m.Decoder.forward(Sample(mu, lv, eps1))
}

var _ nn.Module = (*HVAE)(nil)
