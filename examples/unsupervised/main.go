// Command unsupervised runs the PCA, k-means and Gaussian-mixture features
// on real data shipped with Gradus: it projects the 1,797 8×8 digits
// (scikit-learn's digits set) onto their first two principal components,
// clusters iris with k-means and with a Gaussian mixture fitted by EM,
// scores both clusterings against the species by the adjusted Rand index,
// and draws the pictures.
//
//	go run ./examples/unsupervised [-seed 1] [-out out/unsupervised] [-json]
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

	"github.com/gradus-ml/gradus/learn/cluster"
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/tensor"
)

// result holds the figures the program reports.
type result struct {
	DigitsExplained [2]float64 `json:"digits_pca_explained_ratio"`
	KMeansInertia   float64    `json:"iris_kmeans_inertia"`
	KMeansARI       float64    `json:"iris_kmeans_ari"`
	GMMLogLik       float64    `json:"iris_gmm_mean_loglik"`
	GMMARI          float64    `json:"iris_gmm_ari"`
	Plots           []string   `json:"plots,omitempty"`
}

func main() {
	seed := flag.Uint64("seed", 1, "seed of the k-means and mixture starts")
	out := flag.String("out", "out/unsupervised", "directory for the PNGs (empty: none)")
	asJSON := flag.Bool("json", false, "print one JSON object with the results")
	flag.Parse()
	res, err := run(*seed, *out, !*asJSON)
	if err != nil {
		fmt.Fprintln(os.Stderr, "unsupervised:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
	}
}

func run(seed uint64, out string, verbose bool) (res result, err error) {
	say := func(format string, a ...any) {
		if verbose {
			fmt.Printf(format+"\n", a...)
		}
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return res, err
		}
	}
	digits, dl, err := data.Classes("sklearn/digits.csv", "target")
	if err != nil {
		return res, err
	}
	p, err := pca.FitPCA(digits, pca.PCAOptions{Components: 2})
	if err != nil {
		return res, err
	}
	copy(res.DigitsExplained[:], p.ExplainedVarianceRatio)
	say("digits %v: the first two principal components explain %.1f%% and %.1f%% of the variance",
		digits.Shape(), 100*p.ExplainedVarianceRatio[0], 100*p.ExplainedVarianceRatio[1])
	if out != "" {
		path := filepath.Join(out, "digits_pca.png")
		if err := scatter(path, "digits on their first two principal components", "PC 1", "PC 2", p.Transform(digits), dl, 10); err != nil {
			return res, err
		}
		res.Plots = append(res.Plots, path)
	}

	iris, species, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		return res, err
	}
	km, err := cluster.KMeans(iris, cluster.KMeansOptions{K: 3, Seed: seed})
	if err != nil {
		return res, err
	}
	res.KMeansInertia, res.KMeansARI = km.Inertia, ari(species, km.Labels)
	say("iris k-means (K = 3, 10 restarts): inertia %.3f after %d iterations, adjusted Rand index %.3f against the species",
		km.Inertia, km.Iterations, res.KMeansARI)
	gm, err := mixture.FitGaussianMixture(iris, mixture.Options{K: 3, Restarts: 5, Seed: seed})
	if err != nil {
		return res, err
	}
	gl, err := gm.Predict(iris)
	if err != nil {
		return res, err
	}
	res.GMMLogLik, res.GMMARI = gm.LogLikelihood, ari(species, gl)
	say("iris Gaussian mixture (K = 3, full covariances, EM): mean log-likelihood %.4f in %d iterations, adjusted Rand index %.3f",
		gm.LogLikelihood, gm.Iterations, res.GMMARI)
	if out != "" {
		petals := tensor.Slice(iris, 1, 2, 4, 1).Contiguous()
		for _, c := range []struct {
			name, title string
			labels      []int
		}{
			{"iris_kmeans.png", fmt.Sprintf("iris petals by k-means cluster (ARI %.2f)", res.KMeansARI), km.Labels},
			{"iris_gmm.png", fmt.Sprintf("iris petals by mixture component (ARI %.2f)", res.GMMARI), gl},
		} {
			path := filepath.Join(out, c.name)
			if err := scatter(path, c.title, "petal length (cm)", "petal width (cm)", petals, c.labels, 3); err != nil {
				return res, err
			}
			res.Plots = append(res.Plots, path)
		}
		say("pictures: %v", res.Plots)
	}
	return res, nil
}

// scatter draws the rows of xy (n, 2) coloured by label.
func scatter(path, title, xl, yl string, xy *tensor.Tensor, labels []int, k int) error {
	pl := plot.New()
	pl.Title.Text, pl.X.Label.Text, pl.Y.Label.Text = title, xl, yl
	pts := make([]plotter.XYs, k)
	for i, l := range labels {
		pts[l] = append(pts[l], plotter.XY{X: xy.At(i, 0), Y: xy.At(i, 1)})
	}
	for c := range k {
		s, err := plotter.NewScatter(pts[c])
		if err != nil {
			return err
		}
		s.GlyphStyle.Color = palette(c)
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		s.GlyphStyle.Radius = vg.Points(2)
		pl.Add(s)
		pl.Legend.Add(fmt.Sprint(c), s)
	}
	pl.Legend.Top = true
	return pl.Save(7*vg.Inch, 6*vg.Inch, path)
}

func palette(i int) color.Color {
	cs := []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
		{188, 189, 34, 255}, {23, 190, 207, 255}}
	return cs[i%len(cs)]
}

// ari is metrics.AdjustedRand for clusterings known to be valid.
func ari(a, b []int) float64 {
	v, err := metrics.AdjustedRand(a, b)
	if err != nil {
		panic(err)
	}
	return v
}
