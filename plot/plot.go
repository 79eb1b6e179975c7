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
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gradus-ml/gradus/tensor"
)

// Curve is one series of a panel: Y[i] is drawn at x = X[i], or at i+1
// (epoch i+1, iteration i+1 of a chain's trace) when X is nil. For the
// Histogram style Y holds the values to count and X is unused; for VLines
// X holds the positions and Y is unused.
type Curve struct {
	Name  string
	X, Y  []float64
	Style Style
	// Bins is the number of bins of a Histogram (0: 30).
	Bins int
	// Like, when positive, draws the curve in the colour of curve Like−1
	// of its panel (an ellipse around its points, a fit through them)
	// and leaves it out of the legend; 0 gives each curve its own colour.
	Like int
}

// Style says how a curve is drawn.
type Style int

// The styles.
const (
	LinePoints Style = iota // a line with a marker at each value (few values, e.g. per epoch)
	Line                    // a line only (long series, a chain's trace)
	Scatter                 // markers only, a different shape per curve (observations, classes)
	Rings                   // black rings around points drawn by another curve (support vectors, relevance vectors)
	Histogram               // a histogram of the Y values, normalised to unit area
	VLines                  // a vertical line across the panel at each X (an observed statistic, a true value)
)

// Band is a shaded region between Lo and Hi over X, such as mean ± 2
// standard deviations.
type Band struct {
	Name      string
	X, Lo, Hi []float64
}

// Map is a heat map under a panel's curves: Z[r][c] is the value at
// (X[c], Y[r]), such as a density, a probability or a predicted class on a
// grid.
type Map struct {
	X, Y []float64
	Z    [][]float64
}

// Panel is one plot of a figure: a heat map (optional), bands, then
// curves, in that order from the back.
type Panel struct {
	Title, XLabel, YLabel string
	Map                   *Map
	Bands                 []Band
	Curves                []Curve
}

// palette gives curves distinguishable colours (Okabe–Ito, colour-blind safe).
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},
	color.RGBA{213, 94, 0, 255},
	color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255},
	color.RGBA{230, 159, 0, 255},
	color.RGBA{86, 180, 233, 255},
	color.RGBA{0, 0, 0, 255},
}

// shapes tell scatter curves apart without colour.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}}

// WritePNG draws the panels side by side and writes them to path as a PNG,
// creating its folder if needed.
func WritePNG(path string, panels ...Panel) error {
	return WriteGrid(path, len(panels), panels...)
}

// WriteGrid draws the panels in rows of cols, left to right and top to
// bottom, each 5 × 3.5 inches, and writes them to path as a PNG, creating
// its folder if needed.
func WriteGrid(path string, cols int, panels ...Panel) error {
	if len(panels) == 0 || cols < 1 {
		return fmt.Errorf("plot: WriteGrid %s: %d panels in %d columns", path, len(panels), cols)
	}
	cols = min(cols, len(panels))
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*gplot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*gplot.Plot, cols)
	}
	for i, pn := range panels {
		p, err := pn.plot()
		if err != nil {
			return fmt.Errorf("plot: WriteGrid %s: %w", path, err)
		}
		grid[i/cols][i%cols] = p
	}
	for i := len(panels); i < rows*cols; i++ {
		p := gplot.New() // an empty cell
		p.HideAxes()
		grid[i/cols][i%cols] = p
	}
	const w, h = 5 * vg.Inch, 3.5 * vg.Inch
	img := vgimg.New(w*vg.Length(cols), h*vg.Length(rows))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2,
		PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := gplot.Align(grid, tiles, dc)
	for r := range grid {
		for c, p := range grid[r] {
			p.Draw(canvases[r][c])
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	return f.Close()
}

// plot builds the gonum plot of one panel.
func (pn Panel) plot() (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = pn.Title
	p.X.Label.Text = pn.XLabel
	p.Y.Label.Text = pn.YLabel
	if m := pn.Map; m != nil {
		if len(m.Y) == 0 || len(m.X) == 0 || len(m.Z) != len(m.Y) {
			return nil, fmt.Errorf("panel %q: map of %d rows for %d ys and %d xs", pn.Title, len(m.Z), len(m.Y), len(m.X))
		}
		for r, row := range m.Z {
			if len(row) != len(m.X) {
				return nil, fmt.Errorf("panel %q: map row %d has %d values for %d xs", pn.Title, r, len(row), len(m.X))
			}
		}
		// Faint, so the curves drawn over it stay legible.
		p.Add(plotter.NewHeatMap(grid{z: m.Z, x: m.X, y: m.Y}, gpalette.Heat(64, 0.4)))
	} else {
		p.Add(plotter.NewGrid())
	}
	legend := 0
	for j, b := range pn.Bands {
		if len(b.Lo) != len(b.X) || len(b.Hi) != len(b.X) || len(b.X) == 0 {
			return nil, fmt.Errorf("panel %q: band %q has %d x, %d low and %d high values", pn.Title, b.Name, len(b.X), len(b.Lo), len(b.Hi))
		}
		poly := make(plotter.XYs, 0, 2*len(b.X))
		for i := range b.X {
			poly = append(poly, plotter.XY{X: b.X[i], Y: b.Hi[i]})
		}
		for i := len(b.X) - 1; i >= 0; i-- {
			poly = append(poly, plotter.XY{X: b.X[i], Y: b.Lo[i]})
		}
		pg, err := plotter.NewPolygon(poly)
		if err != nil {
			return nil, fmt.Errorf("panel %q: band %q: %w", pn.Title, b.Name, err)
		}
		r, g, bl, _ := palette[j%len(palette)].RGBA()
		pg.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 60}
		pg.LineStyle.Width = 0
		p.Add(pg)
		if b.Name != "" {
			p.Legend.Add(b.Name, pg)
			legend++
		}
	}
	for j, c := range pn.Curves {
		k := j
		if c.Like > 0 {
			k = c.Like - 1
		}
		th, err := addCurve(p, c, k)
		if err != nil {
			return nil, fmt.Errorf("panel %q: curve %q: %w", pn.Title, c.Name, err)
		}
		if c.Name != "" && c.Like == 0 && len(pn.Curves)+len(pn.Bands) > 1 { // one curve: the title says what it is
			p.Legend.Add(c.Name, th...)
			legend++
		}
	}
	if legend > 0 {
		// Leave room above the data for the legend.
		p.Legend.Top = true
		p.Y.Max += 0.1 * float64(legend) * (p.Y.Max - p.Y.Min)
	}
	return p, nil
}

// addCurve adds curve c to p in the j-th colour and marker, and returns
// what its legend entry shows.
func addCurve(p *gplot.Plot, c Curve, j int) ([]gplot.Thumbnailer, error) {
	col := palette[j%len(palette)]
	switch c.Style {
	case Histogram:
		if len(c.Y) == 0 {
			return nil, fmt.Errorf("histogram of no values")
		}
		bins := c.Bins
		if bins == 0 {
			bins = 30
		}
		h, err := plotter.NewHist(plotter.Values(c.Y), bins)
		if err != nil {
			return nil, err
		}
		h.Normalize(1)
		h.FillColor, h.LineStyle.Color = col, color.White
		p.Add(h)
		return []gplot.Thumbnailer{h}, nil
	case VLines:
		ls := draw.LineStyle{Color: col, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
		for _, x := range c.X {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("vertical line at %g", x)
			}
			p.Add(vline{x: x, style: ls})
		}
		return []gplot.Thumbnailer{vline{style: ls}}, nil
	}
	if c.X != nil && len(c.X) != len(c.Y) {
		return nil, fmt.Errorf("%d x and %d y values", len(c.X), len(c.Y))
	}
	xy := make(plotter.XYs, len(c.Y))
	for k, y := range c.Y {
		xy[k].X, xy[k].Y = float64(k+1), y
		if c.X != nil {
			xy[k].X = c.X[k]
		}
	}
	line, points, err := plotter.NewLinePoints(xy)
	if err != nil {
		return nil, err
	}
	line.Color, points.Color = col, col
	line.Width = vg.Points(1.5)
	points.Radius = vg.Points(2)
	switch c.Style {
	case Line:
		p.Add(line)
		return []gplot.Thumbnailer{line}, nil
	case Scatter:
		points.Shape = shapes[j%len(shapes)]
		p.Add(points)
		return []gplot.Thumbnailer{points}, nil
	case Rings:
		points.GlyphStyle = draw.GlyphStyle{Color: color.Black, Shape: draw.RingGlyph{}, Radius: vg.Points(4)}
		p.Add(points)
		return []gplot.Thumbnailer{points}, nil
	}
	p.Add(line, points)
	return []gplot.Thumbnailer{line, points}, nil
}

// vline is a vertical line across the whole panel at x.
type vline struct {
	x     float64
	style draw.LineStyle
}

// Plot draws the line from the bottom of the panel to the top.
func (v vline) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
}

// DataRange widens the x range to hold the line and leaves y alone.
func (v vline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return v.x, v.x, math.Inf(1), math.Inf(-1)
}

// Thumbnail draws the legend's sample of the line.
func (v vline) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
}

// ByLabel splits the points (the rows of xy, an (n, 2) tensor) by their
// labels in 0 … len(names)−1 into one Scatter curve per label, named by
// names: a scatter plot coloured by class or cluster. It panics with a
// *tensor.Error if xy is not (len(labels), 2) or a label is out of range.
func ByLabel(xy *tensor.Tensor, labels []int, names []string) []Curve {
	if sh := xy.Shape(); len(sh) != 2 || sh[1] != 2 || sh[0] != len(labels) {
		tensor.Fail("plot.ByLabel", "points of shape %s for %d labels, want (%d, 2)", tensor.FormatShape(sh), len(labels), len(labels))
	}
	curves := make([]Curve, len(names))
	for c, name := range names {
		curves[c] = Curve{Name: name, Style: Scatter, X: []float64{}, Y: []float64{}}
	}
	for i, l := range labels {
		if l < 0 || l >= len(names) {
			tensor.Fail("plot.ByLabel", "label %d of point %d outside 0 … %d", l, i, len(names)-1)
		}
		curves[l].X = append(curves[l].X, xy.At(i, 0))
		curves[l].Y = append(curves[l].Y, xy.At(i, 1))
	}
	return curves
}

// Names returns the labels "0", "1", … "k−1", for ByLabel.
func Names(k int) []string {
	names := make([]string, k)
	for i := range names {
		names[i] = fmt.Sprint(i)
	}
	return names
}
