// Command bayesopt maximises a noisy one-dimensional function by Bayesian
// optimisation with Gradus's GP: 3 random points, then each evaluation
// where the acquisition function (expected improvement, probability of
// improvement or the upper confidence bound), maximised by L-BFGS with
// gradients from autodiff through the GP posterior, is largest. The
// function is
//
//	f(x) = x/15 − x²/50 − sin(x)/x  on [−5, 5]   (f(0) = −1, the limit)
//
// observed with N(0, 0.01²) noise; its maximum is f(4.0796) ≈ 0.1368.
// The program reports the maximiser of the final GP's posterior mean
// (observations are noisy, so the best observed point is a worse
// estimate) and draws the GP and the acquisition at the last step.
//
//	go run ./examples/bayesopt [-seed 1] [-acq ei|pi|ucb] [-evals 20] [-out out/bayesopt.png] [-json]
package main

import (
	"context"
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

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the initial points, the noise and the optimiser")
	acq := flag.String("acq", "ei", "acquisition function: ei, pi or ucb")
	evals := flag.Int("evals", 20, "evaluations of f, the 3 initial points included")
	out := flag.String("out", "out/bayesopt.png", "PNG of the GP and the acquisition at the last step (empty: none)")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	flag.Parse()
	res, err := run(config{seed: *seed, acq: *acq, evals: *evals, out: *out, verbose: !*asJSON})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bayesopt:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
	}
}

type config struct {
	seed    uint64
	acq     string
	evals   int
	out     string
	verbose bool
}

// result holds the figures the program reports.
type result struct {
	BestX         float64 `json:"best_x"`          // maximiser of the final posterior mean
	BestY         float64 `json:"best_y"`          // the posterior mean there
	Evaluations   int     `json:"evaluations"`     // calls of f, initial points included
	BestObservedX float64 `json:"best_observed_x"` // the observation with the largest y
	BestObservedY float64 `json:"best_observed_y"`
	Acquisition   string  `json:"acquisition"`
	Plot          string  `json:"plot,omitempty"`
}

// objective is the noise-free function; f(0) is its limit −1.
func objective(x float64) float64 {
	if x == 0 {
		return -1
	}
	return x/15 - x*x/50 - math.Sin(x)/x
}

const (
	lo, hi     = -5.0, 5.0
	noiseStd   = 0.01
	initPoints = 3
)

func run(cfg config) (res result, err error) {
	defer tensor.Recover(&err)
	a, err := gp.AcquisitionByName(cfg.acq)
	if err != nil {
		return res, err
	}
	if cfg.evals < initPoints+1 {
		return res, fmt.Errorf("-evals %d: need more than the %d initial points", cfg.evals, initPoints)
	}
	noise := tensor.NewRNG(cfg.seed ^ 0x9e3779b97f4a7c15)
	f := func(x float64) float64 {
		res.Evaluations++
		return objective(x) + noiseStd*noise.NormFloat64()
	}
	// f is smooth (analytic), so the squared-exponential kernel suits it
	// better than the library's default Matérn 5⁄2: over seeds 1–10 with
	// EI the posterior-mean maximiser lands within 0.1 of 4.0796 every
	// time with the RBF, and 8 times in 10 with the Matérn.
	bo := gp.NewBayesOpt([][2]float64{{lo, hi}}, gp.BayesOptOptions{
		Acquisition:   a,
		InitialPoints: initPoints,
		Seed:          cfg.seed,
		Kernel:        func(d int) kernel.Kernel { return kernel.NewScale(kernel.NewRBF(0.2), 1) },
	})
	var xs, ys []float64
	for i := 0; i < cfg.evals; i++ {
		x := bo.Ask(context.Background())
		if i == cfg.evals-1 && cfg.out != "" {
			// The last step: the GP of all earlier observations and the
			// acquisition that chose x.
			if err := drawStep(cfg.out, bo, a.Name(), xs, ys, x[0]); err != nil {
				return res, err
			}
			res.Plot = cfg.out
		}
		if e := bo.Err(); e != nil && cfg.verbose {
			fmt.Println("  note:", e)
		}
		y := f(x[0])
		if err := bo.Tell(x, y); err != nil {
			return res, err
		}
		xs, ys = append(xs, x[0]), append(ys, y)
		if cfg.verbose {
			kind := "acquisition"
			if i < initPoints {
				kind = "random"
			}
			fmt.Printf("eval %2d (%-11s) x = %8.4f  y = %8.4f\n", i+1, kind, x[0], y)
		}
	}
	bx, by := bo.Best()
	res.BestObservedX, res.BestObservedY = bx[0], by
	rx, rm, err := bo.Recommend(context.Background())
	if err != nil {
		return res, err
	}
	res.BestX, res.BestY, res.Acquisition = rx[0], rm, a.Name()
	if cfg.verbose {
		fmt.Printf("best observed: x = %.4f, y = %.4f\n", res.BestObservedX, res.BestObservedY)
		fmt.Printf("posterior-mean maximiser after %d evaluations (%s): x = %.4f, mean %.4f (true maximum f(4.0796) = 0.1368; f(x) = %.4f)\n",
			res.Evaluations, res.Acquisition, res.BestX, res.BestY, objective(res.BestX))
		if res.Plot != "" {
			fmt.Println("wrote", res.Plot)
		}
	}
	return res, nil
}

// drawStep writes two panels: the GP posterior (mean, ±2σ band) with the
// observations and the true function, and the acquisition with the point
// it chose (next).
func drawStep(path string, bo *gp.BayesOpt, acqName string, xs, ys []float64, next float64) error {
	const m = 300
	grid := make([][]float64, m)
	for i := range grid {
		grid[i] = []float64{lo + (hi-lo)*float64(i)/float64(m-1)}
	}
	mean, std, err := bo.Predict(context.Background(), grid)
	if err != nil {
		return err
	}
	acq, err := bo.AcquisitionAt(context.Background(), grid)
	if err != nil {
		return err
	}
	blue := color.RGBA{0, 114, 178, 255}
	orange := color.RGBA{213, 94, 0, 255}

	top := plot.New()
	top.Title.Text = fmt.Sprintf("GP posterior after %d evaluations", len(xs))
	top.X.Label.Text = "x"
	top.Y.Label.Text = "f(x)"
	band := make(plotter.XYs, 0, 2*m)
	meanXY := make(plotter.XYs, m)
	trueXY := make(plotter.XYs, m)
	for i, g := range grid {
		band = append(band, plotter.XY{X: g[0], Y: mean[i] + 2*std[i]})
		meanXY[i] = plotter.XY{X: g[0], Y: mean[i]}
		trueXY[i] = plotter.XY{X: g[0], Y: objective(g[0])}
	}
	for i := m - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: grid[i][0], Y: mean[i] - 2*std[i]})
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return err
	}
	poly.Color = color.NRGBA{0, 114, 178, 60}
	poly.LineStyle.Width = 0
	meanLine, err := plotter.NewLine(meanXY)
	if err != nil {
		return err
	}
	meanLine.Color, meanLine.Width = blue, vg.Points(1.5)
	trueLine, err := plotter.NewLine(trueXY)
	if err != nil {
		return err
	}
	trueLine.Color, trueLine.Dashes = color.Gray{80}, []vg.Length{vg.Points(4), vg.Points(3)}
	obs := make(plotter.XYs, len(xs))
	for i := range xs {
		obs[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	sc, err := plotter.NewScatter(obs)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Color, sc.GlyphStyle.Radius = orange, vg.Points(3)
	top.Add(poly, trueLine, meanLine, sc)
	top.Legend.Add("mean ± 2σ", poly, meanLine)
	top.Legend.Add("true f", trueLine)
	top.Legend.Add("observations", sc)
	top.Legend.Top, top.Legend.Left = true, true

	bottom := plot.New()
	bottom.Title.Text = fmt.Sprintf("acquisition (%s); next x = %.4f", acqName, next)
	bottom.X.Label.Text = "x"
	acqXY := make(plotter.XYs, m)
	for i, g := range grid {
		acqXY[i] = plotter.XY{X: g[0], Y: acq[i]}
	}
	acqLine, err := plotter.NewLine(acqXY)
	if err != nil {
		return err
	}
	acqLine.Color, acqLine.Width = orange, vg.Points(1.5)
	amax := 0.0
	for _, v := range acq {
		amax = math.Max(amax, v)
	}
	amin := 0.0
	for _, v := range acq {
		amin = math.Min(amin, v)
	}
	mark, err := plotter.NewLine(plotter.XYs{{X: next, Y: amin}, {X: next, Y: amax}})
	if err != nil {
		return err
	}
	mark.Color, mark.Dashes = color.Black, []vg.Length{vg.Points(2), vg.Points(2)}
	bottom.Add(acqLine, mark)

	img := vgimg.New(7*vg.Inch, 7*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Millimeter * 5, PadTop: vg.Millimeter * 2,
		PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, dc)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
