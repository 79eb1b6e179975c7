package tensor

import "github.com/gradus-ml/gradus/internal/unchecked"

// The trusted kernels: the exported functions validate and then call these,
// and graph's op Forwards call them directly through internal/unchecked,
// because the op's constructor has already validated the operands and
// sized the destination (see that package's doc for what each assumes).
func init() {
	param := func(op *paramOp) func(dst, a *Tensor, s float64) *Tensor {
		return func(dst, a *Tensor, s float64) *Tensor { return op.run(dst, a, s, 0) }
	}
	unchecked.Set(&unchecked.Kernels[*Tensor, ConvParams, PoolParams]{
		Add: addOp.run, Sub: subOp.run, Mul: mulOp.run, Div: divOp.run,
		Pow: powOp.run, Maximum: maximumOp.run, Minimum: minimumOp.run, Xlogy: xlogyOp.run,
		Equal: equalOp.run, NotEqual: notEqualOp.run, Less: lessOp.run, LessEqual: lessEqualOp.run,
		Greater: greaterOp.run, GreaterEqual: greaterEqualOp.run,
		SigmoidGrad: sigmoidGradOp.run, TanhGrad: tanhGradOp.run, ReluGrad: reluGradOp.run,
		GeluGrad:      geluGradOp.run,
		LeakyReluGrad: func(dst, v, x *Tensor, s float64) *Tensor { return leakyReluGradOp(s).run(dst, v, x) },

		Neg: negOp.run, Exp: expOp.run, Log: logOp.run, Log1p: log1pOp.run, Expm1: expm1Op.run,
		Sqrt: sqrtOp.run, Square: squareOp.run, Reciprocal: reciprocalOp.run, Abs: absOp.run,
		Sign: signOp.run, Sin: sinOp.run, Cos: cosOp.run, Erf: erfOp.run, Lgamma: lgammaOp.run,
		Digamma: digammaOp.run, Tanh: tanhOp.run, Sigmoid: sigmoidOp.run, Softplus: softplusOp.run,
		Relu: reluOp.run, Gelu: geluOp.run,

		AddScalar: param(addScalarOp), MulScalar: param(mulScalarOp), PowScalar: param(powScalarOp),
		LeakyRelu: param(leakyReluOp), Elu: param(eluOp),

		MatMulT:          matmulTrusted,
		MatMulBiasT:      matmulBiasTrusted,
		PackB:            packBTrusted,
		MatMulPacked:     matmulPackedTrusted,
		MatMulBiasPacked: matmulBiasPackedTrusted,
		Reduce:           reduceTrusted,
		SumTo:            sumToTrusted,
		Softmax:          func(dst, a *Tensor, axis int) *Tensor { return softmaxRun(dst, a, axis, false) },
		LogSoftmax:       func(dst, a *Tensor, axis int) *Tensor { return softmaxRun(dst, a, axis, true) },
		SoftmaxGrad:      softmaxGradRun,
		ChannelAffine:    channelAffineTrusted,
		ChannelDot:       channelDotTrusted,
		ChannelMoments:   channelMomentsTrusted,
		Conv2D:           conv2DTrusted,
		Conv2DInputGrad:  conv2DInputGradTrusted,
		Conv2DWeightGrad: conv2DWeightGradTrusted,
		MaxPool2D:        maxPool2DTrusted,
		MaxPool2DGrad:    maxPool2DGradTrusted,
		AvgPool2D:        avgPool2DTrusted,
		AvgPool2DGrad:    avgPool2DGradTrusted,

		Reshape: func(a *Tensor, shape []int) *Tensor { return reshapeTrusted(a, cloneInts(shape)) },
		ReshapesInPlace: func(a *Tensor, shape []int) bool {
			_, ok := reshapeStrides(a.shape, a.strides, shape)
			return ok
		},
		Expand:      expandTrusted,
		Permute:     permuteTrusted,
		Slice:       sliceTrusted,
		Copy:        copyTrusted,
		IndexSelect: indexSelectTrusted,
		ScatterAdd:  scatterAddTrusted,

		Where:    whereTrusted,
		Clamp:    func(dst, a *Tensor, lo, hi float64) *Tensor { return clampOp.run(dst, a, lo, hi) },
		Diagonal: diagonalTrusted,
		AddDiag:  addDiagTrusted,
		SqDist:   sqDistTrusted,

		Attention:     attentionTrusted,
		AttentionGrad: attentionGradTrusted,

		Run32: elemRun[float32], Run64: elemRun[float64], Data32: storage32, Data64: storage64,
		DeviceUpdate: deviceUpdate,

		DeviceCell: deviceCell,
		RowStride:  cellRowStride,
	})
}
