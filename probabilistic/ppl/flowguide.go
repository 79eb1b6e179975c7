package ppl

import (
	"fmt"
	"sync"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// FlowGuideOptions configures AutoNormalizingFlow. The zero value means
// the defaults given.
type FlowGuideOptions struct {
	Flows  int // affine coupling layers (default 4)
	Hidden int // width of each coupling's conditioner (default 16)
	// InitScale is the initial standard deviation of the final affine
	// layer (default 0.1).
	InitScale float64
	Seed      uint64 // seeds the couplings' weights and the model's first run
}

// AutoNormalizingFlow returns a guide that draws all latent sites'
// unconstrained elements jointly from a normalising flow: a standard
// normal pushed through Flows RealNVP affine couplings
// (probabilistic.AffineCoupling; Dinh, Sohl-Dickstein and Bengio 2017,
// "Density estimation using Real NVP") with alternating masks, then an
// elementwise affine map loc + scale⊙x (Rezende and Mohamed 2015,
// "Variational inference with normalizing flows"). The couplings start
// as the identity, so the guide starts as AutoNormal's. Its parameters
// are "auto_flow_loc", "auto_flow_scale" and the couplings' weights
// "auto_flow.<k>.…" (declared with Module). The model needs at least two
// unconstrained elements.
func AutoNormalizingFlow(model Model, opts FlowGuideOptions) Model {
	sites := lazySites(model, AutoGuideOptions{Seed: opts.Seed})
	if opts.Flows <= 0 {
		opts.Flows = 4
	}
	if opts.Hidden <= 0 {
		opts.Hidden = 16
	}
	var (
		once   sync.Once
		layers []*probabilistic.AffineCoupling
	)
	return func(c *Ctx) {
		as := sites()
		loc, d := jointInit(as)
		if d < 2 {
			tensor.Fail("ppl.AutoNormalizingFlow", "the model has %d unconstrained element: a coupling needs at least 2", d)
		}
		once.Do(func() {
			rng := tensor.NewRNG(opts.Seed)
			for k := range opts.Flows {
				mask := make([]float64, d)
				for i := range mask {
					mask[i] = float64((i + k) % 2)
				}
				layers = append(layers, probabilistic.NewAffineCoupling(rng, mask, opts.Hidden, tensor.Float64))
			}
		})
		bij := make([]probabilistic.Bijector, 0, len(layers)+1)
		for k, l := range layers {
			Module(c, fmt.Sprintf("auto_flow.%d", k), l)
			bij = append(bij, l)
		}
		scale := opts.InitScale
		if scale <= 0 {
			scale = 0.1
		}
		bij = append(bij, affine{
			loc:   Param(c, "auto_flow_loc", loc, nil),
			scale: Param(c, "auto_flow_scale", tensor.Full(tensor.Float64, scale, d), probabilistic.Softplus{}),
		})
		base := probabilistic.NewMVNDiag(c.Const(tensor.Zeros(tensor.Float64, d)), c.Const(tensor.Ones(tensor.Float64, d)))
		q := probabilistic.NewTransformed(base, bij...)
		unpack(c, as, sampleAux(c, "_auto_latent", q))
	}
}

// affine is the elementwise bijector x ↦ loc + scale⊙x.
type affine struct{ loc, scale *graph.Node }

func (b affine) Forward(x *graph.Node) *graph.Node {
	return graph.Add(b.loc, graph.Mul(b.scale, x))
}

func (b affine) Inverse(y *graph.Node) *graph.Node {
	return graph.Div(graph.Sub(y, b.loc), b.scale)
}

func (b affine) LogDetJacobian(x *graph.Node) *graph.Node {
	return graph.Add(graph.MulScalar(x, 0), graph.Log(b.scale))
}
