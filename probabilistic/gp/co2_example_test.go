package gp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Fit a GP to ten years of the Mauna Loa CO₂ record (every fourth month,
// 1988-1997) with a smooth trend plus a yearly cycle, as in Rasmussen and
// Williams (2006, Gaussian Processes for Machine Learning, §5.4.3),
// predict past the data, and draw the posterior mean with its ±2 sd band
// to a PNG. The fitted period is one year, and the forecast a month past
// the last reading (364.34 ppm in December 1997) continues the record.
func ExampleFitExact_co2() {
	table, err := data.LoadCSV("co2.csv")
	if err != nil {
		panic(err)
	}
	years, err := table.Select("decimal_year")
	if err != nil {
		panic(err)
	}
	ppm, err := table.Select("ppm")
	if err != nil {
		panic(err)
	}
	x := tensor.Slice(years, 0, 348, 468, 4).Contiguous() // (30, 1)
	y := tensor.Slice(ppm, 0, 348, 468, 4).Contiguous()   // (30, 1)

	trend := kernel.Named("trend", kernel.NewScale(kernel.NewRBF(10), 1))
	yearly := kernel.Named("yearly", kernel.NewScale(kernel.NewPeriodic(1, 1), 0.1))
	m, err := gp.FitExact(context.Background(), x, y, gp.ExactOptions{
		Kernel: kernel.NewSum(trend, yearly), Normalize: true, Noise: 0.01, MaxIter: 500,
	})
	if err != nil {
		panic(err)
	}

	xs := tensor.Reshape(tensor.Linspace(tensor.Float64, 1988, 1999, 133), 133, 1)
	pred, err := m.Predict(xs)
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "gp-co2")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	err = plot.Posterior1D(filepath.Join(dir, "co2.png"), plot.Axes{Title: "Mauna Loa CO₂", X: "year", Y: "ppm"},
		xs.Values(), pred.Mean.Values(), tensor.Sqrt(pred.Var).Values(), x.Values(), y.Values())
	if err != nil {
		panic(err)
	}

	fmt.Printf("period %.2f years, trend lengthscale %.1f years, log marginal likelihood %.0f\n",
		m.Hyperparam("yearly.period").Value(), m.Hyperparam("trend.lengthscale").Value(), m.FitResult().LML)
	fmt.Printf("CO₂ at 1998.0: %.0f ± %.0f ppm\n", pred.Mean.At(120), 2*tensor.Sqrt(pred.Var).At(120))
	// Output:
	// period 1.00 years, trend lengthscale 3.5 years, log marginal likelihood 16
	// CO₂ at 1998.0: 364 ± 1 ppm
}
