// Package unchecked is package tensor's trusted entry: the kernels behind
// tensor's exported functions without their validation, for package graph
// only (internal/layercheck rejects any other importer).
//
// Gradus validates a call once, where it enters: a graph constructor (or
// graph.Apply) checks its operands and fixes the output's shape and dtype,
// so the op's Forward has nothing left to check and calls these kernels.
// tensor's exported functions, an entry point of their own, keep
// validating. A kernel here assumes, and does not check, that:
//
//   - all tensors share one dtype;
//   - dst has exactly the result's shape, is contiguous (a buffer the graph
//     allocated) and shares no memory with an operand;
//   - the operands fit the op (shapes broadcast, inner dimensions agree,
//     axes are in range, sorted and distinct).
//
// Given anything else a kernel may compute garbage or panic deep inside.
//
// The table is generic in the tensor type because tensor fills it at init:
// this package cannot import tensor, so T is *tensor.Tensor, C is
// tensor.ConvParams and P is tensor.PoolParams wherever the table is used.
package unchecked

// Kernels is tensor's table of trusted kernels. Each returns dst.
type Kernels[T, C, P any] struct {
	// The broadcasting binary ops: tensor.AddTo, SubTo, ... GeluGradTo.
	Add, Sub, Mul, Div, Pow, Maximum, Minimum, Xlogy        func(dst, a, b T) T
	Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual func(dst, a, b T) T
	SigmoidGrad, TanhGrad, ReluGrad, GeluGrad               func(dst, a, b T) T
	// LeakyReluGrad is tensor.LeakyReluGradTo (a, b are v, x; s the slope).
	LeakyReluGrad func(dst, a, b T, s float64) T
	// The unary ops: tensor.NegTo, ExpTo, ... GeluTo.
	Neg, Exp, Log, Log1p, Expm1, Sqrt, Square, Reciprocal, Abs, Sign    func(dst, a T) T
	Sin, Cos, Erf, Lgamma, Digamma, Tanh, Sigmoid, Softplus, Relu, Gelu func(dst, a T) T
	// The unary ops with a parameter: tensor.AddScalarTo, MulScalarTo,
	// PowScalarTo, LeakyReluTo, EluTo.
	AddScalar, MulScalar, PowScalar, LeakyRelu, Elu func(dst, a T, s float64) T
	// MatMulT computes op(a)·op(b) for operands of at least two
	// dimensions, op transposing the last two axes where its flag is set;
	// batch dimensions broadcast.
	MatMulT func(dst, a, b T, transA, transB bool) T
	// MatMulBiasT is MatMulT plus a 1-D bias of dst's last dimension added
	// to every row, in one pass over dst.
	MatMulBiasT func(dst, a, b, bias T, transA, transB bool) T
	// PackB packs the 2-D b, read transposed when transB, for the
	// products of MatMulPacked, reusing old (an earlier result, or nil);
	// it returns nil where no packed product applies (a GPU tensor, a b
	// that is not 2-D or has no columns, an inner dimension below 2).
	PackB func(old any, b T, transB bool) any
	// MatMulPacked is MatMulT(dst, a, b, transA, transB), bit for bit,
	// multiplying against packed (PackB's packing of b) where the product
	// is one GEMM; with packed nil it is MatMulT.
	MatMulPacked func(dst, a, b T, transA, transB bool, packed any) T
	// MatMulBiasPacked is MatMulBiasT(dst, a, b, bias, transA, transB),
	// bit for bit, against packed as MatMulPacked is MatMulT.
	MatMulBiasPacked func(dst, a, b, bias T, transA, transB bool, packed any) T
	// Reduce computes reduction kind (0 sum, 1 mean, 2 max, 3 min, 4 prod,
	// 5 logsumexp, 6 variance with ddof) of a over the axes; max and min
	// need non-empty axes.
	Reduce func(kind int, dst, a T, axes []int, keepdims bool, ddof int) T
	// SumTo sums a down to dst's shape, which broadcasts to a's.
	SumTo func(dst, a T) T
	// Softmax and LogSoftmax normalise along a non-negative axis.
	Softmax, LogSoftmax func(dst, a T, axis int) T
	// SoftmaxGrad is tensor.SoftmaxGrad: y ⊙ (v − Σ v ⊙ y) along a
	// non-negative axis, for y and v of dst's shape.
	SoftmaxGrad func(dst, y, v T, axis int) T
	// ChannelAffine is tensor.ChannelAffineTo (shift may be nil, and x a
	// view of any layout); ChannelDot is tensor.ChannelDot into dst (C).
	ChannelAffine func(dst, x, scale, shift T) T
	ChannelDot    func(dst, a, b T) T
	// ChannelMoments is tensor.ChannelMoments into dst (2, C).
	ChannelMoments func(dst, x T) T
	// Conv2D is tensor.Conv2DTo, Conv2DInputGrad tensor.Conv2DInputGradTo
	// and Conv2DWeightGrad tensor.Conv2DWeightGradTo.
	Conv2D                            func(dst, x, w T, p C) T
	Conv2DInputGrad, Conv2DWeightGrad func(dst, a, b T, shape []int, p C) T
	// MaxPool2D is tensor.MaxPool2DTo, MaxPool2DGrad tensor.MaxPool2DGradTo
	// (with dst's shape as xShape), AvgPool2D tensor.AvgPool2DTo and
	// AvgPool2DGrad tensor.AvgPool2DGradTo.
	MaxPool2D     func(dst T, argmax []int, x T, p P) (T, []int)
	MaxPool2DGrad func(dst, dy T, argmax []int) T
	AvgPool2D     func(dst, x T, p P) T
	AvgPool2DGrad func(dst, dy T, xShape []int, p P) T
	// The views: Reshape is tensor.Reshape to a resolved shape (no -1),
	// Permute tensor.Permute with non-negative entries, Expand
	// tensor.Expand, Slice tensor.Slice along a non-negative axis with a
	// non-zero step.
	Reshape, Expand func(a T, shape []int) T
	// ReshapesInPlace reports whether Reshape(a, shape) is a view of a's
	// storage (NumPy's no-copy rule), without building it.
	ReshapesInPlace func(a T, shape []int) bool
	Permute         func(a T, perm []int) T
	Slice           func(a T, axis, start, stop, step int) T
	// Copy is tensor.CopyInto for src of dst's shape (a strided dst is
	// fine here).
	Copy func(dst, src T)
	// IndexSelect is tensor.IndexSelectTo and ScatterAdd tensor.ScatterAddTo
	// along a non-negative axis with indices in range.
	IndexSelect, ScatterAdd func(dst, a T, axis int, idx []int) T
	// Where is tensor.WhereTo into a dst of the broadcast shape, Clamp
	// tensor.ClampTo with lo <= hi, Diagonal tensor.DiagonalTo and AddDiag
	// tensor.AddDiagTo.
	Where    func(dst, cond, a, b T) T
	Clamp    func(dst, a T, lo, hi float64) T
	Diagonal func(dst, a T) T
	AddDiag  func(dst, a, d T) T
	// SqDist is tensor.SqDistTo.
	SqDist func(dst, a, b T) T
	// Attention is tensor.AttentionPacked into dst (m may be the zero
	// value: no mask), AttentionGrad tensor.AttentionGradPacked.
	Attention     func(dst, q, k, v, m T, scale float64, causal bool) T
	AttentionGrad func(dst, q, k, v, m, out, ct T, scale float64, causal bool) T
	// Run32 and Run64 return the kernel over contiguous runs of equal
	// length of the elementwise op named as its field above ("Add",
	// "Sigmoid", "AddScalar", "LeakyReluGrad", ...), with the parameter p
	// where the op takes one, or nil for another name; unary ops ignore
	// y. Element i of dst depends on element i of x and y alone, with the
	// bits the tensor-level kernel gives it, so a caller may apply it to
	// any split of a tensor's elements (graph's fused programs do).
	Run32 func(name string, p float64) func(dst, x, y []float32)
	Run64 func(name string, p float64) func(dst, x, y []float64)
	// Data32 and Data64 return a tensor's whole backing array, which its
	// Offset and Strides index.
	Data32 func(t T) []float32
	Data64 func(t T) []float64
	// DeviceUpdate applies one step of an optimiser's rule ("adam",
	// "sgd", "rmsprop", "adagrad") in place to the GPU tensor p with
	// gradient g, up to three state tensors (nil where an option is off)
	// and the rule's scalars h (tensor/internal/cuda's Kernels.Update
	// lists them), returning false without doing anything when p lives on
	// the CPU.
	DeviceUpdate func(rule string, p, g T, state [3]T, h [8]float64) bool

	// DeviceCell runs graph's fused recurrent cell op ("lstm_cell",
	// "lstm_cell_grad", "gru_cell", "gru_cell_grad"; graph/rnn_kernels.go
	// says what each computes) into dst from its operands in (the state
	// last) on their GPU, returning false without doing anything when
	// dst and the operands live on the CPU.
	DeviceCell func(op string, dst T, in []T) bool
	// RowStride returns the stride between consecutive rows of t (every
	// axis but the last flattened) when its last axis is contiguous and
	// its leading axes collapse into one, and false otherwise: the
	// operands the cell kernels take as they are, on either device.
	RowStride func(t T) (int, bool)
}

var table any

// Set installs tensor's table; tensor calls it at init.
func Set[T, C, P any](k *Kernels[T, C, P]) { table = k }

// Get returns the table tensor installed. Call it from a package-level
// variable's initialiser: imported packages finish their init first.
func Get[T, C, P any]() *Kernels[T, C, P] {
	k, ok := table.(*Kernels[T, C, P])
	if !ok {
		panic("unchecked: package tensor has not installed its kernels")
	}
	return k
}
