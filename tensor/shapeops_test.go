package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConcat(t *testing.T) {
	for _, dt := range shDTypes {
		a := FromValues(dt, []float64{1, 2}, 1, 2)
		b := FromValues(dt, []float64{3, 4, 5, 6}, 2, 2)
		c := Concat(0, a, b)
		assert.Equal(t, []int{3, 2}, c.Shape())
		shAssertValues(t, []float64{1, 2, 3, 4, 5, 6}, c, 0)

		col := FromValues(dt, []float64{1, 2}, 2, 1)
		c1 := Concat(-1, col, b)
		assert.Equal(t, []int{2, 3}, c1.Shape())
		shAssertValues(t, []float64{1, 3, 4, 2, 5, 6}, c1, 0)

		// Non-contiguous pieces and an empty piece.
		bt := Transpose(b) // [[3,5],[4,6]]
		c2 := Concat(1, bt, New(dt, 2, 0), col)
		shAssertValues(t, []float64{3, 5, 1, 4, 6, 2}, c2, 0)
		assert.False(t, shSameStorage(c2, b))
		// A single tensor is copied.
		c3 := Concat(0, b)
		shAssertValues(t, b.Values(), c3, 0)
		assert.False(t, shSameStorage(c3, b))

		requireOpPanics(t, "Concat", func() { Concat(0, a, col) }, "(1, 2)", "(2, 1)")
		requireOpPanics(t, "Concat", func() { Concat(0, a, b, FromValues(dt, []float64{1, 2}, 2)) }, "(1, 2)", "(2, 2)", "(2,)")
		requireOpPanics(t, "Concat", func() { Concat(2, a, b) }, "axis 2", "(1, 2)")
		requireOpPanics(t, "Concat", func() { Concat(0) }, "no tensors")
	}
	requireOpPanics(t, "Concat", func() { Concat(0, New(Float32, 1, 2), New(Float64, 1, 2)) }, "float32", "float64", "(1, 2)")
}

func TestShapeOpsStack(t *testing.T) {
	for _, dt := range shDTypes {
		a := FromValues(dt, []float64{1, 2}, 2)
		b := FromValues(dt, []float64{3, 4}, 2)
		s0 := Stack(0, a, b)
		assert.Equal(t, []int{2, 2}, s0.Shape())
		shAssertValues(t, []float64{1, 2, 3, 4}, s0, 0)
		s1 := Stack(-1, a, b)
		assert.Equal(t, []int{2, 2}, s1.Shape())
		shAssertValues(t, []float64{1, 3, 2, 4}, s1, 0)
		// Matrices, a middle axis, one non-contiguous operand.
		m := FromValues(dt, []float64{1, 2, 3, 4}, 2, 2)
		n := Transpose(FromValues(dt, []float64{5, 7, 6, 8}, 2, 2)) // [[5,6],[7,8]]
		s := Stack(1, m, n)
		assert.Equal(t, []int{2, 2, 2}, s.Shape())
		shAssertValues(t, []float64{1, 2, 5, 6, 3, 4, 7, 8}, s, 0)
		// Scalars stack into a vector.
		shAssertValues(t, []float64{7, 8}, Stack(0, Scalar(dt, 7), Scalar(dt, 8)), 0)

		requireOpPanics(t, "Stack", func() { Stack(0, a, m) }, "(2,)", "(2, 2)")
		requireOpPanics(t, "Stack", func() { Stack(2, a, b) }, "axis 2", "(2,)")
		requireOpPanics(t, "Stack", func() { Stack(0) }, "no tensors")
	}
	requireOpPanics(t, "Stack", func() { Stack(0, New(Float32, 2), New(Float64, 2)) }, "float32", "float64")
}

func TestShapeOpsSplit(t *testing.T) {
	for _, dt := range shDTypes {
		m := shSeq(dt, 2, 3) // [[0,1,2],[3,4,5]]
		parts := Split(m, 1, 1, 2)
		require.Len(t, parts, 2)
		assert.Equal(t, []int{2, 1}, parts[0].Shape())
		shAssertValues(t, []float64{0, 3}, parts[0], 0)
		shAssertValues(t, []float64{1, 2, 4, 5}, parts[1], 0)
		assert.False(t, shSameStorage(parts[1], m), "Split returns copies")
		// Round trip with Concat, including an empty piece and a negative axis.
		p := Split(m, -2, 0, 1, 1)
		assert.Equal(t, []int{0, 3}, p[0].Shape())
		shAssertValues(t, m.Values(), Concat(0, p...), 0)
		// Non-contiguous input.
		q := Split(Transpose(m), 0, 2, 1) // mᵀ = [[0,3],[1,4],[2,5]]
		shAssertValues(t, []float64{0, 3, 1, 4}, q[0], 0)
		shAssertValues(t, []float64{2, 5}, q[1], 0)

		requireOpPanics(t, "Split", func() { Split(m, 1, 1, 1) }, "[1 1]", "length 3", "(2, 3)")
		requireOpPanics(t, "Split", func() { Split(m, 1, 4, -1) }, "[4 -1]", "(2, 3)")
		requireOpPanics(t, "Split", func() { Split(m, 2, 3) }, "axis 2", "(2, 3)")
	}
}

func TestIndexSelect(t *testing.T) {
	for _, dt := range shDTypes {
		m := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
		r := IndexSelect(m, 0, []int{1, 1, 0})
		assert.Equal(t, []int{3, 3}, r.Shape())
		shAssertValues(t, []float64{4, 5, 6, 4, 5, 6, 1, 2, 3}, r, 0)
		c := IndexSelect(m, -1, []int{2, 0})
		assert.Equal(t, []int{2, 2}, c.Shape())
		shAssertValues(t, []float64{3, 1, 6, 4}, c, 0)
		// Non-contiguous input: mᵀ rows are m's columns.
		shAssertValues(t, []float64{3, 6, 1, 4}, IndexSelect(Transpose(m), 0, []int{2, 0}), 0)
		// 3-D middle axis: a[i,j,k] = 12i+4j+k, pick j = 2.
		a := shSeq(dt, 2, 3, 4)
		shAssertValues(t, []float64{8, 9, 10, 11, 20, 21, 22, 23}, IndexSelect(a, 1, []int{2}), 0)
		// Empty selection.
		assert.Equal(t, []int{2, 0}, IndexSelect(m, 1, nil).Shape())

		requireOpPanics(t, "IndexSelect", func() { IndexSelect(m, 1, []int{0, 3}) }, "index 3", "size 3", "(2, 3)")
		requireOpPanics(t, "IndexSelect", func() { IndexSelect(m, 0, []int{-1}) }, "index -1", "size 2")
		requireOpPanics(t, "IndexSelect", func() { IndexSelect(m, 2, []int{0}) }, "axis 2", "(2, 3)")
	}
}

func TestScatterAdd(t *testing.T) {
	for _, dt := range shDTypes {
		src := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 3, 2)
		s := ScatterAdd(src, 0, []int{2, 0, 2}, 3)
		assert.Equal(t, []int{3, 2}, s.Shape())
		shAssertValues(t, []float64{3, 4, 0, 0, 6, 8}, s, 0)

		// Along axis 1: columns 0,1 of the source go to column 1, column 2 to 0.
		m := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
		shAssertValues(t, []float64{3, 3, 6, 9}, ScatterAdd(m, 1, []int{1, 1, 0}, 2), 0)
		// Non-contiguous source: mᵀ scattered along axis 0 equals the above transposed.
		shAssertValues(t, []float64{3, 6, 3, 9}, ScatterAdd(Transpose(m), 0, []int{1, 1, 0}, 2), 0)

		// ScatterAddTo accumulates onto dst, also when dst is a strided view.
		d := Ones(dt, 3, 2)
		got := ScatterAddTo(d, src, 0, []int{2, 0, 2})
		assert.Same(t, d, got)
		shAssertValues(t, []float64{4, 5, 1, 1, 7, 9}, d, 0)
		big := Full(dt, 10, 2, 4)
		dv := Slice(big, 1, 0, 4, 2) // columns 0 and 2: shape (2,2)
		ScatterAddTo(dv, m, 1, []int{1, 1, 0})
		shAssertValues(t, []float64{13, 10, 13, 10, 16, 10, 19, 10}, big, 0)

		requireOpPanics(t, "ScatterAdd", func() { ScatterAdd(src, 0, []int{0, 3, 1}, 3) }, "index 3", "size 3")
		requireOpPanics(t, "ScatterAdd", func() { ScatterAdd(src, 0, []int{0, 1}, 3) }, "2 indices", "length 3")
		requireOpPanics(t, "ScatterAddTo", func() { ScatterAddTo(New(dt, 3, 3), src, 0, []int{0, 1, 2}) }, "(3, 3)", "(3, 2)")
	}
}

// TestIndexSelectScatterAdjoint checks ⟨IndexSelect(x), y⟩ = ⟨x, ScatterAdd(y)⟩
// with numbers worked out by hand: both sides are 30.
func TestIndexSelectScatterAdjoint(t *testing.T) {
	for _, dt := range shDTypes {
		x := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 3, 2)
		y := FromValues(dt, []float64{1, 0, 0, 1, 2, 1, 1, 1}, 4, 2)
		idx := []int{2, 0, 2, 1}
		g := IndexSelect(x, 0, idx) // [[5,6],[1,2],[5,6],[3,4]]
		shAssertValues(t, []float64{5, 6, 1, 2, 5, 6, 3, 4}, g, 0)
		s := ScatterAdd(y, 0, idx, 3) // [[0,1],[1,1],[3,1]]
		shAssertValues(t, []float64{0, 1, 1, 1, 3, 1}, s, 0)
		lhs := Sum(Mul(g, y), nil, false).Item()
		rhs := Sum(Mul(x, s), nil, false).Item()
		assert.Equal(t, 30.0, lhs)
		assert.Equal(t, 30.0, rhs)
	}
}

func TestOneHot(t *testing.T) {
	for _, dt := range shDTypes {
		o := OneHot(dt, []int{2, 0, 1, 2}, 3)
		assert.Equal(t, []int{4, 3}, o.Shape())
		assert.Equal(t, dt, o.DType())
		shAssertValues(t, []float64{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}, o, 0)
		assert.Equal(t, []int{0, 5}, OneHot(dt, nil, 5).Shape())
		requireOpPanics(t, "OneHot", func() { OneHot(dt, []int{0, 3}, 3) }, "label 3", "position 1", "3 classes")
		requireOpPanics(t, "OneHot", func() { OneHot(dt, []int{-1}, 3) }, "label -1")
	}
}

func TestPad(t *testing.T) {
	for _, dt := range shDTypes {
		a := FromValues(dt, []float64{1, 2, 3, 4}, 2, 2)
		p := Pad(a, [][2]int{{1, 0}, {0, 2}}, 9)
		assert.Equal(t, []int{3, 4}, p.Shape())
		shAssertValues(t, []float64{9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9}, p, 0)
		// Non-contiguous input, padding on both sides.
		q := Pad(Transpose(a), [][2]int{{0, 0}, {1, 1}}, -1) // aᵀ = [[1,3],[2,4]]
		shAssertValues(t, []float64{-1, 1, 3, -1, -1, 2, 4, -1}, q, 0)
		// Zero pads copy; padding an empty tensor fills with the value.
		z := Pad(a, [][2]int{{0, 0}, {0, 0}}, 0)
		shAssertValues(t, a.Values(), z, 0)
		assert.False(t, shSameStorage(z, a))
		shAssertValues(t, []float64{5, 5}, Pad(New(dt, 0), [][2]int{{1, 1}}, 5), 0)

		requireOpPanics(t, "Pad", func() { Pad(a, [][2]int{{1, 1}}, 0) }, "1 pads", "(2, 2)")
		requireOpPanics(t, "Pad", func() { Pad(a, [][2]int{{0, 0}, {-1, 0}}, 0) }, "negative", "axis 1", "(2, 2)")
	}
}
