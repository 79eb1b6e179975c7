// Command pca runs principal component analysis on the 1,797 8×8 digits
// (scikit-learn's set): it prints the top covariance eigenvalues and
// explained-variance ratios, draws the first eigen-digits and the 2-D
// projection coloured by digit, and beside it kernel PCA with an RBF
// kernel exp(−γ‖x − y‖²) on the first -kpca-n rows.
//
//	go run ./examples/pca [-gamma 1e-3] [-kpca-n 500] [-seed 1] [-data sklearn/digits.csv] [-out out/pca] [-json]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// result is what -json prints.
type result struct {
	Eigenvalues     []float64 `json:"eigenvalues"`
	Ratio           []float64 `json:"explained_variance_ratio"`
	KPCAEigenvalues []float64 `json:"kpca_eigenvalues"`
	Plots           []string  `json:"plots,omitempty"`
}

// config holds the flags.
type config struct {
	data, out string
	gamma     float64
	kpcaN     int
	verbose   bool
}

func main() {
	var c config
	flag.StringVar(&c.data, "data", "sklearn/digits.csv", "CSV of 8×8 images with a target column")
	flag.StringVar(&c.out, "out", "out/pca", "directory for the PNGs (empty: none)")
	flag.Float64Var(&c.gamma, "gamma", 1e-3, "RBF kernel exp(−γ‖x − y‖²) of kernel PCA")
	flag.IntVar(&c.kpcaN, "kpca-n", 500, "rows used by kernel PCA (the first ones)")
	flag.Uint64("seed", 1, "unused: PCA and kernel PCA are deterministic")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	flag.Parse()
	c.verbose = !*asJSON
	res, err := run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pca:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
	}
}

func run(c config) (res result, err error) {
	x, labels, err := data.Classes(c.data, "target")
	if err != nil {
		return res, err
	}
	n := x.Shape()[0]
	if c.gamma <= 0 || c.kpcaN < 2 || c.kpcaN > n {
		return res, fmt.Errorf("-gamma %g and -kpca-n %d: want γ > 0 and 2 ≤ kpca-n ≤ %d", c.gamma, c.kpcaN, n)
	}
	top := min(10, x.Shape()[1])
	p, err := pca.FitPCA(x, pca.PCAOptions{Components: top})
	if err != nil {
		return res, err
	}
	res.Eigenvalues, res.Ratio = p.ExplainedVariance, p.ExplainedVarianceRatio
	if c.verbose {
		fmt.Printf("digits %v: covariance eigenvalues %.2f\nexplained variance ratio %.4f\n", x.Shape(), res.Eigenvalues, res.Ratio)
	}
	xs := tensor.Slice(x, 0, 0, c.kpcaN, 1).Contiguous()
	kp, err := pca.FitKernelPCA(xs, pca.KernelPCAOptions{Kernel: kernel.NewRBF(1 / math.Sqrt(2*c.gamma)), Components: top})
	if err != nil {
		return res, err
	}
	res.KPCAEigenvalues = kp.Eigenvalues
	if c.verbose {
		fmt.Printf("kernel PCA (RBF, γ = %g, first %d rows): eigenvalues of the centred kernel matrix %.3f\n", c.gamma, c.kpcaN, kp.Eigenvalues)
	}
	if c.out == "" {
		return res, nil
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return res, err
	}
	path := filepath.Join(c.out, "eigendigits.png")
	if err := eigendigits(path, p.Components); err != nil {
		return res, err
	}
	res.Plots = append(res.Plots, path)
	kz := kp.Transform(xs)
	path = filepath.Join(c.out, "projections.png")
	if err := projections(path, p.Transform(x), labels, kz, labels[:c.kpcaN], c.gamma); err != nil {
		return res, err
	}
	res.Plots = append(res.Plots, path)
	if c.verbose {
		fmt.Println("pictures:", res.Plots)
	}
	return res, nil
}

// eigendigits writes the (k, 64) components as a row of 8×8 images,
// 8× enlarged, on a blue (negative) – white – red (positive) scale.
func eigendigits(path string, comps *tensor.Tensor) error {
	k, z := comps.Shape()[0], 8
	img := image.NewRGBA(image.Rect(0, 0, k*(8*z+4), 8*z))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for j := range k {
		big := 0.0
		for p := range 64 {
			big = math.Max(big, math.Abs(comps.At(j, p)))
		}
		for p := range 64 {
			v := comps.At(j, p) / big
			c := color.RGBA{255, uint8(255 * (1 - math.Abs(v))), uint8(255 * (1 - math.Abs(v))), 255}
			if v < 0 {
				c = color.RGBA{uint8(255 * (1 + v)), uint8(255 * (1 + v)), 255, 255}
			}
			for dy := range z {
				for dx := range z {
					img.Set(j*(8*z+4)+(p%8)*z+dx, (p/8)*z+dy, c)
				}
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// projections draws the PCA and kernel PCA projections side by side.
func projections(path string, z *tensor.Tensor, lz []int, kz *tensor.Tensor, lk []int, gamma float64) error {
	left, err := scatter("digits: PCA", z, lz)
	if err != nil {
		return err
	}
	right, err := scatter(fmt.Sprintf("first %d digits: kernel PCA (RBF, γ = %g)", len(lk), gamma), kz, lk)
	if err != nil {
		return err
	}
	img := vgimg.New(14*vg.Inch, 6*vg.Inch)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, draw.New(img))
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
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

func scatter(title string, xy *tensor.Tensor, labels []int) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text, pl.X.Label.Text, pl.Y.Label.Text = title, "component 1", "component 2"
	pts := make([]plotter.XYs, 10)
	for i, l := range labels {
		pts[l%10] = append(pts[l%10], plotter.XY{X: xy.At(i, 0), Y: xy.At(i, 1)})
	}
	for c := range 10 {
		s, err := plotter.NewScatter(pts[c])
		if err != nil {
			return nil, err
		}
		s.GlyphStyle.Color, s.GlyphStyle.Shape, s.GlyphStyle.Radius = palette(c), draw.CircleGlyph{}, vg.Points(1.5)
		pl.Add(s)
		pl.Legend.Add(fmt.Sprint(c), s)
	}
	pl.Legend.Top = true
	return pl, nil
}

func palette(i int) color.Color {
	cs := []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
		{188, 189, 34, 255}, {23, 190, 207, 255}}
	return cs[i%len(cs)]
}
