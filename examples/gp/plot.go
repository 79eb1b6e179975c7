package main

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/gp"
)

// plotPosterior draws the observations, the posterior mean and the ±2σ
// band of a new observation over the grid, and writes a PNG to path.
func plotPosterior(path string, xs, ys, grid []float64, pred *gp.Prediction, c config) error {
	variance := pred.NoisyVar.Values()
	sd := make([]float64, len(variance))
	for i, v := range variance {
		sd[i] = math.Sqrt(math.Max(v, 0)) // Predict clamps at zero; guard anyway
	}
	axes := plot.Axes{Title: fmt.Sprintf("GP posterior (%s kernel), ±2σ band", c.Kernel), X: c.X, Y: c.Y}
	return plot.Posterior1D(path, axes, grid, pred.Mean.Values(), sd, xs, ys)
}
