// Command gmm fits a Gaussian mixture with full covariances to iris (the
// four raw features, K = 3) by EM, or by gradient from the EM fit, prints
// the log-likelihood per iteration and draws the fitted components as
// 2-σ ellipses over the petal measurements.
//
//	go run ./examples/gmm [-init kmeans|rows:0,50,100] [-fit em|gradient] [-tol 1e-3] [-max-iter 100] [-seed 1] [-data sklearn/iris.csv] [-out out/gmm] [-json]
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
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/tensor"
)

// result is what -json prints.
type result struct {
	MeanLogLikelihood float64   `json:"mean_log_likelihood"`
	Iterations        int       `json:"iterations"`
	Weights           []float64 `json:"weights"`
	Trace             []float64 `json:"log_likelihood_per_iteration"`
	Plot              string    `json:"plot,omitempty"`
}

// config holds the flags.
type config struct {
	init, fit, data, out string
	tol                  float64
	maxIter              int
	seed                 uint64
	verbose              bool
}

func main() {
	var c config
	flag.StringVar(&c.init, "init", "kmeans", "kmeans (k-means starts) or rows:i,j,k (means at those rows, identity covariances, equal weights)")
	flag.StringVar(&c.fit, "fit", "em", "em, or gradient (L-BFGS on the log-likelihood from the EM fit)")
	flag.StringVar(&c.data, "data", "sklearn/iris.csv", "CSV with a target column (a name under data/files or a path)")
	flag.StringVar(&c.out, "out", "out/gmm", "directory for the PNG (empty: none)")
	flag.Float64Var(&c.tol, "tol", 1e-3, "stop when the mean log-likelihood rises by less")
	flag.IntVar(&c.maxIter, "max-iter", 100, "EM iterations")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the k-means starts")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	flag.Parse()
	c.verbose = !*asJSON
	res, err := run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gmm:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
	}
}

func run(c config) (res result, err error) {
	x, _, err := data.Classes(c.data, "target")
	if err != nil {
		return res, err
	}
	const k = 3
	opts := mixture.GaussianMixtureOptions{K: k, Tol: c.tol, MaxIter: c.maxIter, Seed: c.seed, Restarts: 5}
	switch {
	case c.init == "kmeans":
	case strings.HasPrefix(c.init, "rows:"):
		fields := strings.Split(strings.TrimPrefix(c.init, "rows:"), ",")
		if len(fields) != k {
			return res, fmt.Errorf("-init %q: want %d rows", c.init, k)
		}
		rows := make([]*tensor.Tensor, k)
		for j, f := range fields {
			i, err := strconv.Atoi(f)
			if err != nil || i < 0 || i >= x.Shape()[0] {
				return res, fmt.Errorf("-init %q: bad row %q for %d rows", c.init, f, x.Shape()[0])
			}
			rows[j] = tensor.Slice(x, 0, i, i+1, 1)
		}
		opts.InitMeans = tensor.Concat(0, rows...)
	default:
		return res, fmt.Errorf("-init %q: want kmeans or rows:i,j,k", c.init)
	}
	m, err := mixture.FitGaussianMixture(context.Background(), x, opts)
	if err != nil && !errors.Is(err, tensor.ErrNotConverged) {
		return res, err
	}
	if err != nil && c.verbose {
		fmt.Println(err, "(keeping the last EM iterate)")
	}
	res.Trace = m.Trace
	if c.verbose {
		for i, v := range m.Trace {
			fmt.Printf("EM iteration %3d: mean log-likelihood %.6f\n", i+1, v)
		}
	}
	switch c.fit {
	case "em":
	case "gradient":
		g, err := mixture.FitGaussianMixtureGradient(context.Background(), x, mixture.GaussianMixtureGradientOptions{Start: m})
		if err != nil && !errors.Is(err, tensor.ErrNotConverged) {
			return res, err
		}
		if c.verbose {
			fmt.Printf("L-BFGS from the EM fit: %d iterations, mean log-likelihood %.8f (EM %.8f)\n", g.Iterations, g.LogLikelihood, m.LogLikelihood)
		}
		res.Trace = append(res.Trace, g.LogLikelihood)
		m = g
	default:
		return res, fmt.Errorf("-fit %q: want em or gradient", c.fit)
	}
	res.MeanLogLikelihood, res.Iterations, res.Weights = m.LogLikelihood, m.Iterations, m.Weights
	if c.verbose {
		fmt.Printf("K = %d, full covariances: mean log-likelihood %.6f after %d iterations, weights %.4f\n",
			k, m.LogLikelihood, m.Iterations, m.Weights)
	}
	if c.out != "" {
		if err := os.MkdirAll(c.out, 0o755); err != nil {
			return res, err
		}
		res.Plot = filepath.Join(c.out, "gmm_ellipses.png")
		if err := ellipses(res.Plot, x, m, 2, 3); err != nil {
			return res, err
		}
		if c.verbose {
			fmt.Println("picture:", res.Plot)
		}
	}
	return res, nil
}

// ellipses draws the rows of x on features a and b, coloured by their most
// probable component, with each component's 2-σ ellipse in that plane.
func ellipses(path string, x *tensor.Tensor, m *mixture.GaussianMixture, a, b int) error {
	labels := m.Predict(x)
	k, d := len(m.Weights), m.Means.Shape()[1]
	pl := plot.New()
	pl.Title.Text = "iris: Gaussian mixture components (2 σ) on the petal measurements"
	pl.X.Label.Text, pl.Y.Label.Text = "petal length (cm)", "petal width (cm)"
	pts := make([]plotter.XYs, k)
	for i, l := range labels {
		pts[l] = append(pts[l], plotter.XY{X: x.At(i, a), Y: x.At(i, b)})
	}
	mv, cv := m.Means.Float64s(), m.Covariances.Float64s()
	for j := range k {
		s, err := plotter.NewScatter(pts[j])
		if err != nil {
			return err
		}
		s.GlyphStyle.Color, s.GlyphStyle.Shape, s.GlyphStyle.Radius = palette(j), draw.CircleGlyph{}, vg.Points(2)
		pl.Add(s)
		// The 2×2 marginal covariance [[p, q], [q, r]] and its eigenpairs.
		p, q, r := cv[j*d*d+a*d+a], cv[j*d*d+a*d+b], cv[j*d*d+b*d+b]
		mid, rad := (p+r)/2, math.Hypot((p-r)/2, q)
		l1, l2 := mid+rad, math.Max(mid-rad, 0)
		theta := 0.5 * math.Atan2(2*q, p-r)
		curve := make(plotter.XYs, 101)
		for t := range curve {
			phi := 2 * math.Pi * float64(t) / 100
			u, v := 2*math.Sqrt(l1)*math.Cos(phi), 2*math.Sqrt(l2)*math.Sin(phi)
			curve[t] = plotter.XY{X: mv[j*d+a] + u*math.Cos(theta) - v*math.Sin(theta), Y: mv[j*d+b] + u*math.Sin(theta) + v*math.Cos(theta)}
		}
		ln, err := plotter.NewLine(curve)
		if err != nil {
			return err
		}
		ln.Color, ln.Width = palette(j), vg.Points(1.5)
		pl.Add(ln)
		pl.Legend.Add(fmt.Sprintf("component %d (π = %.2f)", j, m.Weights[j]), s)
	}
	pl.Legend.Top = true
	return pl.Save(7*vg.Inch, 6*vg.Inch, path)
}

func palette(i int) color.Color {
	cs := []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}}
	return cs[i%len(cs)]
}
