package vae

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// DAE is a denoising autoencoder (Vincent, Larochelle, Bengio and Manzagol
// 2008, "Extracting and composing robust features with denoising
// autoencoders"): a deterministic encoder and a Bernoulli decoder trained
// to reconstruct clean inputs from corrupted ones, which forces the code
// to capture the data's structure rather than copy pixels. It reuses the
// VAE's MLPs: the encoder's mean is the code.
type DAE struct {
	Encoder *Encoder
	Decoder *Decoder
	// Drop is the masking-noise level: each input pixel is set to 0 with
	// this probability during training (Corrupt).
	Drop float64
}

// DAEOptions describes a DAE (NewDAE).
type DAEOptions struct {
	Input  int   // data dimension, e.g. 784
	Hidden []int // encoder hidden sizes; the decoder uses them reversed
	Code   int   // code dimension
	// Drop is the masking-noise level in [0, 1); 0 means no corruption.
	Drop  float64
	DType tensor.DType // Float32 (default) or Float64
}

// NewDAE returns a DAE Input → Hidden… → Code → reversed Hidden… → Input
// with PyTorch's default Linear initialisation drawn from rng. It panics
// with a *tensor.Error if a size is not positive or Drop is not in [0, 1).
func NewDAE(rng *tensor.RNG, opts DAEOptions) *DAE {
	if opts.Input <= 0 || opts.Code <= 0 || !(opts.Drop >= 0 && opts.Drop < 1) {
		tensor.Fail("vae.NewDAE", "want positive sizes and 0 ≤ Drop < 1, got Input = %d, Code = %d, Drop = %g", opts.Input, opts.Code, opts.Drop)
	}
	for _, h := range opts.Hidden {
		if h <= 0 {
			tensor.Fail("vae.NewDAE", "hidden sizes %v must be positive", opts.Hidden)
		}
	}
	dt := opts.DType
	if dt != tensor.Float64 {
		dt = tensor.Float32
	}
	rev := make([]int, len(opts.Hidden))
	for i, h := range opts.Hidden {
		rev[len(rev)-1-i] = h
	}
	return &DAE{Encoder: NewEncoder(rng, opts.Input, opts.Hidden, opts.Code, dt),
		Decoder: NewBernoulliDecoder(rng, opts.Code, rev, opts.Input, dt), Drop: opts.Drop}
}

// Params lists the encoder's parameters under "encoder." and the
// decoder's under "decoder.".
func (m *DAE) Params() []nn.NamedParam {
	return append(nn.Prefix("encoder", m.Encoder.Params()), nn.Prefix("decoder", m.Decoder.Params())...)
}

// SetTraining does nothing: the corruption is explicit (Corrupt).
func (m *DAE) SetTraining(bool) {}

// Corrupt returns a copy of x with each entry set to 0 with probability
// Drop, drawn from rng.
func (m *DAE) Corrupt(x *tensor.Tensor, rng *tensor.RNG) *tensor.Tensor {
	keep := rng.Bernoulli(x.DType(), 1-m.Drop, x.Shape()...)
	return tensor.Mul(x, keep)
}

// Reconstruct returns the decoder's logits for the (possibly corrupted)
// inputs x (N, in).
func (m *DAE) Reconstruct(x *graph.Node) *graph.Node {
	mu, _ := m.Encoder.Forward(x)
	return m.Decoder.Forward(mu)
}

// Loss returns Σ BCE(reconstruction of noisy, clean), summed over the rows:
// the denoising objective.
func (m *DAE) Loss(noisy, clean *graph.Node) *graph.Node {
	return losses.BCEWithLogits(m.Reconstruct(noisy), clean, losses.Sum)
}
