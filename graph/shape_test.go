package graph_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

func TestShapeValues(t *testing.T) {
	m23 := [][]float64{{1, 2, 3, 4, 5, 6}}
	s23 := [][]int{{2, 3}}
	vtRun(t, []vtCase{
		{"reshape", m23, s23, func(xs []*graph.Node) *graph.Node { return graph.Reshape(xs[0], -1, 2) }, []float64{1, 2, 3, 4, 5, 6}, []int{3, 2}},
		{"reshape of transpose", m23, s23, func(xs []*graph.Node) *graph.Node { return graph.Reshape(graph.Transpose(xs[0]), 6) },
			[]float64{1, 4, 2, 5, 3, 6}, []int{6}},
		{"transpose", m23, s23, func(xs []*graph.Node) *graph.Node { return graph.Transpose(xs[0]) }, []float64{1, 4, 2, 5, 3, 6}, []int{3, 2}},
		{"permute", [][]float64{{1, 2, 3, 4, 5, 6, 7, 8}}, [][]int{{2, 2, 2}}, func(xs []*graph.Node) *graph.Node { return graph.Permute(xs[0], 2, 0, 1) },
			[]float64{1, 3, 5, 7, 2, 4, 6, 8}, []int{2, 2, 2}},
		{"squeeze unsqueeze", m23, [][]int{{1, 2, 3}}, func(xs []*graph.Node) *graph.Node { return graph.Unsqueeze(graph.Squeeze(xs[0]), -1) },
			[]float64{1, 2, 3, 4, 5, 6}, []int{2, 3, 1}},
		{"broadcast_to", [][]float64{{1, 2}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.BroadcastTo(xs[0], 2, 2) },
			[]float64{1, 2, 1, 2}, []int{2, 2}},
		{"sum_to", m23, s23, func(xs []*graph.Node) *graph.Node { return graph.SumTo(xs[0], 1, 3) }, []float64{5, 7, 9}, []int{1, 3}},
		{"slice reversed", m23, s23, func(xs []*graph.Node) *graph.Node { return graph.Slice(xs[0], 1, 2, 0, -1) },
			[]float64{3, 2, 6, 5}, []int{2, 2}},
		{"slice open end step 2", m23, s23, func(xs []*graph.Node) *graph.Node { return graph.Slice(xs[0], -1, 0, math.MaxInt, 2) },
			[]float64{1, 3, 4, 6}, []int{2, 2}},
		{"scatter_slice", [][]float64{{7, 8}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.ScatterSlice(xs[0], []int{4}, 0, 1, 4, 2) },
			[]float64{0, 7, 0, 8}, []int{4}},
		{"concat", [][]float64{{1, 2}, {3}}, [][]int{{2}, {1}}, func(xs []*graph.Node) *graph.Node { return graph.Concat(0, xs...) },
			[]float64{1, 2, 3}, []int{3}},
		{"concat axis 1", [][]float64{{1, 2}, {3, 4, 5, 6}}, [][]int{{2, 1}, {2, 2}}, func(xs []*graph.Node) *graph.Node { return graph.Concat(1, xs...) },
			[]float64{1, 3, 4, 2, 5, 6}, []int{2, 3}},
		{"stack", [][]float64{{1, 2}, {3, 4}}, [][]int{{2}, {2}}, func(xs []*graph.Node) *graph.Node { return graph.Stack(1, xs...) },
			[]float64{1, 3, 2, 4}, []int{2, 2}},
		{"split", m23, s23, func(xs []*graph.Node) *graph.Node { return graph.Split(xs[0], 1, 1, 2)[1] }, []float64{2, 3, 5, 6}, []int{2, 2}},
		{"index_select", [][]float64{{10, 20, 30}}, [][]int{{3}}, func(xs []*graph.Node) *graph.Node { return graph.IndexSelect(xs[0], 0, []int{2, 0, 2}) },
			[]float64{30, 10, 30}, []int{3}},
		{"scatter_add", [][]float64{{1, 2, 3}}, [][]int{{3}}, func(xs []*graph.Node) *graph.Node { return graph.ScatterAdd(xs[0], 0, []int{1, 1, 0}, 3) },
			[]float64{3, 3, 0}, []int{3}},
		{"pad", [][]float64{{1, 2}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.Pad(xs[0], [][2]int{{1, 2}}, 9) },
			[]float64{9, 1, 2, 9, 9}, []int{5}},
		{"pad 2-d", [][]float64{{1, 2}}, [][]int{{1, 2}}, func(xs []*graph.Node) *graph.Node { return graph.Pad(xs[0], [][2]int{{1, 0}, {0, 1}}, 0) },
			[]float64{0, 0, 0, 1, 2, 0}, []int{2, 3}},
		{"one_hot", [][]float64{{0}}, [][]int{{1}}, func(xs []*graph.Node) *graph.Node {
			return graph.Add(graph.OneHot(xs[0].Graph(), xs[0].DType(), []int{2, 0}, 3), xs[0])
		}, []float64{0, 0, 1, 1, 0, 0}, []int{2, 3}},
	})
}

func TestMatMulValues(t *testing.T) {
	a22 := []float64{1, 2, 3, 4}
	b22 := []float64{5, 6, 7, 8}
	s22 := []int{2, 2}
	vtRun(t, []vtCase{
		{"matmul", [][]float64{a22, b22}, [][]int{s22, s22}, bin(graph.MatMul), []float64{19, 22, 43, 50}, s22},
		// Aᵀ B = [[1,3],[2,4]]·[[5,6],[7,8]].
		{"matmul transA", [][]float64{a22, b22}, [][]int{s22, s22}, func(xs []*graph.Node) *graph.Node { return graph.MatMulT(xs[0], xs[1], true, false) },
			[]float64{26, 30, 38, 44}, s22},
		// A Bᵀ = [[1,2],[3,4]]·[[5,7],[6,8]].
		{"matmul transB", [][]float64{a22, b22}, [][]int{s22, s22}, func(xs []*graph.Node) *graph.Node { return graph.MatMulT(xs[0], xs[1], false, true) },
			[]float64{17, 23, 39, 53}, s22},
		// A batch of two identical left matrices against one right matrix.
		{"matmul broadcast batch", [][]float64{{1, 2, 3, 4, 1, 0, 0, 1}, b22}, [][]int{{2, 2, 2}, s22}, bin(graph.MatMul),
			[]float64{19, 22, 43, 50, 5, 6, 7, 8}, []int{2, 2, 2}},
		{"vector @ matrix", [][]float64{{1, 1}, a22}, [][]int{{2}, s22}, bin(graph.MatMul), []float64{4, 6}, []int{2}},
		{"matrix @ vector", [][]float64{a22, {1, 1}}, [][]int{s22, {2}}, bin(graph.MatMul), []float64{3, 7}, []int{2}},
		{"dot", [][]float64{{1, 2, 3}, {4, 5, 6}}, [][]int{{3}, {3}}, bin(graph.Dot), []float64{32}, []int{}},
		{"outer", [][]float64{{1, 2}, {3, 4}}, [][]int{{2}, {2}}, bin(graph.Outer), []float64{3, 4, 6, 8}, s22},
	})
}

func TestShapeVJP(t *testing.T) {
	vjpRun(t, []vjpCase{
		{"broadcast_to sums back", [][]float64{{1, 2}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.BroadcastTo(xs[0], 3, 2) },
			[]float64{1, 2, 3, 4, 5, 6}, [][]float64{{9, 12}}},
		{"sum_to broadcasts", [][]float64{{1, 2, 3, 4}}, [][]int{{2, 2}}, func(xs []*graph.Node) *graph.Node { return graph.SumTo(xs[0], 2) },
			[]float64{5, 7}, [][]float64{{5, 7, 5, 7}}},
		{"slice scatters", [][]float64{{1, 2, 3, 4}}, [][]int{{4}}, func(xs []*graph.Node) *graph.Node { return graph.Slice(xs[0], 0, 3, 0, -2) },
			[]float64{5, 7}, [][]float64{{0, 7, 0, 5}}},
		{"index_select accumulates repeats", [][]float64{{1, 2, 3}}, [][]int{{3}}, func(xs []*graph.Node) *graph.Node { return graph.IndexSelect(xs[0], 0, []int{2, 0, 2}) },
			[]float64{1, 2, 3}, [][]float64{{2, 0, 4}}},
		{"scatter_add gathers", [][]float64{{1, 2, 3}}, [][]int{{3}}, func(xs []*graph.Node) *graph.Node { return graph.ScatterAdd(xs[0], 0, []int{1, 1, 0}, 2) },
			[]float64{5, 7}, [][]float64{{7, 7, 5}}},
		{"pad crops", [][]float64{{1, 2}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.Pad(xs[0], [][2]int{{1, 2}}, 9) },
			[]float64{1, 2, 3, 4, 5}, [][]float64{{2, 3}}},
		{"concat splits", [][]float64{{1, 2}, {3}}, [][]int{{2}, {1}}, func(xs []*graph.Node) *graph.Node { return graph.Concat(0, xs...) },
			[]float64{4, 5, 6}, [][]float64{{4, 5}, {6}}},
		{"permute inverts", [][]float64{{1, 2, 3, 4, 5, 6}}, [][]int{{1, 2, 3}}, func(xs []*graph.Node) *graph.Node { return graph.Permute(xs[0], 1, 2, 0) },
			[]float64{1, 2, 3, 4, 5, 6}, [][]float64{{1, 2, 3, 4, 5, 6}}},
		// (1×2)(2×1): dA = ct·Bᵀ = (3, 4), dB = Aᵀ·ct = (1, 2)ᵀ.
		{"matmul", [][]float64{{1, 2}, {3, 4}}, [][]int{{1, 2}, {2, 1}}, bin(graph.MatMul), []float64{1}, [][]float64{{3, 4}, {1, 2}}},
		// B is shared by a batch of two: its cotangent sums over the batch.
		{"matmul broadcast batch", [][]float64{{1, 2, 3, 4}, {1, 1}}, [][]int{{2, 1, 2}, {2, 1}}, bin(graph.MatMul),
			[]float64{1, 1}, [][]float64{{1, 1, 1, 1}, {4, 6}}},
	})
}

func TestShapeOpsReturnInputWhenNoOp(t *testing.T) {
	g := graph.New()
	x := g.Var(vtTensor(2, 3))
	assert.Same(t, x, graph.Reshape(x, 2, 3))
	assert.Same(t, x, graph.BroadcastTo(x, 2, 3))
	assert.Same(t, x, graph.SumTo(x, 2, 3))
	assert.Same(t, x, graph.Permute(x, 0, 1))
	assert.Same(t, x, graph.Slice(x, 1, 0, math.MaxInt, 1))
	assert.Same(t, x, graph.Pad(x, [][2]int{{0, 0}, {0, 0}}, 1))
	assert.Equal(t, 1, g.Len(), "no nodes added")
}

func TestShapeViewsShareStorage(t *testing.T) {
	g := graph.New()
	x := g.Var(vtTensor(2, 3))
	// Views keep the input's storage: changing the Var's tensor shows
	// through (values are read-only in normal use; this only proves no copy).
	tr := graph.Transpose(x)
	sl := graph.Slice(x, 1, 1, 3, 1)
	x.Value().SetAt(100, 0, 1)
	assert.Equal(t, 100.0, tr.Value().At(1, 0))
	assert.Equal(t, 100.0, sl.Value().At(0, 0))
}

func TestShapeMisuse(t *testing.T) {
	g := graph.New()
	x := g.Var(vtTensor(2, 3))
	y := g.Var(vtTensor(3, 3))
	for _, tc := range []struct {
		name, want string
		f          func()
	}{
		{"reshape size", "reshape", func() { graph.Reshape(x, 4, 2) }},
		{"permute", "permute", func() { graph.Permute(x, 0, 0) }},
		{"broadcast_to", "broadcast_to", func() { graph.BroadcastTo(x, 3, 3) }},
		{"sum_to", "sum_to", func() { graph.SumTo(x, 2) }},
		{"slice step", "slice", func() { graph.Slice(x, 0, 0, 1, 0) }},
		{"concat", "concat", func() { graph.Concat(1, x, y) }},
		{"index range", "index_select", func() { graph.IndexSelect(x, 1, []int{3}) }},
		{"scatter count", "scatter_add", func() { graph.ScatterAdd(x, 0, []int{0}, 4) }},
		{"pad", "pad", func() { graph.Pad(x, [][2]int{{-1, 0}, {0, 0}}, 0) }},
		{"squeeze", "squeeze", func() { graph.Squeeze(x, 0) }},
		{"unsqueeze", "unsqueeze", func() { graph.Unsqueeze(x, 4) }},
		{"scatter_slice", "scatter_slice", func() { graph.ScatterSlice(x, []int{2, 4}, 1, 0, 4, 1) }},
		{"split", "split", func() { graph.Split(x, 1, 1, 1) }},
		{"matmul inner", "matmul", func() { graph.MatMul(x, x) }},
		{"matmul scalar", "matmul", func() { graph.MatMul(x, g.Scalar(tensor.Float64, 1)) }},
		{"dot", "dot", func() { graph.Dot(x, x) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := vtCatch(tc.f)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Hand-worked reverse-mode values for the shape ops whose VJPs scatter or
// rearrange (duplicate gather indices, negative-step slices, unused split
// pieces, concat with an empty piece, pad, stack, permute) and for a
// triangular solve, in both dtypes. GradCheck covers these against finite
// differences at random points; these pin exact values.
func TestShapeVJPHandWorked(t *testing.T) {
	sum := func(n *graph.Node) *graph.Node { return graph.Sum(n, nil, false) }
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-6
		}
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5}, 5))
			w := g.Const(tensor.FromValues(dt, []float64{1, 10, 100}, 3))
			m := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3))
			cases := []struct {
				name string
				y    func() *graph.Node
				wrt  *graph.Node
				want []float64
			}{
				// Index 1 is picked twice: its cotangents 1 and 10 add up.
				{"IndexSelect duplicate indices", func() *graph.Node {
					return sum(graph.Mul(graph.IndexSelect(x, 0, []int{1, 1, 4}), w))
				}, x, []float64{0, 11, 0, 0, 100}},
				// x[4], x[2], x[0] get weights 1, 10, 100.
				{"Slice with step -2", func() *graph.Node {
					return sum(graph.Mul(graph.Slice(x, 0, 4, -6, -2), w))
				}, x, []float64{100, 0, 10, 0, 1}},
				// Only the second piece is used: d Σ p² = 2p there, 0 elsewhere.
				{"Split with an unused piece", func() *graph.Node {
					return sum(graph.Square(graph.Split(x, 0, 2, 3)[1]))
				}, x, []float64{0, 0, 6, 8, 10}},
				// Pad (x0, x1) on the left with a constant: weights 10, 100.
				{"Pad", func() *graph.Node {
					return sum(graph.Mul(graph.Pad(graph.Slice(x, 0, 0, 2, 1), [][2]int{{1, 0}}, 7), w))
				}, x, []float64{10, 100, 0, 0, 0}},
				// [] ++ (x3, x4) ++ (x0) weighted 1, 10, 100.
				{"Concat with an empty piece", func() *graph.Node {
					return sum(graph.Mul(graph.Concat(0, graph.Slice(x, 0, 0, 0, 1), graph.Slice(x, 0, 3, 5, 1),
						graph.Slice(x, 0, 0, 1, 1)), w))
				}, x, []float64{100, 0, 0, 1, 10}},
				// Σ over two stacked copies of m² is 2·Σ m²: gradient 4m.
				{"Stack of one node twice", func() *graph.Node {
					return sum(graph.Square(graph.Stack(1, m, m)))
				}, m, []float64{4, 8, 12, 16, 20, 24}},
				// ⟨mᵀ, C⟩ = ⟨m, Cᵀ⟩ with C = [[1 2] [3 4] [5 6]].
				{"Permute", func() *graph.Node {
					c := g.Const(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 3, 2))
					return sum(graph.Mul(graph.Permute(m, 1, 0), c))
				}, m, []float64{1, 3, 5, 2, 4, 6}},
			}
			for _, c := range cases {
				got := autodiff.Grad(c.y(), c.wrt)[0].Value().Values()
				require.Len(t, got, len(c.want), c.name)
				for i := range c.want {
					assert.InDelta(t, c.want[i], got[i], tol, "%s [%d]", c.name, i)
				}
			}

			// Softmax along axis 0 of m: column 0 is (1, 4), so
			// s = 1/(1+e³) and ∂s/∂m₀₀ = s(1−s), ∂s/∂m₁₀ = −s(1−s).
			s := 1 / (1 + math.Exp(3))
			pick := g.Const(tensor.FromValues(dt, []float64{1, 0, 0, 0, 0, 0}, 2, 3))
			got := autodiff.Grad(sum(graph.Mul(graph.Softmax(m, 0), pick)), m)[0].Value().Values()
			want := []float64{s * (1 - s), 0, 0, -s * (1 - s), 0, 0}
			for i := range want {
				assert.InDelta(t, want[i], got[i], tol, "softmax axis 0 [%d]", i)
			}

			// L·x = b with L = [[2 0] [1 3]], b = (2, 7): x = (1, 2). For
			// y = Σx, ∂y/∂L = −z·xᵀ on the lower triangle, where Lᵀz = 1
			// gives z = (1/3, 1/3); the upper triangle is not read.
			l := g.Var(tensor.FromValues(dt, []float64{2, 0, 1, 3}, 2, 2))
			b := g.Const(tensor.FromValues(dt, []float64{2, 7}, 2, 1))
			xs := graph.TriSolve(l, b, true, false)
			gl := autodiff.Grad(sum(xs), l)[0].Value().Values()
			wantL := []float64{-1.0 / 3, 0, -1.0 / 3, -2.0 / 3}
			for i := range wantL {
				assert.InDelta(t, wantL[i], gl[i], tol, "trisolve ∂/∂L [%d]", i)
			}
		})
	}
}
