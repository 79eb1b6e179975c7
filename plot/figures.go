package plot

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	gplot "gonum.org/v1/plot"
	gpalette "gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// save writes one plot to path as a PNG of w×h, creating its directory.
func save(p *gplot.Plot, path string, w, h vg.Length) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := p.Save(w, h, path); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	return nil
}

// grid is a matrix of values on unit cells, for heat maps: column c, row r
// is centred at (x(c), y(r)).
type grid struct {
	z      [][]float64 // z[r][c]
	x, y   []float64
	flipUp bool // row 0 drawn at the top (matrices), not the bottom (maps)
}

func (g grid) Dims() (c, r int) { return len(g.z[0]), len(g.z) }
func (g grid) Z(c, r int) float64 {
	if g.flipUp {
		return g.z[len(g.z)-1-r][c]
	}
	return g.z[r][c]
}
func (g grid) X(c int) float64 { return g.x[c] }
func (g grid) Y(r int) float64 { return g.y[r] }

// Confusion draws a confusion matrix (counts[true][predicted], as
// metrics.Confusion returns it) as a heat map with each count written in
// its cell, true classes down the side, predicted ones along the bottom.
func Confusion(path, title string, counts [][]int, names []string) error {
	k := len(counts)
	if k == 0 || len(names) != k {
		return fmt.Errorf("plot: Confusion %s: %d rows for %d class names", path, k, len(names))
	}
	z := make([][]float64, k)
	idx := make([]float64, k)
	for r, row := range counts {
		if len(row) != k {
			return fmt.Errorf("plot: Confusion %s: row %d has %d counts, want %d", path, r, len(row), k)
		}
		z[r] = make([]float64, k)
		for c, v := range row {
			z[r][c] = float64(v)
		}
		idx[r] = float64(r)
	}
	p := gplot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "predicted", "true"
	hm := plotter.NewHeatMap(grid{z: z, x: idx, y: idx, flipUp: true}, gpalette.Heat(32, 1))
	p.Add(hm)
	var labels plotter.XYLabels
	for r := range k {
		for c := range k {
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(c), Y: float64(k - 1 - r)})
			labels.Labels = append(labels.Labels, fmt.Sprint(counts[r][c]))
		}
	}
	l, err := plotter.NewLabels(labels)
	if err != nil {
		return fmt.Errorf("plot: Confusion %s: %w", path, err)
	}
	p.Add(l)
	ticks := func(rev bool) gplot.ConstantTicks {
		var t gplot.ConstantTicks
		for i, n := range names {
			pos := float64(i)
			if rev {
				pos = float64(k - 1 - i)
			}
			t = append(t, gplot.Tick{Value: pos, Label: n})
		}
		return t
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks(false), ticks(true)
	side := vg.Length(1.2+0.5*float64(k)) * vg.Inch
	return save(p, path, side+vg.Inch, side)
}

// Axes names a figure's title and axes.
type Axes struct{ Title, X, Y string }

// Posterior1D draws a one-dimensional posterior: the mean as a line, a
// band of ±2 standard deviations, and the observations as points (obsX,
// obsY may be nil), as for a GP regression.
func Posterior1D(path string, axes Axes, x, mean, sd, obsX, obsY []float64) error {
	if len(x) == 0 || len(mean) != len(x) || len(sd) != len(x) || len(obsX) != len(obsY) {
		return fmt.Errorf("plot: Posterior1D %s: %d inputs, %d means, %d sds, %d/%d observations", path, len(x), len(mean), len(sd), len(obsX), len(obsY))
	}
	p := gplot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = axes.Title, axes.X, axes.Y
	p.Add(plotter.NewGrid())
	band := make(plotter.XYs, 0, 2*len(x))
	for i := range x {
		band = append(band, plotter.XY{X: x[i], Y: mean[i] + 2*sd[i]})
	}
	for i := len(x) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: x[i], Y: mean[i] - 2*sd[i]})
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return fmt.Errorf("plot: Posterior1D %s: %w", path, err)
	}
	poly.Color = color.NRGBA{R: 0, G: 114, B: 178, A: 60}
	poly.LineStyle.Width = 0
	line := make(plotter.XYs, len(x))
	for i := range x {
		line[i] = plotter.XY{X: x[i], Y: mean[i]}
	}
	l, err := plotter.NewLine(line)
	if err != nil {
		return fmt.Errorf("plot: Posterior1D %s: %w", path, err)
	}
	l.Color, l.Width = palette0(0), vg.Points(1.5)
	p.Add(poly, l)
	p.Legend.Add("mean", l)
	p.Legend.Add("±2 sd", poly)
	if len(obsX) > 0 {
		pts := make(plotter.XYs, len(obsX))
		for i := range obsX {
			pts[i] = plotter.XY{X: obsX[i], Y: obsY[i]}
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("plot: Posterior1D %s: %w", path, err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: palette0(1), Shape: draw.CircleGlyph{}, Radius: vg.Points(1.5)}
		p.Add(s)
		p.Legend.Add("observations", s)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return save(p, path, 9*vg.Inch, 4.5*vg.Inch)
}

// Map2D draws values on a regular grid, z[r][c] at (xs[c], ys[r]), as a
// heat map: a 2-D posterior mean or standard deviation.
func Map2D(path, title string, xs, ys []float64, z [][]float64) error {
	if len(ys) == 0 || len(xs) == 0 || len(z) != len(ys) {
		return fmt.Errorf("plot: Map2D %s: %d rows of values for %d ys", path, len(z), len(ys))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for r, row := range z {
		if len(row) != len(xs) {
			return fmt.Errorf("plot: Map2D %s: row %d has %d values for %d xs", path, r, len(row), len(xs))
		}
		for _, v := range row {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("%s (%.3g … %.3g)", title, lo, hi)
	p.Add(plotter.NewHeatMap(grid{z: z, x: xs, y: ys}, gpalette.Heat(64, 1)))
	return save(p, path, 6*vg.Inch, 5*vg.Inch)
}

func palette0(i int) color.Color { return palette[i%len(palette)] }
