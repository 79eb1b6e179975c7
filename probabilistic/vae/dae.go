package vae

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// DAE is a denoising autoencoder (Vincent et al. 2008; the ETH summary
// §5.2): a deterministic encoder and a Bernoulli decoder trained to
// reconstruct clean inputs from corrupted ones, which forces the code to
// capture the data's structure rather than copy pixels. It reuses the
// VAE's MLPs: the encoder's mean is the code.
type DAE struct {
	Encoder *Encoder
	Decoder *Decoder
	// Drop is the masking-noise level: each input pixel is set to 0 with
	// this probability during training (Corrupt).
	Drop float64
}

// NewDAE returns a DAE in → hidden → code → reversed hidden → in with
// masking noise drop. It panics if a size is not positive or drop is not
// in [0, 1).
func NewDAE(rng *tensor.RNG, in int, hidden []int, code int, drop float64, dt tensor.DType) *DAE {
	if in <= 0 || code <= 0 || !(drop >= 0 && drop < 1) {
		tensor.Fail("vae.NewDAE", "want positive sizes and 0 ≤ drop < 1, got in = %d, code = %d, drop = %g", in, code, drop)
	}
	rev := make([]int, len(hidden))
	for i, h := range hidden {
		rev[len(rev)-1-i] = h
	}
	return &DAE{Encoder: NewEncoder(rng, in, hidden, code, dt), Decoder: NewBernoulliDecoder(rng, code, rev, in, dt), Drop: drop}
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
	return BCEWithLogitsSum(m.Reconstruct(noisy), clean)
}
