// Command gpc separates iris versicolor from virginica (Fisher 1936,
// shipped with Gradus) by Gaussian-process classification on two
// features, petal length and petal width: a logistic likelihood, the
// Laplace approximation found by Newton's method, hyperparameters fitted
// by maximising the approximate log marginal likelihood with L-BFGS
// (gradients by autodiff, the moving mode included), and predictive
// probabilities by the probit approximation. It prints the training
// accuracy and the LML and draws the probability surface with the points
// (surface.png in -out).
//
//	go run ./examples/gpc [-seed 1] [-data sklearn/iris.csv] [-out out/gpc] [-json] [-quiet]
package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Program{
		Name: "gpc", Data: "sklearn/iris.csv", DataUsage: "embedded data set name or CSV path (iris layout)",
		Run: func(env *cli.Env) (any, error) { return run(env) },
	}
}

// result holds the figures the program reports.
type result struct {
	N           int     `json:"n"`
	Accuracy    float64 `json:"train_accuracy"`
	LML         float64 `json:"lml"`         // approximate log marginal likelihood after fitting
	InitialLML  float64 `json:"initial_lml"` // before fitting
	Lengthscale float64 `json:"lengthscale"` // in standardised units
	Variance    float64 `json:"variance"`
	Plot        string  `json:"plot,omitempty"`
}

// columns of the iris CSV used here.
const (
	colLength = "petal_length_cm"
	colWidth  = "petal_width_cm"
	colTarget = "target"
)

// run fits the classifier to -data; -seed draws the fit's random restarts.
func run(env *cli.Env) (res result, err error) {
	defer tensor.Recover(&err)
	tab, err := data.LoadCSV(env.Data)
	if err != nil {
		return res, err
	}
	il, iw, it := tab.Column(colLength), tab.Column(colWidth), tab.Column(colTarget)
	if il < 0 || iw < 0 || it < 0 {
		return res, fmt.Errorf("%s: need columns %s, %s and %s, have %v", env.Data, colLength, colWidth, colTarget, tab.Columns)
	}
	// Versicolor (target 1) is class 0, virginica (target 2) class 1.
	var raw [][2]float64
	var labels []int
	for _, r := range tab.Rows {
		switch r[it] {
		case 1, 2:
			raw = append(raw, [2]float64{r[il], r[iw]})
			labels = append(labels, int(r[it])-1)
		}
	}
	n := len(raw)
	if n < 2 {
		return res, errors.New("no versicolor or virginica rows")
	}
	// Standardise each feature, so one lengthscale suits both.
	var mean, sd [2]float64
	for j := 0; j < 2; j++ {
		for _, p := range raw {
			mean[j] += p[j]
		}
		mean[j] /= float64(n)
		for _, p := range raw {
			sd[j] += (p[j] - mean[j]) * (p[j] - mean[j])
		}
		sd[j] = math.Sqrt(sd[j] / float64(n))
	}
	std := func(p [2]float64) []float64 { return []float64{(p[0] - mean[0]) / sd[0], (p[1] - mean[1]) / sd[1]} }
	flat := make([]float64, 0, 2*n)
	for _, p := range raw {
		flat = append(flat, std(p)...)
	}
	x := tensor.FromFloat64s(flat, n, 2)

	kernel := kernel.NewScale(kernel.NewRBF(1), 1)
	opts := gp.ClassifierOptions{
		Kernel:   kernel,
		Restarts: 3,
		Seed:     env.Seed,
		Bounds:   map[string][2]float64{"rbf.lengthscale": {0.05, 20}, "scale.variance": {0.01, 1000}},
	}
	c, err := gp.NewClassifier(x, labels, opts)
	if err != nil {
		return res, err
	}
	if res.InitialLML, err = c.LogMarginalLikelihood(); err != nil {
		return res, err
	}
	if c, err = gp.FitClassifier(env.Context(), x, labels, opts); err != nil {
		if !errors.Is(err, tensor.ErrNotConverged) {
			return res, err
		}
		env.Println(err, "(keeping the best hyperparameters found)")
	}
	fit := c.FitResult()
	res.N, res.LML = n, fit.LML
	res.Lengthscale = c.Hyperparam("rbf.lengthscale").Value()
	res.Variance = c.Hyperparam("scale.variance").Value()

	pred, err := c.Predict(x)
	if err != nil {
		return res, err
	}
	correct := 0
	for i, p := range pred.Prob {
		if (p > 0.5) == (labels[i] == 1) {
			correct++
		}
	}
	res.Accuracy = float64(correct) / float64(n)
	env.Printf("iris versicolor vs virginica: %d points, features petal length and width (standardised)\n", n)
	env.Printf("approximate log marginal likelihood: %.4f before fitting, %.4f after (%d L-BFGS iterations over %d starts)\n",
		res.InitialLML, res.LML, fit.Iterations, len(fit.Restarts))
	env.Printf("hyperparameters: lengthscale %.4f, variance %.4f\n", res.Lengthscale, res.Variance)
	env.Printf("training accuracy: %.4f (%d/%d)\n", res.Accuracy, correct, n)
	res.Plot = env.Path("surface.png")
	if err := drawSurface(res.Plot, c, raw, labels, std); err != nil {
		return res, err
	}
	env.Println("wrote", res.Plot)
	return res, nil
}

// drawSurface writes a PNG of p(virginica | x) over the feature plane with
// the training points.
func drawSurface(path string, c *gp.Classifier, raw [][2]float64, labels []int, std func([2]float64) []float64) error {
	const cols, rows = 120, 100
	gr := struct{ xs, ys []float64 }{make([]float64, cols), make([]float64, rows)}
	for i := range gr.xs {
		gr.xs[i] = 2.5 + 5*float64(i)/float64(cols-1)
	}
	for i := range gr.ys {
		gr.ys[i] = 0.8 + 1.9*float64(i)/float64(rows-1)
	}
	flat := make([]float64, 0, 2*cols*rows)
	for _, y := range gr.ys {
		for _, x := range gr.xs {
			flat = append(flat, std([2]float64{x, y})...)
		}
	}
	pred, err := c.Predict(tensor.FromFloat64s(flat, cols*rows, 2))
	if err != nil {
		return err
	}
	surface := &plot.Map{X: gr.xs, Y: gr.ys, Z: make([][]float64, rows)}
	for r := range rows {
		surface.Z[r] = pred.Prob[r*cols : (r+1)*cols]
	}
	pts := make([]float64, 0, 2*len(raw))
	for _, q := range raw {
		pts = append(pts, q[0], q[1])
	}
	return plot.WritePNG(path, plot.Panel{Title: "GP classification (Laplace): p(virginica | petal length, width)",
		XLabel: "petal length (cm)", YLabel: "petal width (cm)", Map: surface,
		Curves: plot.ByLabel(tensor.FromFloat64s(pts, len(raw), 2), labels, []string{"versicolor", "virginica"})})
}
