package plot

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Curve is one line of a panel: Y[i] is drawn at x = X[i], or at i+1
// (epoch i+1) when X is nil.
type Curve struct {
	Name  string
	X, Y  []float64
	Style Style
}

// Style says how a curve is drawn.
type Style int

// The styles.
const (
	LinePoints Style = iota // a line with a marker at each value (few values, e.g. per epoch)
	Line                    // a line only (long series)
	Scatter                 // markers only (noisy observations)
)

// Panel is one plot of a figure.
type Panel struct {
	Title, XLabel, YLabel string
	Curves                []Curve
}

// palette gives curves distinguishable colours (Okabe–Ito, colour-blind safe).
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},
	color.RGBA{213, 94, 0, 255},
	color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255},
}

// WritePNG draws the panels side by side and writes them to path as a PNG,
// creating its directory if needed.
func WritePNG(path string, panels ...Panel) error {
	if len(panels) == 0 {
		return fmt.Errorf("plot: WritePNG %s: no panels", path)
	}
	plots := make([]*gplot.Plot, len(panels))
	for i, pn := range panels {
		p := gplot.New()
		p.Title.Text = pn.Title
		p.X.Label.Text = pn.XLabel
		p.Y.Label.Text = pn.YLabel
		p.Add(plotter.NewGrid())
		for j, c := range pn.Curves {
			xy := make(plotter.XYs, len(c.Y))
			if c.X != nil && len(c.X) != len(c.Y) {
				return fmt.Errorf("plot: WritePNG %s: curve %q has %d x and %d y values", path, c.Name, len(c.X), len(c.Y))
			}
			for k, y := range c.Y {
				xy[k].X, xy[k].Y = float64(k+1), y
				if c.X != nil {
					xy[k].X = c.X[k]
				}
			}
			line, points, err := plotter.NewLinePoints(xy)
			if err != nil {
				return fmt.Errorf("plot: WritePNG %s: curve %q: %w", path, c.Name, err)
			}
			col := palette[j%len(palette)]
			line.Color, points.Color = col, col
			line.Width = vg.Points(1.5)
			points.Radius = vg.Points(2)
			var thumbs []gplot.Thumbnailer
			switch c.Style {
			case Line:
				p.Add(line)
				thumbs = []gplot.Thumbnailer{line}
			case Scatter:
				p.Add(points)
				thumbs = []gplot.Thumbnailer{points}
			default:
				p.Add(line, points)
				thumbs = []gplot.Thumbnailer{line, points}
			}
			if c.Name != "" && len(pn.Curves) > 1 { // one curve: the title says what it is
				p.Legend.Add(c.Name, thumbs...)
			}
		}
		if len(pn.Curves) > 1 {
			// Leave room above the data for the legend.
			p.Legend.Top = true
			p.Y.Max += 0.1 * float64(len(pn.Curves)) * (p.Y.Max - p.Y.Min)
		}
		plots[i] = p
	}
	const w, h = 5 * vg.Inch, 3.5 * vg.Inch
	img := vgimg.New(w*vg.Length(len(plots)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2,
		PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := gplot.Align([][]*gplot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[0][i])
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
