// Command gpc separates iris versicolor from virginica (Fisher 1936,
// shipped with Gradus) by Gaussian-process classification on two
// features, petal length and petal width: a logistic likelihood, the
// Laplace approximation found by Newton's method, hyperparameters fitted
// by maximising the approximate log marginal likelihood with L-BFGS
// (gradients by autodiff, the moving mode included), and predictive
// probabilities by the probit approximation. It prints the training
// accuracy and the LML and draws the probability surface with the points.
//
//	go run ./examples/gpc [-seed 1] [-data sklearn/iris.csv] [-out out/gpc.png] [-json]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the fit's random restarts")
	dataPath := flag.String("data", "sklearn/iris.csv", "embedded data set name or CSV path (iris layout)")
	out := flag.String("out", "out/gpc.png", "PNG of the probability surface (empty: none)")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	flag.Parse()
	res, err := run(config{seed: *seed, data: *dataPath, out: *out, verbose: !*asJSON})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpc:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
	}
}

type config struct {
	seed    uint64
	data    string
	out     string
	verbose bool
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

func run(cfg config) (res result, err error) {
	defer tensor.Recover(&err)
	tab, err := data.LoadCSV(cfg.data)
	if err != nil {
		return res, err
	}
	il, iw, it := tab.Column(colLength), tab.Column(colWidth), tab.Column(colTarget)
	if il < 0 || iw < 0 || it < 0 {
		return res, fmt.Errorf("%s: need columns %s, %s and %s, have %v", cfg.data, colLength, colWidth, colTarget, tab.Columns)
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
		Seed:     cfg.seed,
		Bounds:   map[string][2]float64{"rbf.lengthscale": {0.05, 20}, "scale.variance": {0.01, 1000}},
	}
	c, err := gp.NewClassifier(x, labels, opts)
	if err != nil {
		return res, err
	}
	if res.InitialLML, err = c.LogMarginalLikelihood(); err != nil {
		return res, err
	}
	if c, err = gp.FitClassifier(context.Background(), x, labels, opts); err != nil {
		return res, err
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
	if cfg.verbose {
		fmt.Printf("iris versicolor vs virginica: %d points, features petal length and width (standardised)\n", n)
		fmt.Printf("approximate log marginal likelihood: %.4f before fitting, %.4f after (%d L-BFGS iterations over %d starts)\n",
			res.InitialLML, res.LML, fit.Iterations, len(fit.Restarts))
		fmt.Printf("hyperparameters: lengthscale %.4f, variance %.4f\n", res.Lengthscale, res.Variance)
		fmt.Printf("training accuracy: %.4f (%d/%d)\n", res.Accuracy, correct, n)
	}
	if cfg.out != "" {
		if err := drawSurface(cfg.out, c, raw, labels, std); err != nil {
			return res, err
		}
		res.Plot = cfg.out
		if cfg.verbose {
			fmt.Println("wrote", cfg.out)
		}
	}
	return res, nil
}

// grid is the predictive probability on a regular grid, for the heat map.
type grid struct {
	xs, ys []float64
	z      []float64 // z[r*len(xs)+c]
}

func (g grid) Dims() (c, r int)   { return len(g.xs), len(g.ys) }
func (g grid) Z(c, r int) float64 { return g.z[r*len(g.xs)+c] }
func (g grid) X(c int) float64    { return g.xs[c] }
func (g grid) Y(r int) float64    { return g.ys[r] }

// drawSurface writes a PNG of p(virginica | x) over the feature plane with
// the training points and the 0.5 contour.
func drawSurface(path string, c *gp.Classifier, raw [][2]float64, labels []int, std func([2]float64) []float64) error {
	const cols, rows = 120, 100
	gr := grid{xs: make([]float64, cols), ys: make([]float64, rows)}
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
	gr.z = pred.Prob

	p := plot.New()
	p.Title.Text = "GP classification (Laplace): p(virginica | petal length, width)"
	p.X.Label.Text = "petal length (cm)"
	p.Y.Label.Text = "petal width (cm)"
	pal := moreland.SmoothBlueRed().Palette(64)
	hm := plotter.NewHeatMap(gr, pal)
	hm.Min, hm.Max = 0, 1
	hm.Rasterized = true
	p.Add(hm)
	if ct := plotter.NewContour(gr, []float64{0.5}, nil); ct != nil {
		ct.LineStyles = []draw.LineStyle{{Color: color.Black, Width: vg.Points(1.5)}}
		p.Add(ct)
	}
	for cls, name := range []string{"versicolor", "virginica"} {
		var pts plotter.XYs
		for i, q := range raw {
			if labels[i] == cls {
				pts = append(pts, plotter.XY{X: q[0], Y: q[1]})
			}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Radius = vg.Points(3)
		sc.GlyphStyle.Color = color.Black
		if cls == 0 {
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
		} else {
			sc.GlyphStyle.Shape = draw.TriangleGlyph{}
		}
		p.Add(sc)
		p.Legend.Add(name, sc)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.X.Min, p.X.Max = gr.xs[0], gr.xs[cols-1]
	p.Y.Min, p.Y.Max = gr.ys[0], gr.ys[rows-1]
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return p.Save(7*vg.Inch, 5*vg.Inch, path)
}
