package losses_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

func ExampleCrossEntropy() {
	g := graph.New()
	logits := g.Var(tensor.FromFloat64s([]float64{1, 2, 3}, 1, 3))
	loss := losses.CrossEntropy(logits, []int{2}, losses.CrossEntropyOptions{}) // log(e¹+e²+e³) − 3
	grad := autodiff.Grad(loss, logits)[0]                                      // softmax − onehot
	fmt.Printf("%.8f\n", loss.Item())
	fmt.Printf("%.4f\n", grad.Value().Values())
	// Output:
	// 0.40760596
	// [0.0900 0.2447 -0.3348]
}

func ExampleKLDiagGaussian() {
	g := graph.New()
	mu := g.Var(tensor.FromFloat64s([]float64{1, 0}, 1, 2))
	logvar := g.Var(tensor.FromFloat64s([]float64{0, 0}, 1, 2))
	// ½Σ(μ² + σ² − log σ² − 1) = ½(1 + 0)
	fmt.Println(losses.KLDiagGaussian(mu, logvar, losses.Mean).Item())
	// Output: 0.5
}

func ExampleBCEWithLogits() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{100, -100}, 2))
	t := g.Const(tensor.FromFloat64s([]float64{1, 1}, 2))
	// softplus(x) − x·t stays finite where log σ(−100) would underflow.
	fmt.Println(losses.BCEWithLogits(x, t, losses.None).Value().Values())
	// Output: [0 100]
}
