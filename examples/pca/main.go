// Command pca runs principal component analysis on the 1,797 8×8 digits
// (scikit-learn's set): it prints the top covariance eigenvalues and
// explained-variance ratios, draws the first eigen-digits and the 2-D
// projection coloured by digit, and beside it kernel PCA with an RBF
// kernel exp(−γ‖x − y‖²) on the first -kpca-n rows.
//
//	go run ./examples/pca [-gamma 1e-3] [-kpca-n 500] [-seed 1] [-data sklearn/digits.csv] [-out out/pca] [-json] [-quiet]
package main

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/plot"
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
	Gamma float64 `flag:"gamma" help:"RBF kernel exp(−γ‖x − y‖²) of kernel PCA"`
	KPCAN int     `flag:"kpca-n" help:"rows used by kernel PCA (the first ones)"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	// -seed is unused: PCA and kernel PCA are deterministic.
	return cli.Configured(cli.Program{Name: "pca", Data: "sklearn/digits.csv", DataUsage: "CSV of 8×8 images with a target column"}, config{Gamma: 1e-3, KPCAN: 500}, run)
}

func run(c config, env *cli.Env) (res result, err error) {
	x, labels, err := data.Classes(env.Data, "target")
	if err != nil {
		return res, err
	}
	n := x.Shape()[0]
	if c.Gamma <= 0 || c.KPCAN < 2 || c.KPCAN > n {
		return res, cli.BadFlagf("-gamma %g and -kpca-n %d: want γ > 0 and 2 ≤ kpca-n ≤ %d", c.Gamma, c.KPCAN, n)
	}
	top := min(10, x.Shape()[1])
	p, err := pca.FitPCA(x, pca.PCAOptions{Components: top})
	if err != nil {
		return res, err
	}
	res.Eigenvalues, res.Ratio = p.ExplainedVariance, p.ExplainedVarianceRatio
	env.Printf("digits %v: covariance eigenvalues %.2f\nexplained variance ratio %.4f\n", x.Shape(), res.Eigenvalues, res.Ratio)
	xs := tensor.Slice(x, 0, 0, c.KPCAN, 1).Contiguous()
	kp, err := pca.FitKernelPCA(xs, pca.KernelPCAOptions{Kernel: kernel.NewRBF(1 / math.Sqrt(2*c.Gamma)), Components: top})
	if err != nil {
		return res, err
	}
	res.KPCAEigenvalues = kp.Eigenvalues
	env.Printf("kernel PCA (RBF, γ = %g, first %d rows): eigenvalues of the centred kernel matrix %.3f\n", c.Gamma, c.KPCAN, kp.Eigenvalues)
	path := env.Path("eigendigits.png")
	if err := eigendigits(path, p.Components); err != nil {
		return res, err
	}
	res.Plots = append(res.Plots, path)
	kz := kp.Transform(xs)
	path = env.Path("projections.png")
	if err := projections(path, p.Transform(x), labels, kz, labels[:c.KPCAN], c.Gamma); err != nil {
		return res, err
	}
	res.Plots = append(res.Plots, path)
	env.Println("pictures:", res.Plots)
	return res, nil
}

// eigendigits writes the (k, 64) components as a row of 8×8 images, 8×
// enlarged, each scaled from its smallest (black) to its largest (white)
// weight.
func eigendigits(path string, comps *tensor.Tensor) error {
	k := comps.Shape()[0]
	return plot.ImageGrid(path, tensor.Reshape(comps, k, 8, 8), k, 8, 0, 0)
}

// projections draws the PCA and kernel PCA projections side by side.
func projections(path string, z *tensor.Tensor, lz []int, kz *tensor.Tensor, lk []int, gamma float64) error {
	z, kz = tensor.Slice(z, 1, 0, 2, 1).Contiguous(), tensor.Slice(kz, 1, 0, 2, 1).Contiguous()
	return plot.WritePNG(path,
		plot.Panel{Title: "digits: PCA", XLabel: "component 1", YLabel: "component 2", Curves: plot.ByLabel(z, lz, plot.Names(10))},
		plot.Panel{Title: fmt.Sprintf("first %d digits: kernel PCA (RBF, γ = %g)", len(lk), gamma), XLabel: "component 1", YLabel: "component 2",
			Curves: plot.ByLabel(kz, lk, plot.Names(10))})
}
