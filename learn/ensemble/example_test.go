package ensemble_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/learn/ensemble"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// A step at x = 2.5 learned by boosting under a loss written inline (the
// squared error): autodiff provides its gradients and Hessians.
func ExampleFitBooster() {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5}, 6, 1)
	y := tensor.FromFloat64s([]float64{-1, -1, -1, 2, 2, 2}, 6)
	half := func(pred, target *graph.Node, _ losses.Reduction) *graph.Node {
		return graph.MulScalar(graph.Sum(graph.Square(graph.Sub(pred, target)), nil, false), 0.5)
	}
	b, err := ensemble.FitBooster(context.Background(), x, y, ensemble.BoosterOptions{Loss: half, Rounds: 200, LearningRate: 0.3, MaxDepth: 1, Lambda: 1e-9})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.3f\n", b.Predict(tensor.FromFloat64s([]float64{1.5, 3.5}, 2, 1)).Float64s())
	// Output: [-1.000 2.000]
}

// Two classes split at x = 5: every tree whose bootstrap sample holds both
// classes finds the split; one of the 20 drew class 0 only and votes 0
// everywhere.
func ExampleFitForest() {
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4, 6, 7, 8, 9}, 8, 1)
	labels := []int{0, 0, 0, 0, 1, 1, 1, 1}
	f, err := ensemble.FitForest(context.Background(), x, labels, ensemble.ForestOptions{Trees: 20, Seed: 1})
	if err != nil {
		panic(err)
	}
	q := tensor.FromFloat64s([]float64{0, 10}, 2, 1)
	fmt.Printf("%v %.2f\n", f.Predict(q), f.PredictProba(q).Float64s())
	// Output: [0 1] [1.00 0.00 0.05 0.95]
}
