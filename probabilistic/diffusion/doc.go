// Package diffusion holds denoising diffusion probabilistic models (Ho,
// Jain and Abbeel 2020): a variance Schedule (linear or cosine) with its
// forward process q(x_t | x_0) = N(√ᾱ_t·x_0, (1 − ᾱ_t)·I), the
// ε-prediction training loss, the ancestral sampler of the paper's
// Algorithm 2 and the deterministic DDIM sampler (Song et al. 2021), and
// a small UNet that predicts the noise.
//
//	s, _ := diffusion.Linear(1000, 1e-4, 0.02)
//	u := diffusion.NewUNet(rng, diffusion.UNetOptions{}, tensor.Float32)
//	loss := s.Loss(g, u.Forward, x0, rng) // x0 (N, 1, 28, 28) in [−1, 1]
//	… optimiser step on nn.Gradients(loss, u.Params()) …
//	x, err := s.Sample(u.Forward, rng, tensor.Float32,
//		diffusion.SampleOptions{Sampler: diffusion.DDIM, Steps: 50}, 16, 1, 28, 28)
//
// Time steps run 1…T as in the paper, with ᾱ_0 = 1. Misuse (shapes that do
// not fit) panics with a *tensor.Error naming the function; Sample and the
// schedule constructors return errors.
package diffusion
