package main

import (
	"path/filepath"

	"github.com/gradus-ml/gradus/plot"
)

// plotTrace draws the LML estimate per Adam step and writes
// dir/lml.png, returning its path.
func plotTrace(dir string, trace []float64) (string, error) {
	path := filepath.Join(dir, "lml.png")
	return path, plot.WritePNG(path, plot.Panel{Title: "CG estimate of the log marginal likelihood", XLabel: "Adam step", YLabel: "LML",
		Curves: []plot.Curve{{Name: "LML", Y: trace, Style: plot.Line}}})
}
