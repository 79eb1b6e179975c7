package optim_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// SGD with momentum on f(p) = Σ (p − c)², whose gradient 2(p − c) is
// computed directly with tensor ops.
func ExampleSGD() {
	p := tensor.FromFloat64s([]float64{0, 0}, 2)
	c := tensor.FromFloat64s([]float64{3, -1}, 2)
	opt := optim.NewSGD([]*tensor.Tensor{p}, optim.SGDOptions{LR: 0.1, Momentum: 0.5})
	grad := tensor.ZerosLike(p)
	for step := 0; step < 100; step++ {
		tensor.MulScalarTo(grad, tensor.Sub(p, c), 2)
		if err := opt.Step([]*tensor.Tensor{grad}); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Printf("p = (%.4f, %.4f) after %d steps\n", p.At(0), p.At(1), opt.Steps())
	// Output: p = (3.0000, -1.0000) after 100 steps
}

// Adam fitting w in y = Xw, with the gradient of the mean squared error
// from autodiff. The graph is rebuilt each step; Reset recycles its memory.
func ExampleAdam() {
	x := tensor.FromFloat64s([]float64{1, 0, 0, 1, 1, 1, 2, -1}, 4, 2)
	y := tensor.FromFloat64s([]float64{2, -3, -1, 7}, 4) // exactly X·(2, −3)
	w := tensor.Zeros(tensor.Float64, 2)
	opt := optim.NewAdam([]*tensor.Tensor{w}, optim.AdamOptions{LR: 0.1})
	sched := optim.CosineAnnealingLR(0.1, 300, 0)
	g := graph.New()
	for step := 0; step < 300; step++ {
		g.Reset()
		wv := g.Var(w)
		r := graph.Sub(graph.MatMul(g.Const(x), wv), g.Const(y))
		loss := graph.Mean(graph.Square(r), nil, false)
		opt.SetLR(sched.LR(step))
		if err := opt.Step([]*tensor.Tensor{autodiff.Grad(loss, wv)[0].Value()}); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Printf("w = (%.3f, %.3f)\n", w.At(0), w.At(1))
	// Output: w = (2.000, -3.000)
}

// L-BFGS on the Rosenbrock function 100(y − x²)² + (1 − x)² from the
// classic start (−1.2, 1).
func ExampleMinimize() {
	rosen := func(x, grad []*tensor.Tensor) (float64, error) {
		a, b := x[0].At(0), x[0].At(1)
		grad[0].SetAt(-400*a*(b-a*a)-2*(1-a), 0)
		grad[0].SetAt(200*(b-a*a), 1)
		return 100*(b-a*a)*(b-a*a) + (1-a)*(1-a), nil
	}
	x := tensor.FromFloat64s([]float64{-1.2, 1}, 2)
	res, err := optim.Minimize(rosen, []*tensor.Tensor{x}, optim.LBFGSOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = (%.6f, %.6f), converged: %v (%s)\n", x.At(0), x.At(1), res.Converged, res.Reason)
	// Output: x = (1.000000, 1.000000), converged: true (gradient norm below GradTol)
}

// Lowering the learning rate when the validation loss stops improving.
func ExampleReduceLROnPlateau() {
	opt := optim.NewSGD([]*tensor.Tensor{tensor.Zeros(tensor.Float32, 3)}, optim.SGDOptions{LR: 0.1})
	plateau := optim.NewReduceLROnPlateau(opt, optim.PlateauOptions{Factor: 0.5, Patience: 1})
	for _, loss := range []float64{1.0, 0.8, 0.8, 0.8, 0.79, 0.5} {
		plateau.Observe(loss)
		fmt.Printf("%.2f ", opt.LR())
	}
	fmt.Println()
	// Output: 0.10 0.10 0.10 0.05 0.05 0.05
}

// Clipping gradients to a global norm before a step.
func ExampleClipByGlobalNorm() {
	g1 := tensor.FromFloat64s([]float64{3, 4}, 2)
	g2 := tensor.FromFloat64s([]float64{12}, 1)
	norm := optim.ClipByGlobalNorm([]*tensor.Tensor{g1, g2}, 1)
	fmt.Printf("norm %.0f, clipped to (%.4f, %.4f, %.4f)\n", norm, g1.At(0), g1.At(1), g2.At(0))
	// Output: norm 13, clipped to (0.2308, 0.3077, 0.9231)
}
