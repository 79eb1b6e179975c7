// Package vae provides the building blocks of variational autoencoders
// (Kingma and Welling 2014): a Gaussian encoder (an MLP ending in
// probabilistic.GaussianHead, which outputs the mean and log-variance of
// q(z|x)), reparameterised sampling, Bernoulli (logits) and Gaussian
// decoders, the evidence lower bound with the analytic KL divergence, and the
// importance-weighted bound of Burda et al. (2016).
//
//	m := vae.New(rng, vae.Options{Input: 784, Hidden: []int{400}, Latent: 20})
//	g := graph.New()
//	x := g.Const(batch)                       // (N, 784), pixels in [0, 1]
//	eps := g.Const(noise)                     // (N, 20), standard normal
//	loss := m.Loss(x, eps)                    // Σₙ (BCE + KL): the negative ELBO
//	grads := nn.Gradients(loss, m.Params())   // then an optimiser step
//
// For x with N rows, the ELBO of each row is
//
//	log p(x|z) − KL(q(z|x) ‖ N(0, I)),  z = μ + σ·ε,
//	KL = ½·Σⱼ (μⱼ² + σⱼ² − log σⱼ² − 1),
//
// and the K-sample importance-weighted bound is
//
//	IWAE_K = log (1/K)·Σₖ exp(log p(x|zₖ) + log p(zₖ) − log q(zₖ|x)),  zₖ ~ q(z|x),
//
// which equals the ELBO in expectation for K = 1 and tightens towards
// log p(x) as K grows.
//
// HVAE is a two-level hierarchical VAE p(z₂) p(z₁|z₂) p(x|z₁) with the
// top-down (ladder) inference q(z₂|x) q(z₁|z₂, x) of Sønderby et al.
// (2016), whose KL terms are all analytic. Every function works in float32
// and float64.
package vae

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// Likelihood is the decoder's observation model.
type Likelihood int

const (
	// Bernoulli: the decoder outputs logits and log p(x|z) = −BCE(logits, x),
	// for binary data or intensities in [0, 1] (then a cross-entropy).
	Bernoulli Likelihood = iota
	// Gaussian: the decoder outputs the mean, with a learned log-variance per
	// output, and log p(x|z) = −½·Σ((x − μ)²/σ² + log σ² + log 2π).
	Gaussian
)

// mlp applies the layers with a ReLU after each.
func mlp(layers []*nn.Linear, x *graph.Node) *graph.Node {
	for _, l := range layers {
		x = graph.Relu(l.Forward(x))
	}
	return x
}

// newLayers returns Linear layers in → hidden[0] → … → hidden[last].
func newLayers(rng *tensor.RNG, in int, hidden []int, dt tensor.DType) []*nn.Linear {
	var ls []*nn.Linear
	for _, h := range hidden {
		ls = append(ls, nn.NewLinear(rng, in, h, true, dt))
		in = h
	}
	return ls
}

func layerParams(prefix string, ls []*nn.Linear) []nn.NamedParam {
	var ps []nn.NamedParam
	for i, l := range ls {
		ps = append(ps, nn.Prefix(fmt.Sprintf("%s%d", prefix, i), l.Params())...)
	}
	return ps
}

// Encoder maps x to the diagonal Gaussian q(z|x): ReLU hidden layers, then
// a probabilistic.GaussianHead with the LogVariance parameterisation.
type Encoder struct {
	Hidden []*nn.Linear
	Head   *probabilistic.GaussianHead
}

// NewEncoder returns an encoder in → hidden… → (latent mean, latent
// log-variance), with PyTorch's default Linear initialisation.
func NewEncoder(rng *tensor.RNG, in int, hidden []int, latent int, dt tensor.DType) *Encoder {
	last := in
	if len(hidden) > 0 {
		last = hidden[len(hidden)-1]
	}
	return &Encoder{Hidden: newLayers(rng, in, hidden, dt),
		Head: probabilistic.NewGaussianHead(rng, last, latent, probabilistic.LogVariance, dt)}
}

// Params lists "fc0.weight", "fc0.bias", … and the head's "head.mean.*",
// "head.scale.*".
func (e *Encoder) Params() []nn.NamedParam {
	return append(layerParams("fc", e.Hidden), nn.Prefix("head", e.Head.Params())...)
}

// SetTraining does nothing: the encoder has no train/eval differences.
func (e *Encoder) SetTraining(bool) {}

// Forward returns the mean and log-variance (N, latent) of q(z|x) for x (N, in).
func (e *Encoder) Forward(x *graph.Node) (mu, logvar *graph.Node) {
	return e.forward(x)
}

func (e *Encoder) forward(x *graph.Node) (mu, logvar *graph.Node) {
	h := mlp(e.Hidden, x)
	return e.Head.MeanLayer.Forward(h), e.Head.ScaleLayer.Forward(h)
}

// Decoder maps a latent code to the parameters of p(x|z): ReLU hidden
// layers and a linear output layer giving logits (Bernoulli) or the mean
// (Gaussian, with the learned per-output log-variance LogVar).
type Decoder struct {
	Hidden     []*nn.Linear
	Out        *nn.Linear
	Likelihood Likelihood
	LogVar     *nn.Param // (out), Gaussian only; initialised to 0 (σ = 1)
}

// NewBernoulliDecoder returns a decoder latent → hidden… → out logits.
func NewBernoulliDecoder(rng *tensor.RNG, latent int, hidden []int, out int, dt tensor.DType) *Decoder {
	return newDecoder(rng, latent, hidden, out, dt, Bernoulli)
}

// NewGaussianDecoder returns a decoder latent → hidden… → out means, with a
// learned log-variance per output.
func NewGaussianDecoder(rng *tensor.RNG, latent int, hidden []int, out int, dt tensor.DType) *Decoder {
	return newDecoder(rng, latent, hidden, out, dt, Gaussian)
}

func newDecoder(rng *tensor.RNG, latent int, hidden []int, out int, dt tensor.DType, lik Likelihood) *Decoder {
	last := latent
	if len(hidden) > 0 {
		last = hidden[len(hidden)-1]
	}
	d := &Decoder{Hidden: newLayers(rng, latent, hidden, dt), Out: nn.NewLinear(rng, last, out, true, dt), Likelihood: lik}
	if lik == Gaussian {
		d.LogVar = nn.NewParam(tensor.Zeros(dt, out))
	}
	return d
}

// Params lists "fc0.*", …, "out.*" and, for a Gaussian decoder, "logvar".
func (d *Decoder) Params() []nn.NamedParam {
	ps := append(layerParams("fc", d.Hidden), nn.Prefix("out", d.Out.Params())...)
	if d.LogVar != nil {
		ps = append(ps, nn.NamedParam{Name: "logvar", Param: d.LogVar})
	}
	return ps
}

// SetTraining does nothing: the decoder has no train/eval differences.
func (d *Decoder) SetTraining(bool) {}

// Forward returns the logits (Bernoulli) or means (Gaussian) (…, out) for
// latent codes z (…, latent).
func (d *Decoder) Forward(z *graph.Node) *graph.Node { return d.forward(z) }

func (d *Decoder) forward(z *graph.Node) *graph.Node {
	return d.Out.Forward(mlp(d.Hidden, z))
}

// LogLikelihood returns log p(x|z) (…) summed over the last axis, for the
// decoder output out (Forward(z)) and data x of the same shape.
func (d *Decoder) LogLikelihood(out, x *graph.Node) *graph.Node {
	return d.logLik(out, x)
}

func (d *Decoder) logLik(out, x *graph.Node) *graph.Node {
	if d.Likelihood == Bernoulli {
		return graph.Neg(graph.Sum(losses.BCEWithLogits(out, x, losses.None), []int{-1}, false))
	}
	lv := d.LogVar.Node(out.Graph())
	r2 := graph.Mul(graph.Square(graph.Sub(x, out)), graph.Exp(graph.Neg(lv)))
	t := graph.AddScalar(graph.Add(r2, graph.BroadcastTo(lv, out.Shape()...)), math.Log(2*math.Pi))
	return graph.MulScalar(graph.Sum(t, []int{-1}, false), -0.5)
}

// Options describes a VAE with mirrored MLPs (New).
type Options struct {
	Input      int          // data dimension, e.g. 784
	Hidden     []int        // encoder hidden sizes; the decoder uses them reversed
	Latent     int          // latent dimension
	Likelihood Likelihood   // Bernoulli (default) or Gaussian
	DType      tensor.DType // Float32 (default) or Float64
	// Beta weighs the KL term of Loss: β > 1 is the β-VAE of Higgins et
	// al. (2017, "β-VAE: learning basic visual concepts with a constrained
	// variational framework"), which trades reconstruction for a more
	// factorised latent code. 0 means 1, the plain ELBO.
	Beta float64
}

// VAE is an encoder and a decoder.
type VAE struct {
	Encoder *Encoder
	Decoder *Decoder
	Latent  int
	Beta    float64 // the KL weight of Loss (see Options.Beta); 1 for the ELBO
}

// New returns a VAE Input → Hidden… → Latent → reversed Hidden… → Input
// with PyTorch's default Linear initialisation drawn from rng. It panics if
// a size is not positive.
func New(rng *tensor.RNG, cfg Options) *VAE {
	if cfg.Input <= 0 || cfg.Latent <= 0 {
		tensor.Fail("vae.New", "Input = %d and Latent = %d must be positive", cfg.Input, cfg.Latent)
	}
	if cfg.Beta == 0 {
		cfg.Beta = 1
	}
	if !(cfg.Beta > 0) || math.IsInf(cfg.Beta, 0) {
		tensor.Fail("vae.New", "Beta = %g must be positive and finite", cfg.Beta)
	}
	for _, h := range cfg.Hidden {
		if h <= 0 {
			tensor.Fail("vae.New", "hidden sizes %v must be positive", cfg.Hidden)
		}
	}
	dt := cfg.DType
	if dt != tensor.Float64 {
		dt = tensor.Float32
	}
	rev := make([]int, len(cfg.Hidden))
	for i, h := range cfg.Hidden {
		rev[len(rev)-1-i] = h
	}
	return &VAE{Encoder: NewEncoder(rng, cfg.Input, cfg.Hidden, cfg.Latent, dt),
		Decoder: newDecoder(rng, cfg.Latent, rev, cfg.Input, dt, cfg.Likelihood), Latent: cfg.Latent, Beta: cfg.Beta}
}

// Params lists the encoder's parameters under "encoder." and the decoder's
// under "decoder.".
func (m *VAE) Params() []nn.NamedParam {
	return append(nn.Prefix("encoder", m.Encoder.Params()), nn.Prefix("decoder", m.Decoder.Params())...)
}

// SetTraining does nothing: a VAE's layers behave the same in both modes.
func (m *VAE) SetTraining(bool) {}

// Sample returns the reparameterised z = μ + exp(½·logvar)·ε; see
// probabilistic.Reparameterise.
func Sample(mu, logvar, eps *graph.Node) *graph.Node {
	return probabilistic.Reparameterise(mu, logvar, eps)
}

// ELBO returns, for each row of x (N, Input), the single-sample evidence
// lower bound log p(x|z) − KL(q(z|x) ‖ p(z)) with z = μ + σ·ε, and its two
// terms (each (N)). eps (N, Latent) is standard normal noise, usually a
// constant.
func (m *VAE) ELBO(x, eps *graph.Node) (elbo, logLik, kl *graph.Node) {
	return m.elbo(x, eps)
}

func (m *VAE) elbo(x, eps *graph.Node) (elbo, logLik, kl *graph.Node) {
	mu, logvar := m.Encoder.forward(x)
	z := Sample(mu, logvar, eps)
	logLik = m.Decoder.logLik(m.Decoder.forward(z), x)
	kl = losses.KLDiagGaussian(mu, logvar, losses.None)
	return graph.Sub(logLik, kl), logLik, kl
}

// Loss returns the negative ELBO summed over the rows of x, with the KL
// term weighed by Beta: Σₙ (BCE + β·KL) for the Bernoulli decoder, as in
// PyTorch's VAE example when β = 1. For a Bernoulli decoder the
// reconstruction term is losses.BCEWithLogits with the Sum reduction, one
// fused op.
func (m *VAE) Loss(x, eps *graph.Node) *graph.Node {
	beta := m.Beta
	if beta == 0 { // a VAE assembled by hand
		beta = 1
	}
	weigh := func(kl *graph.Node) *graph.Node {
		if beta == 1 {
			return kl
		}
		return graph.MulScalar(kl, beta)
	}
	if m.Decoder.Likelihood != Bernoulli {
		_, logLik, kl := m.elbo(x, eps)
		return graph.Sub(weigh(graph.Sum(kl, nil, false)), graph.Sum(logLik, nil, false))
	}
	mu, logvar := m.Encoder.forward(x)
	logits := m.Decoder.forward(Sample(mu, logvar, eps))
	kl := losses.KLDiagGaussian(mu, logvar, losses.Sum)
	return graph.Add(losses.BCEWithLogits(logits, x, losses.Sum), weigh(kl))
}

// IWAE returns the K-sample importance-weighted bound for each row of x
// (N, Input), drawing the K·N latent samples from rng:
//
//	log (1/K)·Σₖ exp(log p(x|zₖ) + log p(zₖ) − log q(zₖ|x)).
//
// The graph holds K·N decoder outputs, so evaluate a large data set in
// chunks of rows (with a Reset between them). It is differentiable (the
// IWAE training objective). It panics if k < 1.
func (m *VAE) IWAE(x *graph.Node, rng *tensor.RNG, k int) *graph.Node {
	if k < 1 {
		tensor.Fail("vae.IWAE", "k = %d must be at least 1", k)
	}
	return m.iwae(x, rng, k)
}

func (m *VAE) iwae(x *graph.Node, rng *tensor.RNG, k int) *graph.Node {
	g := x.Graph()
	n, l := x.Shape()[0], m.Latent
	dt := x.DType()
	mu, logvar := m.Encoder.forward(x)
	eps := g.Const(normal(rng, dt, k, n, l))
	z := Sample(mu, logvar, eps) // (k, n, l)
	xk := graph.BroadcastTo(x, append([]int{k}, x.Shape()...)...)
	logLik := m.Decoder.logLik(m.Decoder.forward(z), xk) // (k, n)
	// log p(z) = −½Σz² − (l/2)·log 2π and log q(z|x) = −½Σε² − ½Σ logvar −
	// (l/2)·log 2π: the log 2π terms cancel in the weight.
	logPz := graph.MulScalar(graph.Sum(graph.Square(z), []int{-1}, false), -0.5)
	logQz := graph.MulScalar(graph.Add(graph.Sum(graph.Square(eps), []int{-1}, false),
		graph.Sum(logvar, []int{-1}, false)), -0.5)
	logW := graph.Sub(graph.Add(logLik, logPz), logQz) // (k, n)
	return graph.AddScalar(graph.LogSumExp(logW, []int{0}, false), -math.Log(float64(k)))
}

// normal returns standard normal noise of the given shape.
func normal(rng *tensor.RNG, dt tensor.DType, shape ...int) *tensor.Tensor {
	t := tensor.New(dt, shape...)
	FillNormal(rng, t)
	return t
}

// FillNormal overwrites the contiguous tensor t with standard normal draws
// from rng, without allocating (for the ε of each training step).
func FillNormal(rng *tensor.RNG, t *tensor.Tensor) {
	if t.DType() == tensor.Float64 {
		for i, d := 0, t.Float64s(); i < len(d); i++ {
			d[i] = rng.NormFloat64()
		}
		return
	}
	for i, d := 0, t.Float32s(); i < len(d); i++ {
		d[i] = float32(rng.NormFloat64())
	}
}

var (
	_ nn.Module = (*VAE)(nil)
	_ nn.Module = (*Encoder)(nil)
	_ nn.Module = (*Decoder)(nil)
)
