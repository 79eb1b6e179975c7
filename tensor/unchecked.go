package tensor

import "github.com/gradus-ml/gradus/internal/unchecked"

// The trusted kernels: the exported functions validate and then call these,
// and graph's op Forwards call them directly through internal/unchecked,
// because the op's constructor has already validated the operands and
// sized the destination (see that package's doc for what each assumes).
func init() {
	unchecked.Set(&unchecked.Kernels[*Tensor, ConvParams]{
		Add:              addOp.run,
		Sub:              subOp.run,
		Mul:              mulOp.run,
		Div:              divOp.run,
		AddScalar:        func(dst, a *Tensor, s float64) *Tensor { return addScalarOp.run(dst, a, s, 0) },
		MulScalar:        func(dst, a *Tensor, s float64) *Tensor { return mulScalarOp.run(dst, a, s, 0) },
		MatMulT:          matmulTrusted,
		Reduce:           reduceTrusted,
		Conv2D:           conv2DTrusted,
		Conv2DInputGrad:  conv2DInputGradTrusted,
		Conv2DWeightGrad: conv2DWeightGradTrusted,
	})
}
