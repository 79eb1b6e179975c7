// Command kmeans clusters the 1,797 8×8 digits (scikit-learn's set) into
// k = 10 groups by Lloyd's algorithm, from k-means++ seeds with restarts
// or from the first k rows, prints the inertia, iterations and cluster
// sizes, and draws the ten centres as images.
//
//	go run ./examples/kmeans [-init kmeans++|first] [-k 10] [-restarts 10] [-seed 1] [-data sklearn/digits.csv] [-out out/kmeans] [-json] [-quiet]
package main

import (
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/learn/cluster"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
)

// result is what -json prints.
type result struct {
	Inertia    float64 `json:"inertia"`
	Iterations int     `json:"iterations"`
	Sizes      []int   `json:"sizes"`
	ARI        float64 `json:"adjusted_rand"`
	Plot       string  `json:"plot,omitempty"`
}

// config holds the flags.
type config struct {
	Init     string `flag:"init" help:"kmeans++ (seeded restarts) or first (the first k rows as centres)"`
	K        int    `flag:"k" help:"number of clusters"`
	Restarts int    `flag:"restarts" help:"k-means++ restarts"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	p := cli.Program{Name: "kmeans", Data: "sklearn/digits.csv", DataUsage: "CSV of 8×8 images with a target column"}
	return cli.Configured(p, config{Init: "kmeans++", K: 10, Restarts: 10}, run)
}

func run(c config, env *cli.Env) (res result, err error) {
	x, labels, err := data.Classes(env.Data, "target")
	if err != nil {
		return res, err
	}
	opts := cluster.KMeansOptions{K: c.K, Restarts: c.Restarts, Seed: env.Seed}
	switch c.Init {
	case "kmeans++":
	case "first":
		if c.K > x.Shape()[0] {
			return res, cli.BadFlagf("-k %d for %d rows", c.K, x.Shape()[0])
		}
		opts.Init = tensor.Slice(x, 0, 0, c.K, 1)
	default:
		return res, cli.BadFlagf("-init %q: want kmeans++ or first", c.Init)
	}
	env.Printf("digits %v: k-means with k = %d, init %s\n", x.Shape(), c.K, c.Init)
	km, err := cluster.FitKMeans(env.Context(), x, opts)
	if err != nil {
		return res, err
	}
	res.Inertia, res.Iterations = km.Inertia, km.Iterations
	res.Sizes = make([]int, c.K)
	for _, l := range km.Labels {
		res.Sizes[l]++
	}
	if res.ARI, err = metrics.AdjustedRand(labels, km.Labels); err != nil {
		return res, err
	}
	env.Printf("inertia %.1f after %d Lloyd iterations; sizes %v; adjusted Rand index %.3f against the digit labels\n",
		res.Inertia, res.Iterations, res.Sizes, res.ARI)
	if x.Shape()[1] == 64 {
		res.Plot = env.Path("kmeans_centres.png")
		if err := centres(res.Plot, km.Centers); err != nil {
			return res, err
		}
		env.Println("picture:", res.Plot)
	}
	return res, nil
}

// centres writes the (k, 64) centres as a row of 8×8 images, each pixel
// 8× enlarged, ink (16) dark.
func centres(path string, c *tensor.Tensor) error {
	// Negated so that ink (16) is black on white, as digits are drawn.
	return plot.ImageGrid(path, tensor.Reshape(tensor.Neg(c), c.Shape()[0], 8, 8), c.Shape()[0], 8, -16, 0)
}
