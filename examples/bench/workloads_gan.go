package main

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/probabilistic/gan"
	"github.com/gradus-ml/gradus/tensor"
)

// dcganWorkload is one DCGAN training step on 1×28×28 images in batches of
// 64 with PyTorch's DCGAN example sizes (nz = 100, ngf = ndf = 64), as
// gan.NewGenerator and gan.NewDiscriminator build them: generator
// ConvT(100→128, 7×7) → BN → ReLU → ConvT(128→64, 4×4, s2) → BN → ReLU →
// ConvT(64→1, 4×4, s2) → tanh; discriminator Conv(1→64, 4×4, s2) → LReLU →
// Conv(64→128, 4×4, s2) → BN → LReLU → Conv(128→1, 7×7). A step draws
// fresh noise, takes a discriminator step on a fixed real batch and the
// detached fakes (BCE with logits), then a generator step on the same
// fakes scored by the updated discriminator (non-saturating loss), each
// with Adam(2e-4, β₁ = 0.5), as examples/gan does. The noise is drawn on
// the host; on -device cuda the graph copies it in.
func dcganWorkload() workload {
	const batch, latent = 64, 100
	return seeded("dcgan_train", 5, throughput("samples_per_s", batch), func(rng *tensor.RNG) step {
		cfg := gan.Options{Size: 28, Channels: 1, Latent: latent, Width: 64, BatchNorm: true}
		gen := gan.NewGenerator(rng, cfg, tensor.Float32)
		disc := gan.NewDiscriminator(rng, cfg, tensor.Float32)
		nn.To(gen, device) // before the optimisers keep the parameters
		nn.To(disc, device)
		ac := optim.AdamOptions{LR: 2e-4, Beta1: 0.5, Beta2: 0.999}
		optG := optim.NewAdam(nn.Values(gen.Params()), ac)
		optD := optim.NewAdam(nn.Values(disc.Params()), ac)
		real := onDevice(rng.Uniform(tensor.Float32, -1, 1, batch, 1, 28, 28))
		z := tensor.Zeros(tensor.Float32, batch, latent)
		noise := z.Float32s()
		g := graph.New()
		return func() {
			for i := range noise {
				noise[i] = float32(rng.NormFloat64())
			}
			g.Reset()
			fake := gen.Forward(g.Const(z))
			dLoss := gan.DiscriminatorLoss(disc.Forward(g.Const(real)), disc.Forward(graph.StopGradient(fake)))
			if err := optD.Step(nn.Gradients(dLoss, disc.Params())); err != nil {
				panic(err)
			}
			gLoss := gan.GeneratorLoss(disc.Forward(fake))
			if err := optG.Step(nn.Gradients(gLoss, gen.Params())); err != nil {
				panic(err)
			}
		}
	}).onGPU()
}
