// Command bayes-logreg samples the posterior of a Bayesian logistic
// regression on the breast-cancer set shipped with Gradus (569 tumours,
// malignant or benign) with NUTS: five standardised features plus an
// intercept, the prior θ ~ N(0, I). It prints the sampler's summary table
// (means, quantiles, R̂, bulk and tail ESS), compares the posterior means
// and standard deviations with the Laplace approximation of package
// probabilistic/logreg, and draws trace and density plots.
//
//	go run ./examples/bayes-logreg [-seed 1] [-chains 4] [-draws 1000] [-out out/bayes-logreg] [-json]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/inference"
	"github.com/gradus-ml/gradus/probabilistic/logreg"
	"github.com/gradus-ml/gradus/tensor"
)

// features are the columns used, standardised.
var features = []string{"mean_radius", "mean_texture", "mean_smoothness", "mean_concave_points", "mean_symmetry"}

// quantity is one parameter's posterior by NUTS and by Laplace.
type quantity struct {
	Name        string  `json:"name"`
	Mean        float64 `json:"mean"`
	SD          float64 `json:"sd"`
	Rhat        float64 `json:"rhat"`
	BulkESS     float64 `json:"ess_bulk"`
	LaplaceMean float64 `json:"laplace_mean"`
	LaplaceSD   float64 `json:"laplace_sd"`
}

type result struct {
	Quantities  []quantity `json:"quantities"`
	Divergences int        `json:"divergences"`
	Plots       []string   `json:"plots,omitempty"`
}

func main() {
	seed := flag.Uint64("seed", 1, "seed of the chains")
	chains := flag.Int("chains", 4, "chains")
	draws := flag.Int("draws", 1000, "draws per chain after 1000 warmup iterations")
	out := flag.String("out", "out/bayes-logreg", "directory for the PNGs (empty: none)")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	flag.Parse()
	res, err := run(*seed, *chains, 1000, *draws, *out, !*asJSON)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bayes-logreg:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
	}
}

func run(seed uint64, chains, warmup, draws int, out string, verbose bool) (res result, err error) {
	tab, err := data.LoadCSV("sklearn/breast_cancer.csv")
	if err != nil {
		return res, err
	}
	n, d := len(tab.Rows), len(features)
	flat := make([]float64, 0, n*d)
	labels := make([]int, n)
	it := tab.Column("target")
	for i, r := range tab.Rows {
		for _, f := range features {
			j := tab.Column(f)
			if j < 0 {
				return res, fmt.Errorf("breast_cancer.csv has no column %q", f)
			}
			flat = append(flat, r[j])
		}
		labels[i] = int(r[it])
	}
	x := tensor.FromFloat64s(flat, n, d)
	data.Standardise(x)
	y := make([]float64, n)
	for i, l := range labels {
		y[i] = float64(l)
	}
	yt := tensor.FromFloat64s(y, n, 1)

	model := inference.Model{
		Params: []inference.Param{{Name: "w", Shape: []int{d, 1}}, {Name: "b", Shape: []int{}}},
		LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node {
			w, b := p["w"], p["b"]
			eta := graph.Add(graph.MatMul(g.Const(x), w), b) // (n, 1)
			// Σ y·η − softplus(η): the Bernoulli log-likelihood in logits.
			ll := graph.Sum(graph.Sub(graph.Mul(g.Const(yt), eta), graph.Softplus(eta)), nil, false)
			prior := graph.MulScalar(graph.Add(graph.Sum(graph.Square(w), nil, false), graph.Square(b)), -0.5)
			return graph.Add(ll, prior)
		},
	}
	if verbose {
		fmt.Printf("NUTS: %d chains × (%d warmup + %d draws) on %d tumours, %d features + intercept\n", chains, warmup, draws, n, d)
	}
	r, err := inference.NUTS(model, inference.NUTSOptions{Chains: chains, Warmup: warmup, Draws: draws, Seed: seed})
	if err != nil {
		return res, err
	}
	for _, v := range r.Divergences {
		res.Divergences += v
	}
	post, err := logreg.FitLaplace(x, labels, logreg.BayesConfig{Alpha: 1})
	if err != nil {
		return res, err
	}
	lmean, lsd, err := laplaceMoments(post)
	if err != nil {
		return res, err
	}
	for k, name := range r.Names {
		ch := r.Column(name)
		var all []float64
		for _, c := range ch {
			all = append(all, c...)
		}
		m, sd := meanSD(all)
		label := name
		if k < d {
			label = "w:" + features[k]
		}
		res.Quantities = append(res.Quantities, quantity{Name: label, Mean: m, SD: sd, Rhat: inference.Rhat(ch),
			BulkESS: inference.BulkESS(ch), LaplaceMean: lmean[k], LaplaceSD: lsd[k]})
	}
	if verbose {
		fmt.Print(r.Summary())
		fmt.Printf("\n%-28s %9s %9s %9s %9s\n", "against Laplace", "NUTS mean", "Laplace", "NUTS sd", "Laplace")
		for _, q := range res.Quantities {
			fmt.Printf("%-28s %9.4f %9.4f %9.4f %9.4f\n", q.Name, q.Mean, q.LaplaceMean, q.SD, q.LaplaceSD)
		}
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return res, err
		}
		for k, name := range r.Names {
			path := filepath.Join(out, fmt.Sprintf("trace_%d.png", k))
			title := res.Quantities[k].Name
			if err := tracePlot(path, title, r.Column(name)); err != nil {
				return res, err
			}
			res.Plots = append(res.Plots, path)
		}
		if verbose {
			fmt.Printf("trace and density plots in %s\n", out)
		}
	}
	return res, nil
}

// laplaceMoments returns the Laplace posterior's means (θ*: weights then
// intercept, the sampler's order) and standard deviations √diag(H⁻¹).
func laplaceMoments(p *logreg.Posterior) (mean, sd []float64, err error) {
	theta := p.Theta()
	k := len(theta)
	h := tensor.FromFloat64s(p.Hessian, k, k)
	inv, err := tensor.Inverse(h)
	if err != nil {
		return nil, nil, err
	}
	sd = make([]float64, k)
	for i := range k {
		sd[i] = math.Sqrt(inv.At(i, i))
	}
	return theta, sd, nil
}

func meanSD(x []float64) (float64, float64) {
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)-1))
}

// tracePlot draws each chain's draws against the iteration and, on the
// right, a histogram of all draws.
func tracePlot(path, title string, chains [][]float64) error {
	tr := plot.New()
	tr.Title.Text, tr.X.Label.Text = "trace: "+title, "iteration"
	cols := []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}}
	var all plotter.Values
	for c, ch := range chains {
		pts := make(plotter.XYs, len(ch))
		for i, v := range ch {
			pts[i] = plotter.XY{X: float64(i), Y: v}
			all = append(all, v)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = cols[c%len(cols)]
		l.Width = vg.Points(0.5)
		tr.Add(l)
	}
	hist := plot.New()
	hist.Title.Text = "density: " + title
	h, err := plotter.NewHist(all, 40)
	if err != nil {
		return err
	}
	h.Normalize(1)
	hist.Add(h)
	img := vgimg.New(10*vg.Inch, 3.5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{tr, hist}}, tiles, dc)
	tr.Draw(canvases[0][0])
	hist.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
