package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gradus-ml/gradus/graph"
	gplot "github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
)

// draw writes the pictures and returns their paths.
func (t *trainer) draw(o options, xt *tensor.Tensor, yt []int, res result) ([]string, error) {
	var paths []string
	save := func(name string, img image.Image) error {
		p := filepath.Join(o.Out, name)
		paths = append(paths, p)
		return savePNG(p, img)
	}
	// Samples from the prior: decode z ~ N(0, I) and show the Bernoulli means.
	if err := save("samples.png", grid(t.means(func() *graph.Node { return t.m.sample(t.g, tensor.NewRNG(o.Seed+3000), 100) }), 10, 3)); err != nil {
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
	if err := save("reconstructions.png", grid(both, perRow, 3)); err != nil {
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
		if err := save("manifold.png", grid(t.means(func() *graph.Node { return t.m.decodeTop(t.g, tensor.FromFloat32s(zs, k*k, 2)) }), k, 2)); err != nil {
			return nil, err
		}
		p := filepath.Join(o.Out, "latent_codes.png")
		paths = append(paths, p)
		if err := scatter(p, t.encodeMean(xt).Values(), yt); err != nil {
			return nil, err
		}
	}
	curve := filepath.Join(o.Out, "loss.png")
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

// grid tiles 28×28 images (values in [0, 1], white digits on black) in
// cols columns with a 2-pixel border, each pixel scale×scale.
func grid(imgs [][]float64, cols, scale int) *image.Gray {
	const side, pad = 28, 2
	rows := (len(imgs) + cols - 1) / cols
	cell := side*scale + pad
	img := image.NewGray(image.Rect(0, 0, cols*cell+pad, rows*cell+pad))
	for i := range img.Pix {
		img.Pix[i] = 60 // grey borders
	}
	for k, im := range imgs {
		x0, y0 := pad+(k%cols)*cell, pad+(k/cols)*cell
		for r := range side {
			for c := range side {
				v := uint8(math.Round(255 * math.Min(1, math.Max(0, im[r*side+c]))))
				for dy := range scale {
					for dx := range scale {
						img.SetGray(x0+c*scale+dx, y0+r*scale+dy, color.Gray{Y: v})
					}
				}
			}
		}
	}
	return img
}

func savePNG(path string, img image.Image) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// digitColours are ten distinguishable colours (matplotlib's tab10).
var digitColours = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// scatter plots the 2-D codes (n·2 values) coloured by digit.
func scatter(path string, codes []float64, labels []int) error {
	p := plot.New()
	p.Title.Text = "latent means (top level) of the test digits"
	p.X.Label.Text = "z₁"
	p.Y.Label.Text = "z₂"
	for d := range 10 {
		var xy plotter.XYs
		for i, l := range labels {
			if l == d {
				xy = append(xy, plotter.XY{X: codes[2*i], Y: codes[2*i+1]})
			}
		}
		if len(xy) == 0 {
			continue
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		s.GlyphStyle.Color = digitColours[d]
		s.GlyphStyle.Radius = vg.Points(1.6)
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(s)
		p.Legend.Add(fmt.Sprint(d), s)
	}
	p.Legend.Top = true
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return p.Save(7*vg.Inch, 6*vg.Inch, path)
}
