// Command gmm fits a Gaussian mixture with full covariances to iris (the
// four raw features, K = 3) by EM, or by gradient from the EM fit, prints
// the log-likelihood per iteration and draws the fitted components as
// 2-σ ellipses over the petal measurements.
//
//	go run ./examples/gmm [-init kmeans|rows:0,50,100] [-fit em|gradient] [-tol 1e-3] [-max-iter 100] [-seed 1] [-data sklearn/iris.csv] [-out out/gmm] [-json] [-quiet]
package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/plot"
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
	Init    string  `flag:"init" help:"kmeans (k-means starts) or rows:i,j,k (means at those rows, identity covariances, equal weights)"`
	Fit     string  `flag:"fit" help:"em, or gradient (L-BFGS on the log-likelihood from the EM fit)"`
	Tol     float64 `flag:"tol" help:"stop when the mean log-likelihood rises by less"`
	MaxIter int     `flag:"max-iter" help:"EM iterations"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	p := cli.Program{Name: "gmm", Data: "sklearn/iris.csv", DataUsage: "CSV with a target column (a name under data/files or a path)"}
	return cli.Configured(p, config{Init: "kmeans", Fit: "em", Tol: 1e-3, MaxIter: 100}, run)
}

func run(c config, env *cli.Env) (res result, err error) {
	x, _, err := data.Classes(env.Data, "target")
	if err != nil {
		return res, err
	}
	const k = 3
	opts := mixture.GaussianMixtureOptions{K: k, Tol: c.Tol, MaxIter: c.MaxIter, Seed: env.Seed, Restarts: 5}
	switch {
	case c.Init == "kmeans":
	case strings.HasPrefix(c.Init, "rows:"):
		fields := strings.Split(strings.TrimPrefix(c.Init, "rows:"), ",")
		if len(fields) != k {
			return res, cli.BadFlagf("-init %q: want %d rows", c.Init, k)
		}
		rows := make([]*tensor.Tensor, k)
		for j, f := range fields {
			i, err := strconv.Atoi(f)
			if err != nil || i < 0 || i >= x.Shape()[0] {
				return res, cli.BadFlagf("-init %q: bad row %q for %d rows", c.Init, f, x.Shape()[0])
			}
			rows[j] = tensor.Slice(x, 0, i, i+1, 1)
		}
		opts.InitMeans = tensor.Concat(0, rows...)
	default:
		return res, cli.BadFlagf("-init %q: want kmeans or rows:i,j,k", c.Init)
	}
	m, err := mixture.FitGaussianMixture(env.Context(), x, opts)
	if err != nil && !errors.Is(err, tensor.ErrNotConverged) {
		return res, err
	}
	if err != nil {
		env.Println(err, "(keeping the last EM iterate)")
	}
	res.Trace = m.Trace
	for i, v := range m.Trace {
		env.Printf("EM iteration %3d: mean log-likelihood %.6f\n", i+1, v)
	}
	switch c.Fit {
	case "em":
	case "gradient":
		g, err := mixture.FitGaussianMixtureGradient(env.Context(), x, mixture.GaussianMixtureGradientOptions{Start: m})
		if err != nil && !errors.Is(err, tensor.ErrNotConverged) {
			return res, err
		}
		env.Printf("L-BFGS from the EM fit: %d iterations, mean log-likelihood %.8f (EM %.8f)\n", g.Iterations, g.LogLikelihood, m.LogLikelihood)
		res.Trace = append(res.Trace, g.LogLikelihood)
		m = g
	default:
		return res, cli.BadFlagf("-fit %q: want em or gradient", c.Fit)
	}
	res.MeanLogLikelihood, res.Iterations, res.Weights = m.LogLikelihood, m.Iterations, m.Weights
	env.Printf("K = %d, full covariances: mean log-likelihood %.6f after %d iterations, weights %.4f\n",
		k, m.LogLikelihood, m.Iterations, m.Weights)
	res.Plot = env.Path("gmm_ellipses.png")
	if err := ellipses(res.Plot, x, m, 2, 3); err != nil {
		return res, err
	}
	env.Println("picture:", res.Plot)
	return res, nil
}

// ellipses draws the rows of x on features a and b, coloured by their most
// probable component, with each component's 2-σ ellipse in that plane.
func ellipses(path string, x *tensor.Tensor, m *mixture.GaussianMixture, a, b int) error {
	labels := m.Predict(x)
	k, d := len(m.Weights), m.Means.Shape()[1]
	names := make([]string, k)
	for j := range k {
		names[j] = fmt.Sprintf("component %d (π = %.2f)", j, m.Weights[j])
	}
	xy := tensor.IndexSelect(x, 1, []int{a, b})
	curves := plot.ByLabel(xy, labels, names)
	mv, cv := m.Means.Float64s(), m.Covariances.Float64s()
	for j := range k {
		// The 2×2 marginal covariance [[p, q], [q, r]] and its eigenpairs.
		p, q, r := cv[j*d*d+a*d+a], cv[j*d*d+a*d+b], cv[j*d*d+b*d+b]
		mid, rad := (p+r)/2, math.Hypot((p-r)/2, q)
		l1, l2 := mid+rad, math.Max(mid-rad, 0)
		theta := 0.5 * math.Atan2(2*q, p-r)
		e := plot.Curve{Style: plot.Line, Like: j + 1, X: make([]float64, 101), Y: make([]float64, 101)}
		for t := range e.X {
			phi := 2 * math.Pi * float64(t) / 100
			u, v := 2*math.Sqrt(l1)*math.Cos(phi), 2*math.Sqrt(l2)*math.Sin(phi)
			e.X[t], e.Y[t] = mv[j*d+a]+u*math.Cos(theta)-v*math.Sin(theta), mv[j*d+b]+u*math.Sin(theta)+v*math.Cos(theta)
		}
		curves = append(curves, e)
	}
	return plot.WritePNG(path, plot.Panel{Title: "iris: Gaussian mixture components (2 σ)",
		XLabel: "petal length (cm)", YLabel: "petal width (cm)", Curves: curves})
}
