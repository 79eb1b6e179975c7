package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gradus-ml/gradus/probabilistic/gp"
)

// plotPosterior draws the observations, the posterior mean and the ±2σ
// band of a new observation over the grid, and writes a PNG to path.
func plotPosterior(path string, xs, ys, grid []float64, pred *gp.Prediction, c config) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("GP posterior (%s kernel), ±2σ band", c.Kernel)
	p.X.Label.Text = c.X
	p.Y.Label.Text = c.Y
	p.Add(plotter.NewGrid())

	mean := pred.Mean.Values()
	variance := pred.NoisyVar.Values()
	band := make(plotter.XYs, 0, 2*len(grid))
	line := make(plotter.XYs, len(grid))
	for i, x := range grid {
		sd := 2 * sqrt(variance[i])
		band = append(band, plotter.XY{X: x, Y: mean[i] + sd})
		line[i] = plotter.XY{X: x, Y: mean[i]}
	}
	for i := len(grid) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: grid[i], Y: mean[i] - 2*sqrt(variance[i])})
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return err
	}
	poly.Color = color.NRGBA{R: 0, G: 114, B: 178, A: 70}
	poly.LineStyle.Width = 0
	ml, err := plotter.NewLine(line)
	if err != nil {
		return err
	}
	ml.Color = color.RGBA{0, 114, 178, 255}
	ml.Width = vg.Points(1.2)
	obs := make(plotter.XYs, len(xs))
	for i := range xs {
		obs[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	sc, err := plotter.NewScatter(obs)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Color = color.RGBA{213, 94, 0, 255}
	sc.GlyphStyle.Radius = vg.Points(1)
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	p.Add(poly, ml, sc)
	p.Legend.Add("observations", sc)
	p.Legend.Add("posterior mean", ml)
	p.Legend.Add("±2σ", poly)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Legend.YOffs = -vg.Points(4)

	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return p.Save(9*vg.Inch, 4.5*vg.Inch, path)
}

func sqrt(v float64) float64 {
	// Variances are clamped at zero by Predict; guard anyway for the band.
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v)
}
