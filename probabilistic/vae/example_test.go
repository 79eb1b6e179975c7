package vae_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/vae"
	"github.com/gradus-ml/gradus/tensor"
)

// The analytic KL term of the ELBO: ½(μ² + σ² − log σ² − 1) = 0.5 at μ = 1, σ² = 1.
func ExampleKL() {
	g := graph.New()
	mu := g.Const(tensor.FromFloat64s([]float64{1, 0}, 1, 2))
	logvar := g.Const(tensor.FromFloat64s([]float64{0, 0}, 1, 2))
	fmt.Println(vae.KL(mu, logvar).Value().Values())
	// Output: [0.5]
}

// One training step's loss for a tiny VAE: Σ over the batch of BCE + KL.
func ExampleVAE_Loss() {
	rng := tensor.NewRNG(1)
	m := vae.New(rng, vae.Config{Input: 4, Hidden: []int{3}, Latent: 2})
	g := graph.New()
	x := g.Const(tensor.FromValues(tensor.Float32, []float64{1, 0, 1, 0, 0, 1, 0, 1}, 2, 4))
	eps := g.Const(rng.Normal(tensor.Float32, 0, 1, 2, 2))
	loss := m.Loss(x, eps)
	fmt.Println(loss.Shape(), len(m.Params()))
	// Output: [] 10
}
