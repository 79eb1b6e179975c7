package main

import (
	"math"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	gplot "github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
)

// draw writes the pictures into -out and returns their paths.
func (t *trainer) draw(o options, env *cli.Env, xt *tensor.Tensor, yt []int, res result) ([]string, error) {
	var paths []string
	save := func(name string, imgs [][]float64, cols, scale int) error {
		p := env.Path(name)
		paths = append(paths, p)
		flat := make([]float64, 0, len(imgs)*28*28)
		for _, im := range imgs {
			flat = append(flat, im...)
		}
		return gplot.ImageGrid(p, tensor.FromFloat64s(flat, len(imgs), 28, 28), cols, scale, 0, 1)
	}
	// Samples from the prior: decode z ~ N(0, I) and show the Bernoulli means.
	if err := save("samples.png", t.means(func() *graph.Node { return t.m.sample(t.g, tensor.NewRNG(env.Seed+3000), 100) }), 10, 3); err != nil {
		return nil, err
	}
	// Test images (odd rows) above their reconstructions (even rows), the
	// decoder's means at the encoder's means.
	const pairs, perRow = 48, 16
	src := tensor.Slice(xt, 0, 0, min(pairs, xt.Shape()[0]), 1).Contiguous()
	orig := rowsOf(src)
	rec := t.means(func() *graph.Node { return t.m.reconstruct(t.g, src) })
	var both [][]float64
	for r := 0; r*perRow < len(orig); r++ {
		lo, hi := r*perRow, min((r+1)*perRow, len(orig))
		both = append(append(both, orig[lo:hi]...), rec[lo:hi]...)
	}
	if err := save("reconstructions.png", both, perRow, 3); err != nil {
		return nil, err
	}
	if t.m.top() == 2 {
		// The manifold: decode a 20×20 grid of z at the normal quantiles of
		// evenly spaced probabilities (Kingma and Welling 2014, figure 4).
		const k = 20
		zs := make([]float32, 0, 2*k*k)
		for i := range k {
			for j := range k {
				u := func(m int) float64 { return (float64(m) + 0.5) / k }
				zs = append(zs, float32(math.Sqrt2*math.Erfinv(2*u(j)-1)), float32(-math.Sqrt2*math.Erfinv(2*u(i)-1)))
			}
		}
		if err := save("manifold.png", t.means(func() *graph.Node { return t.m.decodeTop(t.g, tensor.FromFloat32s(zs, k*k, 2)) }), k, 2); err != nil {
			return nil, err
		}
		p := env.Path("latent_codes.png")
		paths = append(paths, p)
		if err := scatter(p, t.encodeMean(xt), yt); err != nil {
			return nil, err
		}
	}
	curve := env.Path("loss.png")
	paths = append(paths, curve)
	err := gplot.WritePNG(curve, gplot.Panel{Title: o.Model + " negative ELBO (nats per image)", XLabel: "epoch", YLabel: "−ELBO",
		Curves: []gplot.Curve{{Name: "train", Y: res.TrainNegELBO}, {Name: "test", Y: res.TestNegELBO}}})
	return paths, err
}

// means returns the Bernoulli means σ(logits) of the decoder output that
// build makes on t.g, one row per image.
func (t *trainer) means(build func() *graph.Node) [][]float64 {
	t.g.Reset()
	defer t.g.Reset()
	return rowsOf(graph.Sigmoid(build()).Value())
}

// encodeMean returns the means (n, top) of the top-level codes of images x.
func (t *trainer) encodeMean(x *tensor.Tensor) *tensor.Tensor {
	t.g.Reset()
	defer t.g.Reset()
	return t.m.encodeTop(t.g, x).Value().Clone()
}

// rowsOf splits a (n, d) tensor into n rows of float64.
func rowsOf(x *tensor.Tensor) [][]float64 {
	v := x.Values()
	n := x.Shape()[0]
	d := len(v) / max(n, 1)
	out := make([][]float64, n)
	for i := range out {
		out[i] = v[i*d : (i+1)*d]
	}
	return out
}

// scatter plots the 2-D codes (n, 2) coloured by digit.
func scatter(path string, codes *tensor.Tensor, labels []int) error {
	return gplot.WritePNG(path, gplot.Panel{Title: "latent means (top level) of the test digits", XLabel: "z₁", YLabel: "z₂",
		Curves: gplot.ByLabel(codes.Cast(tensor.Float64), labels, gplot.Names(10))})
}
