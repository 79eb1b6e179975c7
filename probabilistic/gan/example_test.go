package gan_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/gan"
	"github.com/gradus-ml/gradus/tensor"
)

// The penalty of a linear critic D(x) = w·x is λ(‖w‖ − 1)² at any
// interpolate; its gradient with respect to w goes through ∇ₓD = w.
func ExampleGradientPenalty() {
	rng := tensor.NewRNG(1)
	critic := nn.NewLinear(rng, 2, 1, false, tensor.Float64)
	tensor.CopyInto(critic.Weight.Value, tensor.FromFloat64s([]float64{3, 4}, 1, 2)) // ‖w‖ = 5
	g := graph.New()
	real := g.Const(rng.Normal(tensor.Float64, 0, 1, 8, 2))
	fake := g.Const(rng.Normal(tensor.Float64, 0, 1, 8, 2))
	gp := gan.GradientPenalty(critic.Forward, real, fake, rng.Uniform(tensor.Float64, 0, 1, 8), 10)
	grad := nn.Gradients(gp, critic.Params())[0] // 2λ(‖w‖ − 1)·w/‖w‖ = 16·w
	fmt.Printf("%.6g %.6g\n", gp.Item(), grad.Values())
	// Output: 160 [48 64]
}

// A DCGAN pair for MNIST-sized images: the generator maps noise to
// 28×28 images, the discriminator images to one logit each.
func ExampleNewGenerator() {
	rng := tensor.NewRNG(1)
	cfg := gan.Options{Size: 28, Channels: 1, Latent: 100, Width: 32, BatchNorm: true}
	gen := gan.NewGenerator(rng, cfg, tensor.Float32)
	disc := gan.NewDiscriminator(rng, cfg, tensor.Float32)
	g := graph.New()
	z := g.Const(rng.Normal(tensor.Float32, 0, 1, 4, 100))
	x := gen.Forward(z)
	loss := gan.GeneratorLoss(disc.Forward(x))
	fmt.Println(x.Shape(), disc.Forward(x).Shape(), loss.Shape())
	// Output: [4 1 28 28] [4 1] []
}
