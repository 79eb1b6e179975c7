// Package ppl is probabilistic programming on the graph: a model is an
// ordinary Go function that tells its generative story (sample this from
// that, observe this, inside these plates), effect handlers are values
// that wrap a model and change what its statements do, and the engines
// (NUTS and HMC from package inference, SVI with automatic or hand-written
// guides, predictive sampling) are written on those handlers, so every
// engine runs the same model function. The design follows Pyro and
// NumPyro (Bingham et al. 2019, "Pyro: Deep universal probabilistic
// programming"; Phan, Pradhan and Jankowiak 2019, "Composable effects for
// flexible and accelerated probabilistic programming in NumPyro").
//
//	model := func(c *ppl.Ctx) {
//		mu := ppl.Sample(c, "mu", probabilistic.NewNormal(c.Scalar(0), c.Scalar(5)))
//		tau := ppl.Sample(c, "tau", probabilistic.NewGamma(c.Scalar(2), c.Scalar(0.5)))
//		ppl.Plate(c, "data", n, ppl.PlateOptions{}, func(idx []int) {
//			ppl.Observe(c, "y", probabilistic.NewNormal(mu, tau), y)
//		})
//	}
//	post, err := ppl.NUTS(ctx, model, inference.NUTSOptions{Seed: 1})
//	fmt.Println(post.Mean("mu"), post.Rhat("tau"))
//
// Discrete latent sites declared with Enumerated (Bernoulli, Categorical)
// are summed out instead of sampled: the engines run the model under the
// Enum handler, which gives such a site all its values along a new batch
// dimension, and Trace.LogJoint eliminates them across plates, so
// mixtures and hidden Markov models fit by NUTS or SVI over their
// continuous sites; Markov loops reuse the dimensions of a chain's
// states, and InferDiscrete recovers the discrete posterior.
//
// Misuse inside a model (a site name used twice, a plate whose size
// disagrees with a site's shape) panics with a *tensor.Error naming the
// model's line; the engines run the model once before any work and return
// such panics, data outside a site's support (*SupportError) and a guide
// that misses a latent site as errors. docs/ppl.md describes the design.
package ppl
