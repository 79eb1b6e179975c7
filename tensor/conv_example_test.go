package tensor_test

import (
	"fmt"
	"slices"

	gt "gorgonia.org/tensor"

	"github.com/gradus-ml/gradus/tensor"
)

func ExampleConv2D() {
	// One 3×3 image and one 2×2 filter; each output is the sum of a 2×2
	// window weighted by the filter, e.g. 1·1 + 2·2 + 4·3 + 5·4 = 37.
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 1, 3, 3)
	w := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 1, 1, 2, 2)
	y := tensor.Conv2D(x, w, tensor.ConvParams{})
	fmt.Println(y.Shape(), y.Values())

	// With padding 1 and stride 2 the windows start at -1 and 1.
	y = tensor.Conv2D(x, w, tensor.ConvParams{Padding: [2]int{1, 1}, Stride: [2]int{2, 2}})
	fmt.Println(y.Shape(), y.Values())
	// Output:
	// [1 1 2 2] [37 47 67 77]
	// [1 1 2 2] [4 18 36 77]
}

func ExampleMaxPool2D() {
	x := tensor.FromFloat32s([]float32{
		1, 5, 2, 0,
		3, 4, 8, -7,
		-9, 6, 1, 1,
		2, 0, 3, -4,
	}, 1, 1, 4, 4)
	y, argmax := tensor.MaxPool2D(x, tensor.PoolParams{Kernel: [2]int{2, 2}})
	fmt.Println(y.Values(), argmax)
	// The gradient goes to the positions that won.
	dx := tensor.MaxPool2DGrad(tensor.Ones(tensor.Float32, 1, 1, 2, 2), argmax, x.Shape())
	fmt.Println(dx.Values())
	// Output:
	// [5 8 6 3] [1 6 9 14]
	// [0 1 0 0 0 0 1 0 0 1 0 0 0 0 1 0]
}

func ExampleNewRNG() {
	// The same seed gives the same numbers on every run and platform.
	a, b := tensor.NewRNG(42), tensor.NewRNG(42)
	x := a.Normal(tensor.Float32, 0, 1, 2, 3)
	y := b.Normal(tensor.Float32, 0, 1, 2, 3)
	fmt.Println(x.Shape(), slices.Equal(x.Values(), y.Values()))
	fmt.Println(len(a.Perm(10)), a.Intn(6) < 6)
	// Output:
	// [2 3] true
	// 10 true
}

func ExampleFromDense() {
	d := gt.New(gt.WithShape(2, 2), gt.WithBacking([]float64{1, 2, 3, 4}))
	t, err := tensor.FromDense(d)
	if err != nil {
		panic(err)
	}
	// A row-major Dense shares memory with the Tensor.
	t.SetAt(10, 1, 1)
	v, _ := d.At(1, 1)
	fmt.Println(t.Values(), v)
	// Output: [1 2 3 10] 10
}
