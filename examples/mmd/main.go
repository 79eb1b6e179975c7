// Command mmd runs kernel two-sample and independence tests on data
// shipped with Gradus: MMD² between 100 MNIST 3s and 100 MNIST 8s (a
// different distribution), between two disjoint sets of 3s (the same),
// and HSIC between x and x² + noise (dependent but uncorrelated). It
// prints each statistic and permutation p-value and draws the null
// distribution of the two MNIST tests with the observed values.
//
//	go run ./examples/mmd [-n 100] [-perms 500] [-seed 1] [-out out/mmd.png] [-json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/kerneltest"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

type test struct {
	Name      string  `json:"name"`
	Statistic float64 `json:"statistic"`
	PValue    float64 `json:"p_value"`
}

type result struct {
	Tests []test `json:"tests"`
	Plot  string `json:"plot,omitempty"`
}

func main() {
	n := flag.Int("n", 100, "images per sample")
	perms := flag.Int("perms", 500, "permutations per test")
	seed := flag.Uint64("seed", 1, "seed of the permutations and the toy data")
	out := flag.String("out", "out/mmd.png", "PNG of the null distributions (empty: none)")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	flag.Parse()
	res, err := run(*n, *perms, *seed, *out, !*asJSON)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mmd:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
	}
}

// digits returns the first count images of class c from index from on.
func digits(x *tensor.Tensor, labels []int, c, from, count int) *tensor.Tensor {
	var idx []int
	for i := from; i < len(labels) && len(idx) < count; i++ {
		if labels[i] == c {
			idx = append(idx, i)
		}
	}
	return tensor.Reshape(tensor.IndexSelect(x, 0, idx), len(idx), 784).Cast(tensor.Float64)
}

func run(n, perms int, seed uint64, out string, verbose bool) (res result, err error) {
	x, labels, err := data.MNIST("train")
	if err != nil {
		return res, err
	}
	threes, eights := digits(x, labels, 3, 0, n), digits(x, labels, 8, 0, n)
	moreThrees := digits(x, labels, 3, 4000, n)
	k := kernel.NewRBF(kerneltest.MedianHeuristic(threes, eights))
	opts := kerneltest.TwoSampleOptions{Kernel: k, Estimator: kerneltest.Unbiased, Permutations: perms, Seed: seed}
	diff, err := kerneltest.TwoSample(context.Background(), threes, eights, opts)
	if err != nil {
		return res, err
	}
	same, err := kerneltest.TwoSample(context.Background(), threes, moreThrees, opts)
	if err != nil {
		return res, err
	}
	rng := tensor.NewRNG(seed)
	u := rng.Normal(tensor.Float64, 0, 1, 200, 1)
	v := tensor.Add(tensor.Mul(u, u), rng.Normal(tensor.Float64, 0, 0.3, 200, 1))
	ind, err := kerneltest.Independence(context.Background(), u, v, kerneltest.IndependenceOptions{KernelX: kernel.NewRBF(1), KernelY: kernel.NewRBF(1), Permutations: perms, Seed: seed})
	if err != nil {
		return res, err
	}
	res.Tests = []test{{"MMD² 3s vs 8s", diff.Statistic, diff.PValue}, {"MMD² 3s vs 3s", same.Statistic, same.PValue},
		{"HSIC x vs x²+ε", ind.Statistic, ind.PValue}}
	if verbose {
		for _, t := range res.Tests {
			fmt.Printf("%-16s statistic %10.6f  p-value %.4f\n", t.Name, t.Statistic, t.PValue)
		}
	}
	if out != "" {
		if err := drawNulls(out, diff, same); err != nil {
			return res, err
		}
		res.Plot = out
		if verbose {
			fmt.Println("null distributions:", out)
		}
	}
	return res, nil
}

func drawNulls(path string, diff, same kerneltest.Result) error {
	pl := plot.New()
	pl.Title.Text = "permutation null of unbiased MMD² (lines: observed)"
	pl.X.Label.Text = "MMD²"
	for i, r := range []kerneltest.Result{same, diff} {
		h, err := plotter.NewHist(plotter.Values(r.Null), 30)
		if err != nil {
			return err
		}
		h.FillColor = []color.Color{color.NRGBA{31, 119, 180, 120}, color.NRGBA{214, 39, 40, 120}}[i]
		pl.Add(h)
		l, err := plotter.NewLine(plotter.XYs{{X: r.Statistic, Y: 0}, {X: r.Statistic, Y: float64(len(r.Null)) / 6}})
		if err != nil {
			return err
		}
		l.Color = []color.Color{color.NRGBA{31, 119, 180, 255}, color.NRGBA{214, 39, 40, 255}}[i]
		l.Width = vg.Points(2)
		pl.Add(l)
		pl.Legend.Add([]string{"3s vs 3s", "3s vs 8s"}[i], l)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return pl.Save(8*vg.Inch, 4.5*vg.Inch, path)
}
