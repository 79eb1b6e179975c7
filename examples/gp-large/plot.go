package main

import (
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotTrace draws the LML estimate per Adam step and writes
// dir/lml.png, returning its path.
func plotTrace(dir string, trace []float64) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := plot.New()
	p.Title.Text = "CG estimate of the log marginal likelihood"
	p.X.Label.Text = "Adam step"
	p.Y.Label.Text = "LML"
	p.Add(plotter.NewGrid())
	pts := make(plotter.XYs, len(trace))
	for i, v := range trace {
		pts[i] = plotter.XY{X: float64(i + 1), Y: v}
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return "", err
	}
	l.Width = vg.Points(1.5)
	p.Add(l)
	path := filepath.Join(dir, "lml.png")
	return path, p.Save(6*vg.Inch, 4*vg.Inch, path)
}
