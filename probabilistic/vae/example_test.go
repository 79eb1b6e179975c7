package vae_test

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/vae"
	"github.com/gradus-ml/gradus/tensor"
)

// One training step's loss for a tiny VAE: Σ over the batch of BCE + KL.
func ExampleVAE_Loss() {
	rng := tensor.NewRNG(1)
	m := vae.New(rng, vae.Options{Input: 4, Hidden: []int{3}, Latent: 2})
	g := graph.New()
	x := g.Const(tensor.FromValues(tensor.Float32, []float64{1, 0, 1, 0, 0, 1, 0, 1}, 2, 4))
	eps := g.Const(rng.Normal(tensor.Float32, 0, 1, 2, 2))
	loss := m.Loss(x, eps)
	fmt.Println(loss.Shape(), len(m.Params()))
	// Output: [] 10
}

// A two-level hierarchical VAE on 4-pixel images: one training step's
// loss, and the ELBO of each row with its three terms (the second-level KL
// of z₁ against the top-down prior p(z₁|z₂), and that of z₂ against N(0, I)).
func ExampleHVAE() {
	rng := tensor.NewRNG(1)
	m := vae.NewHVAE(rng, vae.HVAEOptions{Input: 4, Hidden: []int{8}, Latent1: 3, Latent2: 2})
	g := graph.New()
	x := g.Const(tensor.FromValues(tensor.Float32, []float64{1, 0, 1, 0, 0, 1, 0, 1}, 2, 4))
	eps1 := g.Const(rng.Normal(tensor.Float32, 0, 1, 2, 3))
	eps2 := g.Const(rng.Normal(tensor.Float32, 0, 1, 2, 2))
	loss := m.Loss(x, eps1, eps2) // Σ over rows of −ELBO; minimise it
	elbo, logLik, kl1, kl2 := m.ELBO(x, eps1, eps2)
	sum := func(v *graph.Node) float64 { return graph.Sum(v, nil, false).Item() }
	fmt.Println(loss.Shape(), elbo.Shape(), len(m.Params()))
	fmt.Printf("loss = −Σ ELBO: %v\n", math.Abs(loss.Item()+sum(elbo)) < 1e-4)
	fmt.Printf("ELBO = log p(x|z₁) − KL₁ − KL₂: %v\n", math.Abs(sum(elbo)-(sum(logLik)-sum(kl1)-sum(kl2))) < 1e-4)
	// Output:
	// [] [2] 18
	// loss = −Σ ELBO: true
	// ELBO = log p(x|z₁) − KL₁ − KL₂: true
}
