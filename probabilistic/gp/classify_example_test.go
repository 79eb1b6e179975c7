package gp_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Classify points on a line: class 1 to the right of 0.
func ExampleFitClassifier() {
	x := tensor.FromFloat64s([]float64{-3, -2.5, -2, -1.5, -1, 1, 1.5, 2, 2.5, 3}, 10, 1)
	labels := []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}
	c, err := gp.FitClassifier(context.Background(), x, labels, gp.ClassifierOptions{Kernel: kernel.NewScale(kernel.NewRBF(1), 1)})
	if err != nil {
		panic(err)
	}
	pred, err := c.Predict(tensor.FromFloat64s([]float64{-2, 0, 2, 50}, 4, 1))
	if err != nil {
		panic(err)
	}
	fmt.Printf("p(y=1) at -2, 0, 2, 50: %.1f %.1f %.1f %.1f\n", pred.Prob[0], pred.Prob[1], pred.Prob[2], pred.Prob[3])
	// Output: p(y=1) at -2, 0, 2, 50: 0.2 0.5 0.8 0.5
}
