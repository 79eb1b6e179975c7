// Command mmd runs kernel two-sample and independence tests on data
// shipped with Gradus: MMD² between 100 MNIST 3s and 100 MNIST 8s (a
// different distribution), between two disjoint sets of 3s (the same),
// and HSIC between x and x² + noise (dependent but uncorrelated). It
// prints each statistic and permutation p-value and draws the null
// distribution of the two MNIST tests with the observed values (nulls.png
// in -out).
//
//	go run ./examples/mmd [-n 100] [-perms 500] [-seed 1] [-out out/mmd] [-json] [-quiet]
package main

import (
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/learn/kerneltest"
	"github.com/gradus-ml/gradus/plot"
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

func main() { cli.Main(program()) }

// config holds the flags.
type config struct {
	N     int `flag:"n" help:"images per sample"`
	Perms int `flag:"perms" help:"permutations per test"`
}

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "mmd"}, config{N: 100, Perms: 500}, run)
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

func run(c config, env *cli.Env) (res result, err error) {
	n, perms := c.N, c.Perms
	x, labels, err := data.MNIST("train")
	if err != nil {
		return res, err
	}
	threes, eights := digits(x, labels, 3, 0, n), digits(x, labels, 8, 0, n)
	moreThrees := digits(x, labels, 3, 4000, n)
	k := kernel.NewRBF(kerneltest.MedianHeuristic(threes, eights))
	opts := kerneltest.TwoSampleOptions{Kernel: k, Estimator: kerneltest.Unbiased, Permutations: perms, Seed: env.Seed}
	diff, err := kerneltest.TwoSample(env.Context(), threes, eights, opts)
	if err != nil {
		return res, err
	}
	same, err := kerneltest.TwoSample(env.Context(), threes, moreThrees, opts)
	if err != nil {
		return res, err
	}
	rng := tensor.NewRNG(env.Seed)
	u := rng.Normal(tensor.Float64, 0, 1, 200, 1)
	v := tensor.Add(tensor.Mul(u, u), rng.Normal(tensor.Float64, 0, 0.3, 200, 1))
	ind, err := kerneltest.Independence(env.Context(), u, v, kerneltest.IndependenceOptions{KernelX: kernel.NewRBF(1), KernelY: kernel.NewRBF(1), Permutations: perms, Seed: env.Seed})
	if err != nil {
		return res, err
	}
	res.Tests = []test{{"MMD² 3s vs 8s", diff.Statistic, diff.PValue}, {"MMD² 3s vs 3s", same.Statistic, same.PValue},
		{"HSIC x vs x²+ε", ind.Statistic, ind.PValue}}
	for _, t := range res.Tests {
		env.Printf("%-16s statistic %10.6f  p-value %.4f\n", t.Name, t.Statistic, t.PValue)
	}
	res.Plot = env.Path("nulls.png")
	if err := drawNulls(res.Plot, diff, same); err != nil {
		return res, err
	}
	env.Println("null distributions:", res.Plot)
	return res, nil
}

// drawNulls draws each MNIST test's permutation null with its observed
// statistic.
func drawNulls(path string, diff, same kerneltest.Result) error {
	panel := func(name string, r kerneltest.Result) plot.Panel {
		return plot.Panel{Title: "unbiased MMD², " + name, XLabel: "MMD²", YLabel: "density", Curves: []plot.Curve{
			{Name: "permutation null", Y: r.Null, Style: plot.Histogram},
			{Name: "observed", X: []float64{r.Statistic}, Style: plot.VLines}}}
	}
	return plot.WritePNG(path, panel("3s vs 3s", same), panel("3s vs 8s", diff))
}
