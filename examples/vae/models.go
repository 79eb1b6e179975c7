package main

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/vae"
	"github.com/gradus-ml/gradus/tensor"
)

// model is what the example needs of a VAE or a hierarchical VAE. The
// noise of every call is drawn from rng into buffers the model reuses, so
// the graph must be reset before the next call overwrites them.
type model interface {
	nn.Module
	// loss is Σ over the rows of x of the β-weighted negative ELBO.
	loss(g *graph.Graph, x *tensor.Tensor, rng *tensor.RNG) *graph.Node
	// elbo is the single-sample ELBO of each row, and its KL terms summed
	// over the rows (one per latent level, top level last).
	elbo(g *graph.Graph, x *tensor.Tensor, rng *tensor.RNG) (*graph.Node, []*graph.Node)
	iwae(g *graph.Graph, x *tensor.Tensor, rng *tensor.RNG, k int) *graph.Node
	// decodeTop returns the decoder's logits for top-level codes z (n, top):
	// the VAE's z, or the HVAE's z₂ with z₁ at its prior mean.
	decodeTop(g *graph.Graph, z *tensor.Tensor) *graph.Node
	// sample returns the logits of n ancestral samples.
	sample(g *graph.Graph, rng *tensor.RNG, n int) *graph.Node
	// encodeTop returns the mean of the top-level code of each row of x.
	encodeTop(g *graph.Graph, x *tensor.Tensor) *graph.Node
	// reconstruct returns the logits at the posterior means of x.
	reconstruct(g *graph.Graph, x *tensor.Tensor) *graph.Node
	top() int // dimension of the top-level code
	// setBeta sets the weight of the KL terms in loss.
	setBeta(beta float64)
	describe() string
}

// noise holds standard normal buffers by shape, refilled on each use.
type noise map[[2]int]*tensor.Tensor

func (b noise) draw(g *graph.Graph, rng *tensor.RNG, n, l int) *graph.Node {
	e, ok := b[[2]int{n, l}]
	if !ok {
		e = tensor.New(tensor.Float32, n, l)
		b[[2]int{n, l}] = e
	}
	vae.FillNormal(rng, e)
	return g.Const(e)
}

// plainVAE is the one-level VAE.
type plainVAE struct {
	*vae.VAE
	eps    noise
	hidden int
}

func (m *plainVAE) loss(g *graph.Graph, x *tensor.Tensor, rng *tensor.RNG) *graph.Node {
	return m.Loss(g.Const(x), m.eps.draw(g, rng, x.Shape()[0], m.Latent))
}

func (m *plainVAE) elbo(g *graph.Graph, x *tensor.Tensor, rng *tensor.RNG) (*graph.Node, []*graph.Node) {
	e, _, kl := m.ELBO(g.Const(x), m.eps.draw(g, rng, x.Shape()[0], m.Latent))
	return e, []*graph.Node{graph.Sum(kl, nil, false)}
}

func (m *plainVAE) iwae(g *graph.Graph, x *tensor.Tensor, rng *tensor.RNG, k int) *graph.Node {
	return m.IWAE(g.Const(x), rng, k)
}

func (m *plainVAE) decodeTop(g *graph.Graph, z *tensor.Tensor) *graph.Node {
	return m.Decoder.Forward(g.Const(z))
}

func (m *plainVAE) sample(g *graph.Graph, rng *tensor.RNG, n int) *graph.Node {
	return m.Decoder.Forward(m.eps.draw(g, rng, n, m.Latent))
}

func (m *plainVAE) encodeTop(g *graph.Graph, x *tensor.Tensor) *graph.Node {
	mu, _ := m.Encoder.Forward(g.Const(x))
	return mu
}

func (m *plainVAE) reconstruct(g *graph.Graph, x *tensor.Tensor) *graph.Node {
	return m.Decoder.Forward(m.encodeTop(g, x))
}

func (m *plainVAE) top() int { return m.Latent }

func (m *plainVAE) setBeta(beta float64) { m.Beta = beta }

func (m *plainVAE) describe() string { return fmt.Sprintf("VAE 784-%d-%d", m.hidden, m.Latent) }

// ladderVAE is the two-level hierarchical VAE with top-down inference.
type ladderVAE struct {
	*vae.HVAE
	eps             noise
	hidden, hidden2 int
}

func (m *ladderVAE) draw2(g *graph.Graph, rng *tensor.RNG, n int) (eps1, eps2 *graph.Node) {
	eps1 = m.eps.draw(g, rng, n, m.Latent1)
	return eps1, m.eps.draw(g, rng, n, m.Latent2)
}

func (m *ladderVAE) loss(g *graph.Graph, x *tensor.Tensor, rng *tensor.RNG) *graph.Node {
	e1, e2 := m.draw2(g, rng, x.Shape()[0])
	return m.Loss(g.Const(x), e1, e2)
}

func (m *ladderVAE) elbo(g *graph.Graph, x *tensor.Tensor, rng *tensor.RNG) (*graph.Node, []*graph.Node) {
	e1, e2 := m.draw2(g, rng, x.Shape()[0])
	e, _, kl1, kl2 := m.ELBO(g.Const(x), e1, e2)
	return e, []*graph.Node{graph.Sum(kl1, nil, false), graph.Sum(kl2, nil, false)}
}

func (m *ladderVAE) iwae(g *graph.Graph, x *tensor.Tensor, rng *tensor.RNG, k int) *graph.Node {
	return m.IWAE(g.Const(x), rng, k)
}

func (m *ladderVAE) decodeTop(g *graph.Graph, z *tensor.Tensor) *graph.Node {
	return m.Generate(g.Const(tensor.Zeros(tensor.Float32, z.Shape()[0], m.Latent1)), g.Const(z))
}

func (m *ladderVAE) sample(g *graph.Graph, rng *tensor.RNG, n int) *graph.Node {
	e1, e2 := m.draw2(g, rng, n)
	return m.Generate(e1, e2)
}

func (m *ladderVAE) encodeTop(g *graph.Graph, x *tensor.Tensor) *graph.Node {
	return m.Infer(g.Const(x), g.Const(tensor.Zeros(tensor.Float32, x.Shape()[0], m.Latent2))).Mu2
}

func (m *ladderVAE) reconstruct(g *graph.Graph, x *tensor.Tensor) *graph.Node {
	q := m.Infer(g.Const(x), g.Const(tensor.Zeros(tensor.Float32, x.Shape()[0], m.Latent2)))
	return m.Decoder.Forward(q.Mu1)
}

func (m *ladderVAE) top() int { return m.Latent2 }

func (m *ladderVAE) setBeta(beta float64) { m.Beta = beta }

func (m *ladderVAE) describe() string {
	return fmt.Sprintf("hierarchical VAE 784-%d-(z₁ %d)-%d-(z₂ %d)", m.hidden, m.Latent1, m.hidden2, m.Latent2)
}

// newModel builds the model that o.Model names, initialised from seed.
func newModel(o options, seed uint64) (model, error) {
	rng := tensor.NewRNG(seed)
	switch o.Model {
	case "", "vae":
		return &plainVAE{VAE: vae.New(rng, vae.Options{Input: 784, Hidden: []int{o.Hidden}, Latent: o.Latent, Beta: o.Beta}),
			eps: noise{}, hidden: o.Hidden}, nil
	case "hvae":
		return &ladderVAE{HVAE: vae.NewHVAE(rng, vae.HVAEOptions{Input: 784, Hidden: []int{o.Hidden}, Latent1: o.Latent,
			Hidden2: []int{o.Hidden2}, Latent2: o.Latent2, Beta: o.Beta}), eps: noise{}, hidden: o.Hidden, hidden2: o.Hidden2}, nil
	}
	return nil, fmt.Errorf("unknown -model %q: want vae or hvae", o.Model)
}
