// Command svm trains support-vector machines on the iris flowers shipped
// with Gradus: a C-SVC with an RBF kernel on the two petal features (all
// three species, one-vs-one), reports its training accuracy, support
// vectors and the duality gap that certifies each binary problem's
// optimum, and draws the decision regions with the support vectors.
//
//	go run ./examples/svm [-c 1] [-lengthscale 1] [-out out/svm.png] [-json]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/svm"
	"github.com/gradus-ml/gradus/tensor"
)

type result struct {
	Accuracy       float64   `json:"train_accuracy"`
	SupportVectors int       `json:"support_vectors"`
	Gaps           []float64 `json:"duality_gaps"`
	Primal         []float64 `json:"primal_objectives"`
	Plot           string    `json:"plot,omitempty"`
}

func main() {
	c := flag.Float64("c", 1, "box constraint C")
	ls := flag.Float64("lengthscale", 1, "RBF lengthscale (γ = 1/(2ℓ²))")
	out := flag.String("out", "out/svm.png", "PNG of the decision regions (empty: none)")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	flag.Parse()
	res, err := run(*c, *ls, *out, !*asJSON)
	if err != nil {
		fmt.Fprintln(os.Stderr, "svm:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
	}
}

func run(c, ls float64, out string, verbose bool) (res result, err error) {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		return res, err
	}
	petals := tensor.Slice(x, 1, 2, 4, 1).Contiguous()
	m, err := svm.FitSVC(petals, labels, gp.NewRBF(ls), svm.Options{C: c, Tol: 1e-6})
	if err != nil {
		return res, err
	}
	pred := m.Predict(petals)
	right := 0
	for i, p := range pred {
		if p == labels[i] {
			right++
		}
	}
	res.Accuracy = float64(right) / float64(len(labels))
	seen := map[int]bool{}
	for _, b := range m.Machines {
		res.Gaps = append(res.Gaps, b.Gap)
		res.Primal = append(res.Primal, b.Primal)
		for _, i := range b.Support {
			seen[i] = true
		}
		if verbose {
			fmt.Printf("classes %d vs %d: %d support vectors, primal %.6f, dual %.6f, gap %.2e, %d SMO steps\n",
				b.Positive, b.Negative, len(b.Support), b.Primal, b.Dual, b.Gap, b.Iterations)
		}
	}
	res.SupportVectors = len(seen)
	if verbose {
		fmt.Printf("training accuracy %.1f%% with %d distinct support vectors (C = %g, ℓ = %g)\n", 100*res.Accuracy, res.SupportVectors, c, ls)
	}
	if out != "" {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return res, err
		}
		if err := draw2D(out, m, petals, labels, seen); err != nil {
			return res, err
		}
		res.Plot = out
		if verbose {
			fmt.Println("decision regions:", out)
		}
	}
	return res, nil
}

var palette = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}}

// draw2D paints the predicted class on a grid (faint) and the points on
// top, support vectors ringed.
func draw2D(path string, m *svm.SVC, x *tensor.Tensor, labels []int, support map[int]bool) error {
	const nx, ny = 120, 90
	x0, x1, y0, y1 := 0.5, 7.5, -0.2, 2.8
	grid := make([]float64, 0, 2*nx*ny)
	for j := range ny {
		for i := range nx {
			grid = append(grid, x0+(x1-x0)*float64(i)/(nx-1), y0+(y1-y0)*float64(j)/(ny-1))
		}
	}
	cls := m.Predict(tensor.FromFloat64s(grid, nx*ny, 2))
	pl := plot.New()
	pl.Title.Text = "iris: RBF C-SVC decision regions (petal length × width)"
	pl.X.Label.Text, pl.Y.Label.Text = "petal length (cm)", "petal width (cm)"
	regions := make([]plotter.XYs, 3)
	for k, c := range cls {
		regions[c] = append(regions[c], plotter.XY{X: grid[2*k], Y: grid[2*k+1]})
	}
	for c, pts := range regions {
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		p := palette[c]
		col := color.NRGBA{R: p.R, G: p.G, B: p.B, A: 45} // faint: the points go on top
		s.GlyphStyle = draw.GlyphStyle{Color: col, Shape: draw.BoxGlyph{}, Radius: vg.Points(2.2)}
		pl.Add(s)
	}
	names := []string{"setosa", "versicolor", "virginica"}
	for c := range 3 {
		var pts, sv plotter.XYs
		for i, l := range labels {
			if l != c {
				continue
			}
			p := plotter.XY{X: x.At(i, 0), Y: x.At(i, 1)}
			pts = append(pts, p)
			if support[i] {
				sv = append(sv, p)
			}
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: palette[c], Shape: draw.CircleGlyph{}, Radius: vg.Points(2.5)}
		pl.Add(s)
		pl.Legend.Add(names[c], s)
		if len(sv) > 0 {
			r, err := plotter.NewScatter(sv)
			if err != nil {
				return err
			}
			r.GlyphStyle = draw.GlyphStyle{Color: color.Black, Shape: draw.RingGlyph{}, Radius: vg.Points(4)}
			pl.Add(r)
		}
	}
	pl.Legend.Top, pl.Legend.Left = true, true
	return pl.Save(8*vg.Inch, 6*vg.Inch, path)
}
