package gp_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/tensor"
)

// Maximise a function on [0, 2] with the ask/tell loop.
func ExampleNewBayesOpt() {
	f := func(x []float64) float64 { return -(x[0] - 1.3) * (x[0] - 1.3) }
	bo := gp.NewBayesOpt([][2]float64{{0, 2}}, gp.BayesOptOptions{Seed: 1})
	for i := 0; i < 10; i++ {
		x := bo.Ask(context.Background())
		if err := bo.Tell(x, f(x)); err != nil {
			panic(err)
		}
	}
	x, _, err := bo.Recommend(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Printf("argmax ≈ %.2f after %d evaluations\n", x[0], bo.Len())
	// Output: argmax ≈ 1.30 after 10 evaluations
}

// Expected improvement is a graph: at mean 0, standard deviation 1 and
// incumbent 0 it is 1/√(2π).
func ExampleExpectedImprovement() {
	g := graph.New()
	mean := g.Const(tensor.FromFloat64s([]float64{0}, 1))
	std := g.Const(tensor.FromFloat64s([]float64{1}, 1))
	ei := gp.ExpectedImprovement(mean, std, 0, 0)
	fmt.Printf("%.6f %.6f\n", ei.Item(), 1/math.Sqrt(2*math.Pi))
	// Output: 0.398942 0.398942
}

// Evaluate three points at a time, chosen by the Monte Carlo expected
// improvement of the batch.
func ExampleBayesOpt_AskBatch() {
	f := func(x []float64) float64 { return -(x[0]-0.3)*(x[0]-0.3) - (x[1]-0.6)*(x[1]-0.6) }
	bo := gp.NewBayesOpt([][2]float64{{0, 1}, {0, 1}}, gp.BayesOptOptions{Seed: 2, Acquisition: gp.QEI{}})
	for round := 0; round < 6; round++ {
		for _, x := range bo.AskBatch(context.Background(), 3) {
			if err := bo.Tell(x, f(x)); err != nil {
				panic(err)
			}
		}
	}
	x, _, err := bo.Recommend(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Printf("argmax ≈ (%.1f, %.1f) after %d evaluations\n", x[0], x[1], bo.Len())
	// Output: argmax ≈ (0.3, 0.6) after 18 evaluations
}

// Thompson sampling proposes the maximiser of one posterior draw per Ask;
// the true maximum is f(0.427) = 0.776.
func ExampleThompson() {
	f := func(x []float64) float64 { return math.Sin(3*x[0]) - x[0]*x[0] }
	bo := gp.NewBayesOpt([][2]float64{{-1, 2}}, gp.BayesOptOptions{Seed: 3, Acquisition: gp.Thompson{}})
	for i := 0; i < 12; i++ {
		x := bo.Ask(context.Background())
		if err := bo.Tell(x, f(x)); err != nil {
			panic(err)
		}
	}
	x, y := bo.Best()
	fmt.Printf("best x ≈ %.2f, f ≈ %.3f\n", x[0], y)
	// Output: best x ≈ 0.43, f ≈ 0.776
}
