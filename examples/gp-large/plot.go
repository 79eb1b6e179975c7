package main

import (
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/plot"
)

// plotTrace draws the LML estimate per Adam step into lml.png in -out and
// returns its path.
func plotTrace(env *cli.Env, trace []float64) (string, error) {
	path := env.Path("lml.png")
	return path, plot.WritePNG(path, plot.Panel{Title: "CG estimate of the log marginal likelihood", XLabel: "Adam step", YLabel: "LML",
		Curves: []plot.Curve{{Name: "LML", Y: trace, Style: plot.Line}}})
}
