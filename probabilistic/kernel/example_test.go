package kernel_test

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// A scaled RBF plus white noise: the covariance matrix of two points one
// lengthscale apart is differentiable in the hyperparameters, which are
// named by dotted paths.
func ExampleNewSum() {
	k := kernel.NewSum(kernel.NewScale(kernel.NewRBF(2), 3), kernel.NewWhite(0.5))
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{0, 2}, 2, 1))
	kxx := k.K(x, x).Value()
	fmt.Printf("%.4f %.4f (3e^{-1/2} = %.4f)\n", kxx.At(0, 0), kxx.At(0, 1), 3*math.Exp(-0.5))
	for _, p := range k.Hyperparams() {
		fmt.Printf("%s = %g\n", p.Name(), math.Round(p.Value()*1e9)/1e9)
	}
	// Output:
	// 3.5000 1.8196 (3e^{-1/2} = 1.8196)
	// scale.variance = 3
	// rbf.lengthscale = 2
	// white.variance = 0.5
}
