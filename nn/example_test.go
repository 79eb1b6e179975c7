package nn_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

func ExampleLinear() {
	l := nn.NewLinear(tensor.NewRNG(1), 2, 1, true, tensor.Float64)
	tensor.CopyInto(l.Weight.Value, tensor.FromFloat64s([]float64{2, -1}, 1, 2))
	tensor.CopyInto(l.Bias.Value, tensor.FromFloat64s([]float64{0.5}, 1))
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{3, 4, 1, 1}, 2, 2)) // two rows
	y := l.Forward(x)                                              // x·Wᵀ + b
	fmt.Println(y.Shape(), y.Value().Values())
	// Output: [2 1] [2.5 1.5]
}

func ExampleSequential() {
	rng := tensor.NewRNG(1)
	model := nn.NewSequential(
		nn.NewLinear(rng, 784, 256, true, tensor.Float32),
		nn.ReLU{},
		nn.NewLinear(rng, 256, 10, true, tensor.Float32),
	)
	for _, p := range model.Params() {
		fmt.Println(p.Name, p.Value.Shape())
	}
	fmt.Println(nn.NumParams(model))
	// Output:
	// 0.weight [256 784]
	// 0.bias [256]
	// 2.weight [10 256]
	// 2.bias [10]
	// 203530
}

func ExampleGradients() {
	// One step of gradient descent on a linear model, by hand.
	l := nn.NewLinear(tensor.NewRNG(1), 1, 1, false, tensor.Float64)
	tensor.CopyInto(l.Weight.Value, tensor.FromFloat64s([]float64{1}, 1, 1))
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{2}, 1, 1))
	loss := graph.Sum(graph.Square(l.Forward(x)), nil, false) // (w·x)², d/dw = 2w·x² = 8
	grads := nn.Gradients(loss, l.Params())
	fmt.Println(grads[0].Values())
	w := l.Weight.Value
	tensor.CopyInto(w, tensor.Sub(w, tensor.MulScalar(grads[0], 0.1))) // w ← w − 0.1·8
	g.Reset()
	fmt.Printf("%.1f\n", w.Item())
	// Output:
	// [8]
	// 0.2
}

func ExampleLSTM() {
	rng := tensor.NewRNG(1)
	lstm := nn.NewLSTM(rng, 28, 128, nn.RNNOptions{Layers: 2, BatchFirst: true})
	g := graph.New()
	x := g.Const(rng.Normal(tensor.Float32, 0, 1, 16, 28, 28)) // (B, T, features)
	out, h, c := lstm.Forward(x, nil, nil)
	fmt.Println(out.Shape(), h.Shape(), c.Shape())
	fmt.Println(lstm.Params()[4].Name, nn.NumParams(lstm))
	// Output:
	// [16 28 128] [2 16 128] [2 16 128]
	// weight_ih_l1 212992
}

func ExampleBatchNorm() {
	bn := nn.NewBatchNorm1D(1, tensor.Float64)
	g := graph.New()
	y := bn.Forward(g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4, 1)))
	fmt.Printf("%.4f\n", y.Value().Values())
	fmt.Printf("%.4f %.4f\n", bn.RunningMean.Value.Item(), bn.RunningVar.Value.Item())
	// Output:
	// [-1.3416 -0.4472 0.4472 1.3416]
	// 0.2500 1.0667
}

func ExampleDropout() {
	d := nn.NewDropout(tensor.NewRNG(1), 0.5)
	g := graph.New()
	x := g.Const(tensor.Ones(tensor.Float64, 8))
	kept := 0
	for _, v := range d.Forward(x).Value().Values() {
		if v != 0 {
			kept++ // kept values are scaled to 2
		}
	}
	d.SetTraining(false)
	fmt.Println(kept > 0 && kept < 8, d.Forward(x) == x)
	// Output: true true
}

func ExampleOrthogonal() {
	w := nn.Orthogonal(tensor.NewRNG(1), tensor.Zeros(tensor.Float64, 3, 3), 1)
	wtw := tensor.MatMulT(w, w, true, false) // WᵀW = I
	dev := tensor.Max(tensor.Abs(tensor.Sub(wtw, tensor.Eye(tensor.Float64, 3))), nil, false)
	fmt.Println(dev.Item() < 1e-12)
	// Output: true
}
