// Command kmeans clusters the 1,797 8×8 digits (scikit-learn's set) into
// k = 10 groups by Lloyd's algorithm, from k-means++ seeds with restarts
// or from the first k rows, prints the inertia, iterations and cluster
// sizes, and draws the ten centres as images.
//
//	go run ./examples/kmeans [-init kmeans++|first] [-k 10] [-restarts 10] [-seed 1] [-data sklearn/digits.csv] [-out out/kmeans] [-json] [-quiet]
package main

import (
	"context"
	"flag"

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
	init, data  string
	k, restarts int
	seed        uint64
}

func main() { cli.Main(program()) }

func program() cli.Program {
	var c config
	return cli.Program{
		Name: "kmeans", Data: "sklearn/digits.csv", DataUsage: "CSV of 8×8 images with a target column",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&c.init, "init", "kmeans++", "kmeans++ (seeded restarts) or first (the first k rows as centres)")
			fs.IntVar(&c.k, "k", 10, "number of clusters")
			fs.IntVar(&c.restarts, "restarts", 10, "k-means++ restarts")
		},
		Run: func(env *cli.Env) (any, error) {
			c.data, c.seed = env.Data, env.Seed
			return run(c, env)
		},
	}
}

func run(c config, env *cli.Env) (res result, err error) {
	x, labels, err := data.Classes(c.data, "target")
	if err != nil {
		return res, err
	}
	opts := cluster.KMeansOptions{K: c.k, Restarts: c.restarts, Seed: c.seed}
	switch c.init {
	case "kmeans++":
	case "first":
		if c.k > x.Shape()[0] {
			return res, cli.BadFlagf("-k %d for %d rows", c.k, x.Shape()[0])
		}
		opts.Init = tensor.Slice(x, 0, 0, c.k, 1)
	default:
		return res, cli.BadFlagf("-init %q: want kmeans++ or first", c.init)
	}
	env.Printf("digits %v: k-means with k = %d, init %s\n", x.Shape(), c.k, c.init)
	km, err := cluster.FitKMeans(context.Background(), x, opts)
	if err != nil {
		return res, err
	}
	res.Inertia, res.Iterations = km.Inertia, km.Iterations
	res.Sizes = make([]int, c.k)
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
