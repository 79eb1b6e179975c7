// Package gan holds the pieces of generative adversarial networks: the
// DCGAN generator and discriminator (Radford et al. 2016) for small square
// images, the losses of the standard GAN (Goodfellow et al. 2014, with the
// non-saturating generator loss) and of the Wasserstein GAN, and the
// gradient penalty of WGAN-GP (Gulrajani et al. 2017), whose gradient of a
// gradient the graph provides.
//
// One critic step of WGAN-GP:
//
//	g.Reset()
//	real := g.Const(batch)                                   // (N, 1, 28, 28) in [−1, 1]
//	fake := graph.StopGradient(gen.Forward(g.Const(z)))      // the generator is not updated here
//	eps := rng.Uniform(tensor.Float32, 0, 1, n)              // one interpolation weight per sample
//	loss := graph.Add(gan.CriticLoss(critic.Forward(real), critic.Forward(fake)),
//		gan.GradientPenalty(critic.Forward, real, fake, eps, 10))
//	err := optD.Step(nn.Gradients(loss, critic.Params()))
//
// The functions panic with a *tensor.Error naming the function and the
// shapes on misuse, as the graph package does.
package gan
