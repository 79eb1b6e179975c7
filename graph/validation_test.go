package graph_test

// Ops whose Forward calls tensor's kernels without validation (see the
// package doc, "Validation") must still fail, at their constructor, with a
// *tensor.Error naming the op, the shapes and the caller's file:line, and
// an op value re-applied to unfit nodes with Apply must fail the same way
// rather than inside a kernel.

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// here returns the file:line it is called from.
func here() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line)
}

// requireMisuse checks that e names op, every fragment and the call site.
func requireMisuse(t *testing.T, e *tensor.Error, op, site string, fragments ...string) {
	t.Helper()
	require.NotNil(t, e)
	assert.Equal(t, op, e.Op)
	assert.Equal(t, site, e.Caller, "the caller's file:line")
	for _, f := range fragments {
		assert.Contains(t, e.Msg, f)
	}
	assert.Contains(t, e.Error(), "(called at "+site+")")
}

func TestBinaryMisuseNamesOpShapesAndCaller(t *testing.T) {
	g := graph.New()
	a := g.Var(tensor.Ones(tensor.Float32, 2, 3))
	b := g.Var(tensor.Ones(tensor.Float32, 4, 1, 2))
	c := g.Var(tensor.Ones(tensor.Float64, 2, 3))
	for _, tc := range []struct {
		op string
		f  func(a, b *graph.Node) *graph.Node
	}{
		{"add", graph.Add}, {"sub", graph.Sub}, {"mul", graph.Mul}, {"div", graph.Div},
		{"pow", graph.Pow}, {"maximum", graph.Maximum}, {"minimum", graph.Minimum}, {"xlogy", graph.Xlogy},
		{"equal", graph.Equal}, {"not_equal", graph.NotEqual}, {"less", graph.Less},
		{"less_equal", graph.LessEqual}, {"greater", graph.Greater}, {"greater_equal", graph.GreaterEqual},
		{"sigmoid_grad", graph.SigmoidGrad}, {"tanh_grad", graph.TanhGrad}, {"relu_grad", graph.ReluGrad},
	} {
		t.Run(tc.op, func(t *testing.T) {
			e, site := graphError(t, func() { tc.f(a, b) }), here()
			requireMisuse(t, e, tc.op, site, "(2, 3)", "(4, 1, 2)", "do not broadcast")
			e, site = graphError(t, func() { tc.f(a, c) }), here()
			requireMisuse(t, e, tc.op, site, "mixed dtypes", "(2, 3) float32", "(2, 3) float64")
			// The op of a valid node, re-applied to operands that do not
			// broadcast: the constructor's check, not a kernel's panic.
			op := tc.f(a, a).Op()
			e, site = graphError(t, func() { graph.Apply(op, a, b) }), here()
			requireMisuse(t, e, tc.op, site, "(2, 3)", "(4, 1, 2)", "do not broadcast")
			e, site = graphError(t, func() { graph.Apply(op, a, c) }), here()
			requireMisuse(t, e, tc.op, site, "mixed dtypes")
		})
	}
}

func TestUnaryOnStridedInputs(t *testing.T) {
	// The unchecked unary kernels read a transposed view: y = f(xᵀ).
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{1, 4, 9, 16, 25, 36}, 2, 3))
	xt := graph.Transpose(x)
	assert.Equal(t, []float64{1, 16, 4, 25, 9, 36}, graph.Square(graph.Sqrt(xt)).Value().Values())
	assert.Equal(t, []float64{-1, -16, -4, -25, -9, -36}, graph.Neg(xt).Value().Values())
	assert.Equal(t, []float64{1, 16, 4, 25, 9, 36}, graph.Relu(xt).Value().Values())
	assert.InDeltaSlice(t, []float64{2, 17, 5, 26, 10, 37}, graph.Exp(graph.Log1p(xt)).Value().Values(), 1e-12)
	assert.Equal(t, []float64{3, 48, 12, 75, 27, 108}, graph.MulScalar(xt, 3).Value().Values())
}

func TestBinaryBroadcastBothWays(t *testing.T) {
	// Neither shape is the result: the trusted Forward builds (2, 3, 4).
	g := graph.New()
	a := g.Const(tensor.FromFloat64s([]float64{1, 2, 3}, 1, 3, 1))
	b := g.Const(tensor.FromFloat64s([]float64{10, 20, 30, 40, 50, 60, 70, 80}, 2, 1, 4))
	y := graph.Add(a, b)
	require.Equal(t, []int{2, 3, 4}, y.Shape())
	assert.Equal(t, []float64{
		11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43,
		51, 61, 71, 81, 52, 62, 72, 82, 53, 63, 73, 83,
	}, y.Value().Values())
	z := graph.Mul(g.Const(tensor.FromFloat64s([]float64{2, 3}, 2, 1)), g.Const(tensor.FromFloat64s([]float64{1, 10}, 2)))
	assert.Equal(t, []float64{2, 20, 3, 30}, z.Value().Values())
}

func TestMatMulMisuseNamesOpShapesAndCaller(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.Ones(tensor.Float32, 2, 100))
	w := g.Var(tensor.Ones(tensor.Float32, 256, 784))
	e, site := graphError(t, func() { graph.MatMulT(x, w, false, true) }), here()
	requireMisuse(t, e, "matmul", site, "inner dimensions differ", "(2, 100)", "(256, 784)ᵀ", "100 vs 784")

	xb := g.Var(tensor.Ones(tensor.Float32, 3, 2, 4))
	wb := g.Var(tensor.Ones(tensor.Float32, 2, 4, 5))
	e, site = graphError(t, func() { graph.MatMul(xb, wb) }), here()
	requireMisuse(t, e, "matmul", site, "batch dimensions (3,) and (2,)", "(3, 2, 4)", "(2, 4, 5)", "do not broadcast")

	w64 := g.Var(tensor.Ones(tensor.Float64, 100, 3))
	e, site = graphError(t, func() { graph.MatMul(x, w64) }), here()
	requireMisuse(t, e, "matmul", site, "mixed dtypes", "(2, 100) float32", "(100, 3) float64")

	// Re-applying a matmul op to operands that do not fit.
	op := graph.MatMul(x, g.Var(tensor.Ones(tensor.Float32, 100, 3))).Op()
	e, site = graphError(t, func() { graph.Apply(op, x, x) }), here()
	requireMisuse(t, e, "matmul", site, "inner dimensions differ", "(2, 100)")
	v := g.Var(tensor.Ones(tensor.Float32, 100))
	e, site = graphError(t, func() { graph.Apply(op, x, v) }), here()
	requireMisuse(t, e, "matmul", site, "at least 2 dimensions", "(100,) float32")
}

func TestMatMulBatchShapes(t *testing.T) {
	// (2, 1, 2, 3)ᵀ-free batch broadcast against (3, 3, 1): the trusted
	// Forward builds (2, 3, 2, 1); every entry is a row sum weighted by
	// the batch index of b.
	g := graph.New()
	a := g.Const(tensor.Ones(tensor.Float64, 2, 1, 2, 3))
	bv := make([]float64, 9)
	for i := range bv {
		bv[i] = float64(i/3 + 1) // batch j holds j+1 in every entry
	}
	y := graph.MatMul(a, g.Const(tensor.FromFloat64s(bv, 3, 3, 1)))
	require.Equal(t, []int{2, 3, 2, 1}, y.Shape())
	assert.Equal(t, []float64{3, 3, 6, 6, 9, 9, 3, 3, 6, 6, 9, 9}, y.Value().Values())
	// Transposed operands: op(a) = aᵀ of (3, 2) and op(b) = bᵀ of (4, 3).
	at := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 3, 2))
	bt := g.Const(tensor.Ones(tensor.Float64, 4, 3))
	z := graph.MatMulT(at, bt, true, true)
	require.Equal(t, []int{2, 4}, z.Shape())
	assert.Equal(t, []float64{9, 9, 9, 9, 12, 12, 12, 12}, z.Value().Values())
}

func TestReduceMisuseNamesOpShapesAndCaller(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.Ones(tensor.Float32, 2, 3))
	e, site := graphError(t, func() { graph.Sum(x, []int{2}, false) }), here()
	requireMisuse(t, e, "sum", site, "axis 2", "(2, 3) float32")
	e, site = graphError(t, func() { graph.Mean(x, []int{1, -1}, false) }), here()
	requireMisuse(t, e, "mean", site, "repeated", "(2, 3) float32")
	e, site = graphError(t, func() { graph.Max(g.Var(tensor.Ones(tensor.Float32, 2, 0)), []int{1}, false) }), here()
	requireMisuse(t, e, "max", site, "size-0", "(2, 0) float32")
	// A reduction op re-applied to an operand it was not built for: an
	// axis out of range, or another number of elements per output.
	op := graph.Mean(x, []int{1}, false).Op()
	v := g.Var(tensor.Ones(tensor.Float32, 6))
	e, site = graphError(t, func() { graph.Apply(op, v) }), here()
	requireMisuse(t, e, "mean", site, "out of range", "(6,) float32")
	y := g.Var(tensor.Ones(tensor.Float32, 2, 5))
	e, site = graphError(t, func() { graph.Apply(op, y) }), here()
	requireMisuse(t, e, "mean", site, "3 elements", "(2, 5) float32", "gives 5")
	// Re-applied to an operand of the same geometry, it reduces as built.
	z := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	assert.Equal(t, []float64{2, 5}, graph.Apply(graph.Mean(z, []int{1}, false).Op(), z).Value().Values())
}

func TestReduceValuesThroughTheTrustedKernel(t *testing.T) {
	// Every kind over the middle axis of a (2, 2, 2) tensor, by hand.
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 5, -1, 0, 4, 4}, 2, 2, 2))
	ax := []int{1}
	for _, tc := range []struct {
		name string
		y    *graph.Node
		want []float64
	}{
		{"sum", graph.Sum(x, ax, false), []float64{4, 7, 3, 4}},
		{"mean", graph.Mean(x, ax, true), []float64{2, 3.5, 1.5, 2}},
		{"max", graph.Max(x, ax, false), []float64{3, 5, 4, 4}},
		{"min", graph.Min(x, ax, false), []float64{1, 2, -1, 0}},
		{"prod", graph.Prod(x, ax, false), []float64{3, 10, -4, 0}},
		{"variance", graph.Variance(x, ax, false, 1), []float64{2, 4.5, 12.5, 8}},
	} {
		assert.InDeltaSlice(t, tc.want, tc.y.Value().Values(), 1e-12, tc.name)
	}
	lse := graph.LogSumExp(x, ax, false).Value().Values()
	assert.InDelta(t, 3+math.Log(1+math.Exp(-2)), lse[0], 1e-12)
	assert.Equal(t, []int{2, 1, 2}, graph.Mean(x, ax, true).Shape())
	assert.Equal(t, []int{}, graph.Sum(x, nil, false).Shape())
}

func TestConvMisuseNamesOpShapesAndCaller(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.Ones(tensor.Float32, 1, 3, 5, 5))
	w := g.Var(tensor.Ones(tensor.Float32, 4, 2, 3, 3))
	e, site := graphError(t, func() { graph.Conv2D(x, w, tensor.ConvParams{}) }), here()
	requireMisuse(t, e, "conv2d", site, "3 channels", "weight (4, 2, 3, 3)", "(1, 3, 5, 5) float32")
	big := g.Var(tensor.Ones(tensor.Float32, 4, 3, 7, 7))
	e, site = graphError(t, func() { graph.Conv2D(x, big, tensor.ConvParams{}) }), here()
	requireMisuse(t, e, "conv2d", site, "smaller than", "(1, 3, 5, 5)", "(4, 3, 7, 7)")
	w3 := g.Var(tensor.Ones(tensor.Float32, 4, 3, 3, 3))
	dy := g.Var(tensor.Ones(tensor.Float32, 1, 4, 2, 2))
	e, site = graphError(t, func() { graph.Conv2DInputGrad(dy, w3, []int{1, 3, 5, 5}, tensor.ConvParams{}) }), here()
	requireMisuse(t, e, "conv2d_input_grad", site, "(1, 4, 2, 2) float32", "output (1, 4, 3, 3)")
	e, site = graphError(t, func() { graph.Conv2DWeightGrad(x, dy, []int{4, 3, 3, 3}, tensor.ConvParams{}) }), here()
	requireMisuse(t, e, "conv2d_weight_grad", site, "(1, 4, 2, 2) float32", "output (1, 4, 3, 3)")

	// Ops re-applied to operands they were not built for.
	op := graph.Conv2D(x, w3, tensor.ConvParams{}).Op()
	x7 := g.Var(tensor.Ones(tensor.Float32, 1, 3, 7, 7))
	e, site = graphError(t, func() { graph.Apply(op, x7, w3) }), here()
	requireMisuse(t, e, "conv2d", site, "(1, 4, 3, 3)", "(1, 4, 5, 5)")
	e, site = graphError(t, func() { graph.Apply(op, x, w) }), here()
	requireMisuse(t, e, "conv2d", site, "3 channels")
	dy3 := g.Var(tensor.Ones(tensor.Float32, 1, 4, 3, 3))
	igrad := graph.Conv2DInputGrad(dy3, w3, []int{1, 3, 5, 5}, tensor.ConvParams{}).Op()
	e, site = graphError(t, func() { graph.Apply(igrad, dy, w3) }), here()
	requireMisuse(t, e, "conv2d_input_grad", site, "(1, 4, 2, 2) float32")
	wgrad := graph.Conv2DWeightGrad(x, dy3, []int{4, 3, 3, 3}, tensor.ConvParams{}).Op()
	e, site = graphError(t, func() { graph.Apply(wgrad, x, dy) }), here()
	requireMisuse(t, e, "conv2d_weight_grad", site, "(1, 4, 2, 2) float32")

	// A valid re-application computes: a 3×3 all-ones kernel over ones
	// sums 3·9 = 27 taps.
	y := graph.Apply(op, x, w3)
	require.Equal(t, []int{1, 4, 3, 3}, y.Shape())
	assert.Equal(t, float64(27), y.Value().Values()[0])
}

func TestSumToAndSoftmaxMisuse(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.Ones(tensor.Float32, 2, 3))
	e, site := graphError(t, func() { graph.SumTo(x, 2, 1, 1) }), here()
	requireMisuse(t, e, "sum_to", site, "(2, 1, 1)", "(2, 3) float32")
	e, site = graphError(t, func() { graph.Softmax(x, 2) }), here()
	requireMisuse(t, e, "softmax", site, "axis 2", "(2, 3) float32")
	e, site = graphError(t, func() { graph.LogSoftmax(x, -3) }), here()
	requireMisuse(t, e, "log_softmax", site, "axis -3", "(2, 3) float32")

	sumTo := graph.SumTo(x, 3).Op()
	y := g.Var(tensor.Ones(tensor.Float32, 3, 2))
	e, site = graphError(t, func() { graph.Apply(sumTo, y) }), here()
	requireMisuse(t, e, "sum_to", site, "(3,)", "(3, 2) float32")
	soft := graph.Softmax(x, 1).Op()
	v := g.Var(tensor.Ones(tensor.Float32, 6))
	e, site = graphError(t, func() { graph.Apply(soft, v) }), here()
	requireMisuse(t, e, "softmax", site, "axis 1", "(6,) float32")
}

func TestSumToValuesThroughTheTrustedKernel(t *testing.T) {
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2, 2, 3))
	assert.Equal(t, []float64{8, 10, 12, 14, 16, 18}, graph.SumTo(x, 2, 3).Value().Values())
	assert.Equal(t, []float64{22, 26, 30}, graph.SumTo(x, 1, 3).Value().Values())
	assert.Equal(t, []float64{6, 15, 24, 33}, graph.SumTo(x, 2, 2, 1).Value().Values())
	assert.Equal(t, []float64{78}, graph.SumTo(x).Value().Values())
	// On a transposed view: (3, 2) columns summed into (1, 2).
	m := graph.Transpose(g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3)))
	assert.Equal(t, []float64{6, 15}, graph.SumTo(m, 1, 2).Value().Values())
}

func TestPoolingMisuseNamesOpShapesAndCaller(t *testing.T) {
	g := graph.New()
	p := tensor.PoolParams{Kernel: [2]int{2, 2}}
	x := g.Var(tensor.FromFloat64s([]float64{1, 5, 2, 0, 3, 4, 8, 7, 6, 0, 1, 2, 9, 3, 4, 5}, 1, 1, 4, 4))
	e, site := graphError(t, func() { graph.AvgPool2DGrad(g.Var(tensor.Ones(tensor.Float64, 1, 1, 3, 3)), []int{1, 1, 4, 4}, p) }), here()
	requireMisuse(t, e, "avgpool2d_grad", site, "(1, 1, 3, 3) float64", "output (1, 1, 2, 2)", "input (1, 1, 4, 4)")
	ones22 := g.Var(tensor.Ones(tensor.Float64, 1, 1, 2, 2))
	e, site = graphError(t, func() { graph.MaxPool2DGrad(ones22, []int{0, 1, 2, 16}, []int{1, 1, 4, 4}) }), here()
	requireMisuse(t, e, "maxpool2d_grad", site, "16", "input shape (1, 1, 4, 4)", "(1, 1, 2, 2) float64")

	// Op values re-applied to operands they were not built for.
	small := g.Var(tensor.Ones(tensor.Float64, 1, 1, 2, 2))
	for _, op := range []struct {
		name string
		y    *graph.Node
	}{{"maxpool2d", graph.MaxPool2D(x, p)}, {"avgpool2d", graph.AvgPool2D(x, p)}} {
		e, site = graphError(t, func() { graph.Apply(op.y.Op(), small) }), here()
		requireMisuse(t, e, op.name, site, "op built for output (1, 1, 2, 2)", "(1, 1, 2, 2) float64 gives (1, 1, 1, 1)")
	}
	mp := graph.MaxPool2D(x, p)
	assert.Equal(t, []float64{5, 8, 9, 5}, mp.Value().Values())
	grad := graph.MaxPool2DGrad(g.Var(tensor.Ones(tensor.Float64, 1, 1, 2, 2)), []int{1, 6, 12, 15}, []int{1, 1, 4, 4})
	e, site = graphError(t, func() { graph.Apply(grad.Op(), g.Var(tensor.Ones(tensor.Float64, 1, 1, 1, 2))) }), here()
	requireMisuse(t, e, "maxpool2d_grad", site, "4 argmax", "(1, 1, 1, 2) float64")
	gather := graph.MaxPool2DGather(x, []int{1, 6, 12, 15}, []int{1, 1, 2, 2})
	assert.Equal(t, []float64{5, 8, 9, 5}, gather.Value().Values())
	e, site = graphError(t, func() { graph.Apply(gather.Op(), small) }), here()
	requireMisuse(t, e, "maxpool2d_gather", site, "out of range", "(1, 1, 2, 2) float64")
	agrad := graph.AvgPool2DGrad(g.Var(tensor.Ones(tensor.Float64, 1, 1, 2, 2)), []int{1, 1, 4, 4}, p)
	assert.Equal(t, make([]float64, 16), graph.Sub(agrad, g.Const(tensor.Full(tensor.Float64, 0.25, 1, 1, 4, 4))).Value().Values())
	e, site = graphError(t, func() { graph.Apply(agrad.Op(), g.Var(tensor.Ones(tensor.Float64, 1, 1, 3, 3))) }), here()
	requireMisuse(t, e, "avgpool2d_grad", site, "(1, 1, 3, 3) float64")
}

func TestShapeOpsMisuseNamesOpShapesAndCaller(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.Ones(tensor.Float32, 2, 3))
	e, site := graphError(t, func() { graph.Reshape(x, 4, 2) }), here()
	requireMisuse(t, e, "reshape", site, "(2, 3) float32", "[4 2]")
	e, site = graphError(t, func() { graph.Permute(x, 0, 0) }), here()
	requireMisuse(t, e, "permute", site, "[0 0]", "(2, 3) float32")
	e, site = graphError(t, func() { graph.BroadcastTo(x, 4, 3) }), here()
	requireMisuse(t, e, "broadcast_to", site, "(2, 3) float32", "(4, 3)")
	e, site = graphError(t, func() { graph.Slice(x, 2, 0, 1, 1) }), here()
	requireMisuse(t, e, "slice", site, "axis 2", "(2, 3) float32")
	e, site = graphError(t, func() { graph.ScatterSlice(x, []int{2, 5}, 1, 0, 2, 1) }), here()
	requireMisuse(t, e, "scatter_slice", site, "(2, 3) float32", "shape (2, 5)", "(shape (2, 2))")
	y := g.Var(tensor.Ones(tensor.Float64, 2, 3))
	e, site = graphError(t, func() { graph.Concat(0, x, y) }), here()
	requireMisuse(t, e, "concat", site, "(2, 3) float32", "(2, 3) float64")
	e, site = graphError(t, func() { graph.Stack(0, x, y) }), here()
	requireMisuse(t, e, "stack", site, "(1, 2, 3) float32", "(1, 2, 3) float64")
	e, site = graphError(t, func() { graph.Pad(x, [][2]int{{0, 1}}, 0) }), here()
	requireMisuse(t, e, "pad", site, "1 pad pairs", "(2, 3) float32")

	// Op values re-applied to operands they were not built for: the
	// constructor's check, not a panic inside a view or a copy.
	v := g.Var(tensor.Ones(tensor.Float32, 5))
	for _, tc := range []struct {
		name string
		y    *graph.Node
		in   []*graph.Node
		frag []string
	}{
		{"reshape", graph.Reshape(x, 3, 2), []*graph.Node{v}, []string{"(5,) float32", "(3, 2)"}},
		{"permute", graph.Transpose(x), []*graph.Node{v}, []string{"[1 0]", "(5,) float32"}},
		{"broadcast_to", graph.BroadcastTo(x, 4, 2, 3), []*graph.Node{v}, []string{"(5,) float32", "(4, 2, 3)"}},
		{"slice", graph.Slice(x, 1, 0, 2, 1), []*graph.Node{v}, []string{"axis 1", "(5,) float32"}},
		{"scatter_slice", graph.ScatterSlice(x, []int{2, 5}, 1, 1, 4, 1), []*graph.Node{v}, []string{"(5,) float32", "shape (2, 5)"}},
		{"concat", graph.Concat(1, x, x), []*graph.Node{x, g.Var(tensor.Ones(tensor.Float32, 3, 3))}, []string{"(2, 3) float32", "(3, 3) float32"}},
		{"pad", graph.Pad(x, [][2]int{{1, 0}, {0, 2}}, 0), []*graph.Node{v}, []string{"2 pad pairs", "(5,) float32"}},
	} {
		e, site = graphError(t, func() { graph.Apply(tc.y.Op(), tc.in...) }), here()
		requireMisuse(t, e, tc.name, site, tc.frag...)
	}
}

func TestShapeOpsValuesThroughTheTrustedKernels(t *testing.T) {
	g := graph.New()
	// x = [[1 2 3] [4 5 6]].
	x := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, graph.Transpose(x).Value().Values())
	// Reshaping the transposed (strided) view copies it first.
	r := graph.Reshape(graph.Transpose(x), 2, 3)
	assert.Equal(t, []int{2, 3}, r.Shape())
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, r.Value().Values())
	assert.Equal(t, []float64{1, 2, 3, 1, 2, 3}, graph.BroadcastTo(graph.Slice(x, 0, 0, 1, 1), 2, 3).Value().Values())
	assert.Equal(t, []float64{3, 1, 6, 4}, graph.Slice(x, 1, -1, math.MinInt, -2).Value().Values())
	assert.Equal(t, []float64{0, 1, 2, 3, 0, 0, 4, 5, 6, 0}, graph.ScatterSlice(x, []int{2, 5}, 1, 1, 4, 1).Value().Values())
	assert.Equal(t, []float64{1, 2, 3, 1, 2, 4, 5, 6, 4, 5}, graph.Concat(1, x, graph.Slice(x, 1, 0, 2, 1)).Value().Values())
	st := graph.Stack(1, x, graph.MulScalar(x, 10))
	assert.Equal(t, []int{2, 2, 3}, st.Shape())
	assert.Equal(t, []float64{1, 2, 3, 10, 20, 30, 4, 5, 6, 40, 50, 60}, st.Value().Values())
	assert.Equal(t, []float64{9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9},
		graph.Pad(x, [][2]int{{1, 0}, {0, 2}}, 9).Value().Values())
	// Pad of a transposed view: (3, 2) with one zero column before.
	assert.Equal(t, []float64{0, 1, 4, 0, 2, 5, 0, 3, 6}, graph.Pad(graph.Transpose(x), [][2]int{{0, 0}, {1, 0}}, 0).Value().Values())
}

func TestGatherScatterMisuseNamesOpShapesAndCaller(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.Ones(tensor.Float32, 2, 3))
	e, site := graphError(t, func() { graph.IndexSelect(x, 1, []int{0, 3}) }), here()
	requireMisuse(t, e, "index_select", site, "index 3", "[0, 3)", "(2, 3) float32")
	e, site = graphError(t, func() { graph.ScatterAdd(x, 1, []int{0, 1}, 4) }), here()
	requireMisuse(t, e, "scatter_add", site, "2 indices along axis 1", "(2, 3) float32")
	e, site = graphError(t, func() { graph.ScatterAdd(x, 0, []int{0, 2}, 2) }), here()
	requireMisuse(t, e, "scatter_add", site, "index 2", "[0, 2)", "(2, 3) float32")
	e, site = graphError(t, func() { graph.TakeAlongAxis(x, 1, []int{0, 1, 5, 0}) }), here()
	requireMisuse(t, e, "take_along_axis", site, "index 5", "[0, 3)", "(2, 3) float32")
	e, site = graphError(t, func() { graph.ScatterAddAlongAxis(x, 0, []int{0, 1, 0}, 2) }), here()
	requireMisuse(t, e, "scatter_add_along_axis", site, "3 indices", "(2, 3) float32")

	// Re-applied to an operand whose axis is shorter than an index, or
	// which lacks the axis: the constructor's check, not an index panic.
	sel := graph.IndexSelect(x, 1, []int{2, 0}).Op()
	e, site = graphError(t, func() { graph.Apply(sel, g.Var(tensor.Ones(tensor.Float32, 2, 2))) }), here()
	requireMisuse(t, e, "index_select", site, "index 2", "(2, 2) float32")
	e, site = graphError(t, func() { graph.Apply(sel, g.Var(tensor.Ones(tensor.Float32, 4))) }), here()
	requireMisuse(t, e, "index_select", site, "axis 1", "(4,) float32")
	sc := graph.ScatterAdd(x, 1, []int{2, 0, 2}, 3).Op()
	e, site = graphError(t, func() { graph.Apply(sc, g.Var(tensor.Ones(tensor.Float32, 2, 2))) }), here()
	requireMisuse(t, e, "scatter_add", site, "3 indices along axis 1", "(2, 2) float32")
}

func TestGatherScatterValuesThroughTheTrustedKernels(t *testing.T) {
	g := graph.New()
	// x = [[1 2 3] [4 5 6]].
	x := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	assert.Equal(t, []float64{3, 1, 3, 6, 4, 6}, graph.IndexSelect(x, 1, []int{2, 0, 2}).Value().Values())
	// Columns 0, 1, 2 added into columns 2, 0, 2 of a (2, 4) zero tensor.
	assert.Equal(t, []float64{2, 0, 4, 0, 5, 0, 10, 0}, graph.ScatterAdd(x, 1, []int{2, 0, 2}, 4).Value().Values())
	// On a transposed view (3, 2): rows 1 and 1.
	assert.Equal(t, []float64{2, 5, 2, 5}, graph.IndexSelect(graph.Transpose(x), 0, []int{1, 1}).Value().Values())
	take := graph.TakeAlongAxis(x, 1, []int{2, 2, 0, 1})
	assert.Equal(t, []int{2, 2}, take.Shape())
	assert.Equal(t, []float64{3, 3, 4, 5}, take.Value().Values())
	back := graph.ScatterAddAlongAxis(take, 1, []int{2, 2, 0, 1}, 3)
	assert.Equal(t, []float64{0, 0, 6, 4, 5, 0}, back.Value().Values())
}

func TestWhereClampDiagMisuseNamesOpShapesAndCaller(t *testing.T) {
	g := graph.New()
	c := g.Var(tensor.Ones(tensor.Float32, 2, 3))
	a := g.Var(tensor.Ones(tensor.Float32, 4, 3))
	d := g.Var(tensor.Ones(tensor.Float64, 2, 3))
	e, site := graphError(t, func() { graph.Where(c, a, c) }), here()
	requireMisuse(t, e, "where", site, "(2, 3)", "(4, 3)")
	e, site = graphError(t, func() { graph.Where(c, c, d) }), here()
	requireMisuse(t, e, "where", site, "mixed dtypes", "(2, 3) float64")
	e, site = graphError(t, func() { graph.Clamp(c, 1, -1) }), here()
	requireMisuse(t, e, "clamp", site, "lower bound 1 exceeds upper bound -1", "(2, 3) float32")
	e, site = graphError(t, func() { graph.Diagonal(c) }), here()
	requireMisuse(t, e, "diagonal", site, "(2, 3) float32", "not a square matrix")
	sq := g.Var(tensor.Ones(tensor.Float32, 3, 3))
	st := g.Var(tensor.Ones(tensor.Float32, 2, 3, 3))
	e, site = graphError(t, func() { graph.AddDiag(st, a) }), here()
	requireMisuse(t, e, "add_diag", site, "do not broadcast", "(2, 3, 3) float32", "(4, 3) float32")
	e, site = graphError(t, func() { graph.AddDiag(sq, g.Var(tensor.Ones(tensor.Float32, 2))) }), here()
	requireMisuse(t, e, "add_diag", site, "does not fit the 3×3 matrices", "(2,) float32")

	// Re-applied op values.
	where := graph.Where(c, c, c).Op()
	e, site = graphError(t, func() { graph.Apply(where, c, a, c) }), here()
	requireMisuse(t, e, "where", site, "(2, 3)", "(4, 3)")
	e, site = graphError(t, func() { graph.Apply(where, c, d, d) }), here()
	requireMisuse(t, e, "where", site, "mixed dtypes")
	diag := graph.Diagonal(sq).Op()
	e, site = graphError(t, func() { graph.Apply(diag, c) }), here()
	requireMisuse(t, e, "diagonal", site, "(2, 3) float32")
	addDiag := graph.AddDiag(sq, g.Var(tensor.Ones(tensor.Float32, 3))).Op()
	e, site = graphError(t, func() { graph.Apply(addDiag, st, a) }), here()
	requireMisuse(t, e, "add_diag", site, "do not broadcast", "(2, 3, 3) float32", "(4, 3) float32")
	e, site = graphError(t, func() { graph.Apply(addDiag, c, sq) }), here()
	requireMisuse(t, e, "add_diag", site, "need square matrices", "(2, 3) float32")
}

func TestWhereClampDiagValuesThroughTheTrustedKernels(t *testing.T) {
	g := graph.New()
	// cond (2, 1) picks row-wise between a (1, 3) and the scalar b.
	cond := g.Const(tensor.FromFloat64s([]float64{1, 0}, 2, 1))
	a := g.Const(tensor.FromFloat64s([]float64{1, 2, 3}, 1, 3))
	b := g.Const(tensor.FromFloat64s([]float64{-1}))
	w := graph.Where(cond, a, b)
	assert.Equal(t, []int{2, 3}, w.Shape())
	assert.Equal(t, []float64{1, 2, 3, -1, -1, -1}, w.Value().Values())
	x := g.Const(tensor.FromFloat64s([]float64{-2, -0.5, 0, 0.5, 2, 7}, 2, 3))
	assert.Equal(t, []float64{-1, -0.5, 0, 0.5, 1, 1}, graph.Clamp(x, -1, 1).Value().Values())
	// m = [[1 2] [3 4]] and its transpose: diagonals (1, 4) both.
	m := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2))
	assert.Equal(t, []float64{1, 4}, graph.Diagonal(m).Value().Values())
	assert.Equal(t, []float64{1, 4}, graph.Diagonal(graph.Transpose(m)).Value().Values())
	assert.Equal(t, []float64{11, 2, 3, 24}, graph.AddDiag(m, g.Const(tensor.FromFloat64s([]float64{10, 20}, 2))).Value().Values())
	// A scalar diagonal, and a (2, 2) stack of diagonals broadcasting m to
	// (2, 2, 2).
	assert.Equal(t, []float64{1.5, 2, 3, 4.5}, graph.AddDiag(graph.Transpose(graph.Transpose(m)), g.Const(tensor.Scalar(tensor.Float64, 0.5))).Value().Values())
	s := graph.AddDiag(m, g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2)))
	assert.Equal(t, []int{2, 2, 2}, s.Shape())
	assert.Equal(t, []float64{2, 2, 3, 6, 4, 2, 3, 8}, s.Value().Values())
}

func TestSqDistEinsumMisuseNamesOpShapesAndCaller(t *testing.T) {
	g := graph.New()
	a := g.Var(tensor.Ones(tensor.Float32, 2, 3))
	b := g.Var(tensor.Ones(tensor.Float32, 4, 2))
	e, site := graphError(t, func() { graph.SqDist(a, b) }), here()
	requireMisuse(t, e, "sq_dist", site, "(2, 3) float32", "(4, 2) float32")
	e, site = graphError(t, func() { graph.SqDist(a, g.Var(tensor.Ones(tensor.Float64, 2, 3))) }), here()
	requireMisuse(t, e, "sq_dist", site, "(2, 3) float32", "(2, 3) float64")
	sq := graph.SqDist(a, a).Op()
	e, site = graphError(t, func() { graph.Apply(sq, a, b) }), here()
	requireMisuse(t, e, "sq_dist", site, "(2, 3) float32", "(4, 2) float32")
	e, site = graphError(t, func() { graph.Apply(sq, g.Var(tensor.Ones(tensor.Float32, 6)), a) }), here()
	requireMisuse(t, e, "sq_dist", site, "(6,) float32", "(2, 3) float32")

	// Einsum has no op of its own: it checks the spec once and builds
	// its permutations and reshapes without checking them again.
	e, site = graphError(t, func() { graph.Einsum("ij,jk->ik", a, a) }), here()
	requireMisuse(t, e, "einsum", site, `axis 'j' has sizes 3 and 2`, "(2, 3) float32")
	e, site = graphError(t, func() { graph.Einsum("ij,jk->ii", a, g.Var(tensor.Ones(tensor.Float32, 3, 2))) }), here()
	requireMisuse(t, e, "einsum", site, `repeats 'i' in the output`)
	e, site = graphError(t, func() { graph.Einsum("ijk,jk->i", a, b) }), here()
	requireMisuse(t, e, "einsum", site, "does not fit operands", "(2, 3) float32", "(4, 2) float32")
}

func TestSqDistEinsumValuesThroughTheTrustedKernels(t *testing.T) {
	g := graph.New()
	// Points (0, 0), (1, 2) against (3, 4), (1, 0): 9+16, 1+0; 4+4, 0+4.
	a := g.Const(tensor.FromFloat64s([]float64{0, 0, 1, 2}, 2, 2))
	b := g.Const(tensor.FromFloat64s([]float64{3, 4, 1, 0}, 2, 2))
	assert.Equal(t, []float64{25, 1, 8, 4}, graph.SqDist(a, b).Value().Values())
	assert.Equal(t, []float64{0, 5, 5, 0}, graph.SqDist(a, a).Value().Values())
	// m = [[1 2 3] [4 5 6]], v = (1, 0, -1).
	m := g.Const(tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	v := g.Const(tensor.FromFloat64s([]float64{1, 0, -1}, 3))
	assert.Equal(t, []float64{-2, -2}, graph.Einsum("ij,j->i", m, v).Value().Values())
	// Σᵢ mᵢⱼ mᵢₖ = mᵀm, laid out as "kj" (symmetric anyway): 17 22 27 / 22 29 36 / 27 36 45.
	assert.Equal(t, []float64{17, 22, 27, 22, 29, 36, 27, 36, 45}, graph.Einsum("ij,ik->kj", m, m).Value().Values())
	// The outer product transposed: (v ⊗ row 0 of m)ᵀ, shape (2, 3, 3) → "bji".
	outer := graph.Einsum("bi,j->bji", m, v)
	assert.Equal(t, []int{2, 3, 3}, outer.Shape())
	assert.Equal(t, []float64{1, 2, 3, 0, 0, 0, -1, -2, -3, 4, 5, 6, 0, 0, 0, -4, -5, -6}, outer.Value().Values())
}
