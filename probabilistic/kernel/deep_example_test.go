package kernel_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// A deep kernel: an RBF on the features of a network, whose parameters
// are hyperparameters of the kernel (so fitting the GP trains it).
func ExampleNewDeep() {
	net := nn.NewSequential(nn.NewLinear(tensor.NewRNG(1), 3, 2, true, tensor.Float64), nn.Tanh{})
	k := kernel.NewDeep(net, kernel.NewRBF(1))
	for _, p := range k.Hyperparams() {
		fmt.Println(p.Name(), p.Raw().Shape())
	}
	g := graph.New()
	x := g.Const(tensor.NewRNG(2).Normal(tensor.Float64, 0, 1, 4, 3))
	fmt.Println(k.K(x, x).Shape())
	// Output:
	// rbf.lengthscale []
	// features.0.weight [2 3]
	// features.0.bias [2]
	// [4 4]
}
