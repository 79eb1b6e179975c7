// Command unsupervised runs the PCA, k-means and Gaussian-mixture features
// on real data shipped with Gradus: it projects the 1,797 8×8 digits
// (scikit-learn's digits set) onto their first two principal components,
// clusters iris with k-means and with a Gaussian mixture fitted by EM,
// scores both clusterings against the species by the adjusted Rand index,
// and draws the pictures.
//
//	go run ./examples/unsupervised [-seed 1] [-out out/unsupervised] [-json] [-quiet]
package main

import (
	"fmt"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/learn/cluster"
	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/plot"
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

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Program{Name: "unsupervised", Run: func(env *cli.Env) (any, error) { return run(env) }}
}

func run(env *cli.Env) (res result, err error) {
	say := func(format string, a ...any) { env.Printf(format+"\n", a...) }
	seed := env.Seed
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
	path := env.Path("digits_pca.png")
	if err := scatter(path, "digits on their first two principal components", "PC 1", "PC 2", p.Transform(digits), dl, 10); err != nil {
		return res, err
	}
	res.Plots = append(res.Plots, path)

	iris, species, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		return res, err
	}
	km, err := cluster.FitKMeans(env.Context(), iris, cluster.KMeansOptions{K: 3, Seed: seed})
	if err != nil {
		return res, err
	}
	res.KMeansInertia, res.KMeansARI = km.Inertia, ari(species, km.Labels)
	say("iris k-means (K = 3, 10 restarts): inertia %.3f after %d iterations, adjusted Rand index %.3f against the species",
		km.Inertia, km.Iterations, res.KMeansARI)
	gm, err := mixture.FitGaussianMixture(env.Context(), iris, mixture.GaussianMixtureOptions{K: 3, Restarts: 5, Seed: seed})
	if err != nil {
		return res, err
	}
	gl := gm.Predict(iris)
	res.GMMLogLik, res.GMMARI = gm.LogLikelihood, ari(species, gl)
	say("iris Gaussian mixture (K = 3, full covariances, EM): mean log-likelihood %.4f in %d iterations, adjusted Rand index %.3f",
		gm.LogLikelihood, gm.Iterations, res.GMMARI)
	petals := tensor.Slice(iris, 1, 2, 4, 1).Contiguous()
	for _, c := range []struct {
		name, title string
		labels      []int
	}{
		{"iris_kmeans.png", fmt.Sprintf("iris petals by k-means cluster (ARI %.2f)", res.KMeansARI), km.Labels},
		{"iris_gmm.png", fmt.Sprintf("iris petals by mixture component (ARI %.2f)", res.GMMARI), gl},
	} {
		path := env.Path(c.name)
		if err := scatter(path, c.title, "petal length (cm)", "petal width (cm)", petals, c.labels, 3); err != nil {
			return res, err
		}
		res.Plots = append(res.Plots, path)
	}
	say("pictures: %v", res.Plots)
	return res, nil
}

// scatter draws the rows of xy (n, 2) by their labels 0 … k−1.
func scatter(path, title, xl, yl string, xy *tensor.Tensor, labels []int, k int) error {
	return plot.WritePNG(path, plot.Panel{Title: title, XLabel: xl, YLabel: yl, Curves: plot.ByLabel(xy, labels, plot.Names(k))})
}

// ari is metrics.AdjustedRand for clusterings known to be valid.
func ari(a, b []int) float64 {
	v, err := metrics.AdjustedRand(a, b)
	if err != nil {
		panic(err)
	}
	return v
}
