package autodiff_test

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradient-check cases for convolution and pooling (graph/conv.go). The
// convolution ops are bilinear and the pooling ops linear (max pooling
// piecewise so), hence the second-order checks are exact up to rounding.
// Max-pool inputs are a permutation of multiples of 0.1, so no two
// elements of a window are within a finite-difference step of each other
// and the chosen maxima never switch.

// cvDistinct returns a tensor of the given shape holding 0.1·(a
// permutation of 0..size-1) − the mean, all values distinct.
func cvDistinct(rng *tensor.RNG, shape ...int) *tensor.Tensor {
	size := 1
	for _, d := range shape {
		size *= d
	}
	v := make([]float64, size)
	for i, p := range rng.Perm(size) {
		v[i] = 0.1 * (float64(p) - float64(size)/2)
	}
	return tensor.FromValues(tensor.Float64, v, shape...)
}

// cvConvCase is a convolution geometry used by the three conv ops.
type cvConvCase struct {
	name           string
	xShape, wShape []int
	p              tensor.ConvParams
}

var cvConvCases = []cvConvCase{
	{"plain (2,3,5,5)*(4,3,3,3)", []int{2, 3, 5, 5}, []int{4, 3, 3, 3}, tensor.ConvParams{}},
	{"stride (2,1) pad 1", []int{1, 2, 6, 5}, []int{3, 2, 3, 2}, tensor.ConvParams{Stride: [2]int{2, 1}, Padding: [2]int{1, 1}}},
	{"dilation 2 groups 2", []int{1, 4, 6, 6}, []int{4, 2, 2, 2}, tensor.ConvParams{Dilation: [2]int{2, 2}, Groups: 2}},
	{"1x1", []int{2, 3, 3, 3}, []int{2, 3, 1, 1}, tensor.ConvParams{}},
}

// cvArgmax pools a fixed distinct-valued input of shape xShape and returns
// the argmax and the output shape.
func cvArgmax(xShape []int, p tensor.PoolParams) ([]int, []int) {
	y, argmax := tensor.MaxPool2D(cvDistinct(tensor.NewRNG(7), xShape...), p)
	return argmax, y.Shape()
}

func init() {
	for _, c := range cvConvCases {
		yShape := tensor.Conv2DShape(c.xShape, c.wShape, c.p)
		addCase("conv2d", opCase{name: c.name, inputs: linNormal(c.xShape, c.wShape),
			f: func(xs []*graph.Node) *graph.Node { return graph.Conv2D(xs[0], xs[1], c.p) }})
		addCase("conv2d_input_grad", opCase{name: c.name, inputs: linNormal(yShape, c.wShape),
			f: func(xs []*graph.Node) *graph.Node { return graph.Conv2DInputGrad(xs[0], xs[1], c.xShape, c.p) }})
		addCase("conv2d_weight_grad", opCase{name: c.name, inputs: linNormal(c.xShape, yShape),
			f: func(xs []*graph.Node) *graph.Node { return graph.Conv2DWeightGrad(xs[0], xs[1], c.wShape, c.p) }})
	}

	pools := []struct {
		name   string
		xShape []int
		p      tensor.PoolParams
	}{
		{"kernel 2 (1,2,4,4)", []int{1, 2, 4, 4}, tensor.PoolParams{Kernel: [2]int{2, 2}}},
		{"kernel 3 stride 2 pad 1 (2,1,5,5)", []int{2, 1, 5, 5}, tensor.PoolParams{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}},
		{"kernel (2,3) stride 1 (1,1,4,5)", []int{1, 1, 4, 5}, tensor.PoolParams{Kernel: [2]int{2, 3}, Stride: [2]int{1, 1}}},
	}
	for _, c := range pools {
		addCase("maxpool2d", opCase{name: c.name,
			inputs: func(rng *tensor.RNG) []*tensor.Tensor { return []*tensor.Tensor{cvDistinct(rng, c.xShape...)} },
			f:      func(xs []*graph.Node) *graph.Node { return graph.MaxPool2D(xs[0], c.p) }})
		argmax, yShape := cvArgmax(c.xShape, c.p)
		addCase("maxpool2d_grad", opCase{name: c.name, inputs: linNormal(yShape),
			f: func(xs []*graph.Node) *graph.Node { return graph.MaxPool2DGrad(xs[0], argmax, c.xShape) }})
		addCase("maxpool2d_gather", opCase{name: c.name, inputs: linNormal(c.xShape),
			f: func(xs []*graph.Node) *graph.Node { return graph.MaxPool2DGather(xs[0], argmax, yShape) }})
		addCase("avgpool2d", opCase{name: c.name, inputs: linNormal(c.xShape),
			f: func(xs []*graph.Node) *graph.Node { return graph.AvgPool2D(xs[0], c.p) }})
		addCase("avgpool2d_grad", opCase{name: c.name, inputs: linNormal(tensor.Pool2DShape(c.xShape, c.p)),
			f: func(xs []*graph.Node) *graph.Node { return graph.AvgPool2DGrad(xs[0], c.xShape, c.p) }})
	}
}
