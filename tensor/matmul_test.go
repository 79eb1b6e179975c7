package tensor

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var laDTypes = []DType{Float32, Float64}

// laRandom returns a tensor of the given shape with uniform values in
// [-1, 1) from a fixed seed.
func laRandom(dt DType, seed uint64, shape ...int) *Tensor {
	r := rand.New(rand.NewPCG(seed, 7))
	vals := make([]float64, shapeSize(shape))
	for i := range vals {
		vals[i] = 2*r.Float64() - 1
	}
	return FromValues(dt, vals, shape...)
}

// laTol is the absolute tolerance for values of order one computed with
// sums of about n terms.
func laTol(dt DType, n int) float64 {
	if dt == Float32 {
		return 2e-6 * float64(n+10)
	}
	return 1e-13 * float64(n+10)
}

// laNaiveMatMul is the textbook definition of NumPy's matmul on row-major
// float64 data: promote 1-D operands, broadcast the batch dimensions, triple
// loop, drop the promoted dimensions.
func laNaiveMatMul(a []float64, as []int, b []float64, bs []int) ([]float64, []int) {
	as, bs = append([]int{}, as...), append([]int{}, bs...)
	aVec, bVec := len(as) == 1, len(bs) == 1
	if aVec {
		as = []int{1, as[0]}
	}
	if bVec {
		bs = []int{bs[0], 1}
	}
	m, k, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-1]
	ab, bb := as[:len(as)-2], bs[:len(bs)-2]
	nd := max(len(ab), len(bb))
	batch := make([]int, nd)
	pad := func(s []int) []int {
		out := make([]int, nd)
		for i := range out {
			out[i] = 1
		}
		copy(out[nd-len(s):], s)
		return out
	}
	pa, pb := pad(ab), pad(bb)
	for i := range batch {
		batch[i] = pa[i]
		if pa[i] == 1 {
			batch[i] = pb[i]
		}
	}
	nb := 1
	for _, d := range batch {
		nb *= d
	}
	out := make([]float64, nb*m*n)
	idx := make([]int, nd)
	for bi := 0; bi < nb; bi++ {
		rem := bi
		for d := nd - 1; d >= 0; d-- {
			idx[d] = rem % batch[d]
			rem /= batch[d]
		}
		ia, ib := 0, 0
		for d := 0; d < nd; d++ {
			ia = ia*pa[d] + min(idx[d], pa[d]-1)
			ib = ib*pb[d] + min(idx[d], pb[d]-1)
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for p := 0; p < k; p++ {
					s += a[ia*m*k+i*k+p] * b[ib*k*n+p*n+j]
				}
				out[bi*m*n+i*n+j] = s
			}
		}
	}
	shape := append([]int{}, batch...)
	if !aVec {
		shape = append(shape, m)
	}
	if !bVec {
		shape = append(shape, n)
	}
	return out, shape
}

// laTransposed returns a view with the last two axes swapped of a fresh
// contiguous tensor, so that the view holds the given logical shape.
func laTransposed(dt DType, seed uint64, shape ...int) *Tensor {
	s := append([]int{}, shape...)
	nd := len(s)
	s[nd-2], s[nd-1] = s[nd-1], s[nd-2]
	return laTransposeLast(laRandom(dt, seed, s...))
}

// laEveryOther returns a view of the given logical shape whose last axis
// has stride 2, which no GEMM layout can express.
func laEveryOther(dt DType, seed uint64, shape ...int) *Tensor {
	s := append([]int{}, shape...)
	s[len(s)-1] *= 2
	t := laRandom(dt, seed, s...)
	v := *t
	v.shape = append([]int{}, shape...)
	v.strides = append([]int{}, t.strides...)
	v.strides[len(s)-1] = 2
	return &v
}

func laAssertClose(t *testing.T, want []float64, got *Tensor, tol float64, msgAndArgs ...any) {
	t.Helper()
	g := got.Values()
	require.Equal(t, len(want), len(g), msgAndArgs...)
	for i := range want {
		if !(math.Abs(want[i]-g[i]) <= tol) {
			require.Failf(t, "values differ", "element %d: want %v, got %v (tol %g) %v", i, want[i], g[i], tol, msgAndArgs)
		}
	}
}

func TestMatMulAgainstNaive(t *testing.T) {
	type mk func(dt DType, seed uint64, shape ...int) *Tensor
	cases := []struct {
		name   string
		as, bs []int
		ma, mb mk
	}{
		{"vec·vec", []int{5}, []int{5}, laRandom, laRandom},
		{"vec·mat", []int{3}, []int{3, 4}, laRandom, laRandom},
		{"mat·vec", []int{2, 3}, []int{3}, laRandom, laRandom},
		{"mat·mat", []int{7, 5}, []int{5, 9}, laRandom, laRandom},
		{"1x1", []int{1, 1}, []int{1, 1}, laRandom, laRandom},
		{"row·col", []int{1, 6}, []int{6, 1}, laRandom, laRandom},
		{"col·row", []int{6, 1}, []int{1, 6}, laRandom, laRandom},
		{"batch·mat folded", []int{4, 3, 5}, []int{5, 6}, laRandom, laRandom},
		{"mat·batch", []int{3, 5}, []int{4, 5, 6}, laRandom, laRandom},
		{"batch·batch", []int{3, 2, 4}, []int{3, 4, 5}, laRandom, laRandom},
		{"broadcast batch", []int{2, 1, 3, 4}, []int{3, 4, 5}, laRandom, laRandom},
		{"broadcast both", []int{2, 1, 3, 4}, []int{1, 3, 4, 2}, laRandom, laRandom},
		{"batch·vec", []int{2, 3, 4}, []int{4}, laRandom, laRandom},
		{"vec·batch", []int{3}, []int{2, 3, 4}, laRandom, laRandom},
		{"many small batched", []int{300, 16, 16}, []int{300, 16, 16}, laRandom, laRandom},
		// Medium products: an even batch is spread whole products per
		// goroutine, an odd short one product by product over GEMM's own.
		{"medium batch spread", []int{4, 100, 60}, []int{4, 60, 100}, laRandom, laTransposed},
		{"medium batch odd", []int{3, 100, 100}, []int{3, 100, 100}, laTransposed, laRandom},
		{"empty m", []int{0, 3}, []int{3, 4}, laRandom, laRandom},
		{"empty k", []int{2, 0}, []int{0, 3}, laRandom, laRandom},
		{"empty batch", []int{0, 2, 3}, []int{3, 4}, laRandom, laRandom},
		{"large", []int{70, 130}, []int{130, 90}, laRandom, laRandom},
		{"transposed a", []int{6, 4}, []int{4, 5}, laTransposed, laRandom},
		{"transposed b", []int{6, 4}, []int{4, 5}, laRandom, laTransposed},
		{"transposed both batched", []int{3, 6, 4}, []int{3, 4, 5}, laTransposed, laTransposed},
		{"transposed large", []int{65, 100}, []int{100, 33}, laTransposed, laTransposed},
		{"strided a copied", []int{3, 4}, []int{4, 5}, laEveryOther, laRandom},
		{"strided b copied", []int{2, 3, 4}, []int{4, 5}, laRandom, laEveryOther},
	}
	for _, tc := range cases {
		for _, dt := range laDTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				a, b := tc.ma(dt, 1, tc.as...), tc.mb(dt, 2, tc.bs...)
				want, shape := laNaiveMatMul(a.Values(), tc.as, b.Values(), tc.bs)
				got := MatMul(a, b)
				require.Equal(t, shape, got.Shape())
				require.Equal(t, dt, got.DType())
				laAssertClose(t, want, got, laTol(dt, tc.as[len(tc.as)-1]))
			})
		}
	}
}

func TestMatMulHandWorked(t *testing.T) {
	cases := []struct {
		name       string
		a, b, want []float64
		as, bs, ws []int
	}{
		{"2x2", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, []float64{19, 22, 43, 50}, []int{2, 2}, []int{2, 2}, []int{2, 2}},
		{"2x3·3x1", []float64{1, 0, -1, 2, 1, 0}, []float64{3, 4, 5}, []float64{-2, 10}, []int{2, 3}, []int{3, 1}, []int{2, 1}},
		{"vec·vec", []float64{1, 2, 3}, []float64{4, 5, 6}, []float64{32}, []int{3}, []int{3}, []int{}},
		{"vec·2x2", []float64{1, 1}, []float64{1, 2, 3, 4}, []float64{4, 6}, []int{2}, []int{2, 2}, []int{2}},
	}
	for _, tc := range cases {
		for _, dt := range laDTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				got := MatMul(FromValues(dt, tc.a, tc.as...), FromValues(dt, tc.b, tc.bs...))
				require.Equal(t, tc.ws, got.Shape())
				assert.Equal(t, tc.want, got.Values())
			})
		}
	}
}

func TestMatMulT(t *testing.T) {
	cases := []struct {
		name           string
		as, bs         []int // stored shapes
		transA, transB bool
	}{
		{"NN", []int{4, 3}, []int{3, 5}, false, false},
		{"TN", []int{3, 4}, []int{3, 5}, true, false},
		{"NT", []int{4, 3}, []int{5, 3}, false, true},
		{"TT", []int{3, 4}, []int{5, 3}, true, true},
		{"batched TN", []int{2, 3, 4}, []int{2, 3, 5}, true, false},
		{"broadcast NT", []int{2, 1, 4, 3}, []int{3, 5, 3}, false, true},
		{"large TT", []int{90, 70}, []int{80, 90}, true, true},
		{"vector ignores flag", []int{3}, []int{5, 3}, true, true},
	}
	for _, tc := range cases {
		for _, dt := range laDTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				a, b := laRandom(dt, 3, tc.as...), laRandom(dt, 4, tc.bs...)
				// Reference: materialise the transposes, then multiply.
				ra, rb := a, b
				if tc.transA && a.Dim() > 1 {
					ra = laTransposeLast(a).Clone()
				}
				if tc.transB && b.Dim() > 1 {
					rb = laTransposeLast(b).Clone()
				}
				want, shape := laNaiveMatMul(ra.Values(), ra.Shape(), rb.Values(), rb.Shape())
				got := MatMulT(a, b, tc.transA, tc.transB)
				require.Equal(t, shape, got.Shape())
				laAssertClose(t, want, got, laTol(dt, 100))
			})
		}
	}
}

func TestMatMulTo(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a, b := laRandom(dt, 5, 4, 4), laRandom(dt, 6, 4, 4)
			want, _ := laNaiveMatMul(a.Values(), a.Shape(), b.Values(), b.Shape())

			dst := Full(dt, 99, 4, 4)
			got := MatMulTo(dst, a, b)
			require.Same(t, dst, got)
			laAssertClose(t, want, dst, laTol(dt, 4))

			// dst aliasing an operand: the product must use the old values.
			a2 := a.Clone()
			MatMulTo(a2, a2, b)
			laAssertClose(t, want, a2, laTol(dt, 4), "aliased dst")

			// Disjoint halves of one array do not overlap; halves of one
			// array's rows do.
			buf := New(dt, 2, 4, 4)
			lo, hi := *buf, *buf
			lo.shape, hi.shape = []int{4, 4}, []int{4, 4}
			lo.strides, hi.strides = []int{4, 1}, []int{4, 1}
			hi.offset = 16
			assert.False(t, sharesStorage(&lo, &hi))
			assert.True(t, sharesStorage(&lo, laTransposeLast(&lo)))
			CopyInto(&hi, a)
			MatMulTo(&lo, &hi, b)
			laAssertClose(t, want, &lo, laTol(dt, 4), "dst in the same array")
			over := hi
			over.offset = 12
			CopyInto(&over, a)
			assert.True(t, sharesStorage(&lo, &over))
			MatMulTo(&lo, &over, b)
			laAssertClose(t, want, &lo, laTol(dt, 4), "overlapping dst")

			// A non-contiguous destination (a transposed view).
			base := New(dt, 4, 4)
			MatMulTo(laTransposeLast(base), a, b)
			laAssertClose(t, want, laTransposeLast(base), laTol(dt, 4), "transposed dst")

			requireOpPanics(t, "MatMulTo", func() { MatMulTo(New(dt, 4, 5), a, b) }, "(4, 5)", "(4, 4)")
		})
	}
}

func TestMatMulTransposedViewsAreNotCopied(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x := laRandom(dt, 1, 3, 6, 4)
			cases := []struct {
				name      string
				v         *Tensor
				kind      int
				transpose bool // the matmul flag
				copy      bool
				trans     bool // what GEMM is told
				ld        int
			}{
				{"contiguous", x, asMatrix, false, false, false, 4},
				{"flag", x, asMatrix, true, false, true, 4},
				{"transposed view", laTransposeLast(x), asMatrix, false, false, true, 4},
				{"transposed view and flag", laTransposeLast(x), asMatrix, true, false, false, 4},
				{"row vector", New(dt, 5), asRow, false, false, false, 5},
				{"column vector", New(dt, 5), asColumn, false, false, false, 1},
				{"strided vector", laEveryOther(dt, 2, 5), asRow, false, false, true, 2},
				{"strided", laEveryOther(dt, 2, 3, 4), asMatrix, false, true, false, 4},
				{"strided with flag", laEveryOther(dt, 2, 3, 4), asMatrix, true, true, true, 4},
			}
			for _, tc := range cases {
				op := prepOperand(tc.v, tc.kind, tc.transpose, nil)
				assert.Equal(t, tc.copy, op.t != tc.v, tc.name)
				assert.True(t, sharesStorage(op.t, tc.v) != tc.copy, tc.name)
				assert.Equal(t, tc.trans, op.trans, tc.name)
				assert.Equal(t, tc.ld, op.ld, tc.name)
			}
		})
	}
}

func TestMatMulMisuse(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			requireOpPanics(t, "MatMul", func() { MatMul(New(dt, 2, 3), New(dt, 4, 5)) }, "(2, 3)", "(4, 5)", "3 vs 4")
			requireOpPanics(t, "MatMul", func() { MatMul(New(dt, 3), New(dt, 4)) }, "(3,)", "(4,)")
			requireOpPanics(t, "MatMul", func() { MatMul(New(dt, 2, 2, 3), New(dt, 3, 3, 4)) }, "(2,)", "(3,)")
			requireOpPanics(t, "MatMul", func() { MatMul(Scalar(dt, 1), New(dt, 2)) }, "()")
			requireOpPanics(t, "MatMulT", func() { MatMulT(New(dt, 2, 3), New(dt, 2, 3), true, true) }, "(2, 3)", "transA=true", "2 vs 3")
		})
	}
	requireOpPanics(t, "MatMul", func() { MatMul(New(Float32, 2, 2), New(Float64, 2, 2)) }, "float32", "float64")
}

func TestOuter(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			got := Outer(FromValues(dt, []float64{1, 2}), FromValues(dt, []float64{3, 4, 5}))
			require.Equal(t, []int{2, 3}, got.Shape())
			assert.Equal(t, []float64{3, 4, 5, 6, 8, 10}, got.Values())

			// A strided b (a column of a matrix) and an empty a.
			m := FromValues(dt, []float64{1, 2, 3, 4}, 2, 2)
			col := laTransposeLast(m)
			v := *col
			v.shape, v.strides = []int{2}, []int{col.strides[1]}
			got = Outer(FromValues(dt, []float64{1, -1}), &v) // b = (1, 3)
			assert.Equal(t, []float64{1, 3, -1, -3}, got.Values())
			assert.Equal(t, []int{0, 2}, Outer(New(dt, 0), New(dt, 2)).Shape())

			requireOpPanics(t, "Outer", func() { Outer(New(dt, 2, 2), New(dt, 2)) }, "(2, 2)", "(2,)")
		})
	}
}

func TestDot(t *testing.T) {
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			got := Dot(FromValues(dt, []float64{1, 2, 3}), FromValues(dt, []float64{4, 5, 6}))
			require.Equal(t, []int{}, got.Shape())
			assert.Equal(t, 32.0, got.Item())
			assert.Equal(t, 0.0, Dot(New(dt, 0), New(dt, 0)).Item())

			// Strided operands: the main diagonal of [[1,2],[3,4]] with itself.
			m := FromValues(dt, []float64{1, 2, 3, 4}, 2, 2)
			d := *m
			d.shape, d.strides = []int{2}, []int{3}
			assert.Equal(t, 17.0, Dot(&d, &d).Item())

			requireOpPanics(t, "Dot", func() { Dot(New(dt, 3), New(dt, 4)) }, "(3,)", "(4,)")
		})
	}
	// A million float32 terms of 0.1: one running float32 sum drifts by
	// about 1%; the blocked sum must stay within float32 rounding.
	const n = 1_000_000
	x := Full(Float32, 0.1, n)
	want := float64(float32(0.1)) * n
	got := Dot(x, Ones(Float32, n)).Item()
	assert.InDelta(t, want, got, want*1e-5)
	// Its halves ran on two goroutines: the same sum, bit for bit, as on one.
	y := NewRNG(3).Normal(Float32, 0, 1, n)
	split := Dot(x, y).Item()
	old := runtime.GOMAXPROCS(1)
	serial := Dot(x, y).Item()
	runtime.GOMAXPROCS(old)
	assert.Equal(t, serial, split)
}

// TestMatMulInnerProduct checks the products that are one inner product
// (1-D·1-D, and a 1×k row times a k×1 column, read directly or
// transposed, strided or not), which skip GEMM: small integer entries keep
// every partial sum exact in float32 too, so each must equal the sum
// worked out here exactly, and MatMulTo into a view of a larger tensor
// must leave its neighbours be.
func TestMatMulInnerProduct(t *testing.T) {
	const k = 1001 // past dotBlock: the recursive halves run
	xs, ys, wide := make([]float64, k), make([]float64, k), make([]float64, 2*k)
	var want float64
	for i := range k {
		xs[i], ys[i] = float64(i%7), float64((k-i)%5)
		wide[2*i], wide[2*i+1] = ys[i], -1
		want += xs[i] * ys[i]
	}
	for _, dt := range laDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x, y := FromValues(dt, xs, k), FromValues(dt, ys, k)
			yStrided := Slice(FromValues(dt, wide, 2*k), 0, 0, 2*k, 2) // y at stride 2
			cases := []struct {
				name string
				got  *Tensor
			}{
				{"vector·vector", MatMul(x, y)},
				{"row·column", MatMul(Reshape(x, 1, k), Reshape(y, k, 1))},
				{"rowᵀ·columnᵀ", MatMulT(Reshape(x, k, 1), Reshape(y, 1, k), true, true)},
				{"strided vector", MatMul(yStrided, x)},
				{"strided column", MatMul(Reshape(x, 1, k), Reshape(yStrided, k, 1))},
			}
			for _, c := range cases {
				require.Equal(t, 1, c.got.Size(), c.name)
				assert.Equal(t, want, Reshape(c.got, 1).At(0), c.name)
			}
			dst := Full(dt, -7, 3)
			MatMulTo(Reshape(Slice(dst, 0, 1, 2, 1)), x, y)
			assert.Equal(t, []float64{-7, want, -7}, dst.Values())

			// Random entries: the product has the bits of Dot (the GEMM's
			// order of additions would round differently), and with a
			// bias, contiguous or strided, the bits of Dot plus the bias.
			rx, ry := laRandom(dt, 11, k), laRandom(dt, 12, k)
			dot := Dot(rx, ry).Item()
			assert.Equal(t, math.Float64bits(dot), math.Float64bits(MatMul(rx, ry).Item()), "random inner product")
			biases := Arange(dt, 0.25, 3.25, 1) // 0.25, 1.25, 2.25
			for _, bias := range []*Tensor{Slice(biases, 0, 1, 2, 1), Slice(biases, 0, 0, 3, 3)} {
				got := matmulBiasTrusted(New(dt, 1, 1), Reshape(rx, 1, k), Reshape(ry, k, 1), bias, false, false).Item()
				var wantBias float64
				if dt == Float32 {
					wantBias = float64(float32(dot) + float32(bias.At(0)))
				} else {
					wantBias = dot + bias.At(0)
				}
				assert.Equal(t, math.Float64bits(wantBias), math.Float64bits(got), "inner product plus bias %v", bias.At(0))
			}
		})
	}
}

// laTransposeLast returns a view of t with its last two axes swapped.
func laTransposeLast(t *Tensor) *Tensor {
	nd := len(t.shape)
	v := *t
	v.shape = cloneInts(t.shape)
	v.strides = cloneInts(t.strides)
	v.shape[nd-2], v.shape[nd-1] = v.shape[nd-1], v.shape[nd-2]
	v.strides[nd-2], v.strides[nd-1] = v.strides[nd-1], v.strides[nd-2]
	return &v
}

// TestMatMulDepthOne checks batches of outer products (inner size 1, the
// per-example weight gradients of autodiff.PerExampleGrads), which run on
// gemm's rank-1 kernels: every kernel family, operands read transposed,
// broadcast, strided (which falls back to GEMM), the bias form that adds to
// the output, and a batch large enough for streaming stores and two
// goroutines.
func TestMatMulDepthOne(t *testing.T) {
	cases := []struct {
		name           string
		as, bs         []int // stored shapes
		transA, transB bool
	}{
		{"per-example TN", []int{5, 1, 7}, []int{5, 1, 33}, true, false},
		{"NN", []int{3, 9, 1}, []int{3, 1, 17}, false, false},
		{"shared column", []int{6, 1}, []int{4, 1, 31}, false, false},
		{"shared row", []int{4, 6, 1}, []int{1, 65}, false, false},
		{"B read transposed, one column", []int{3, 1, 5}, []int{3, 1, 1}, true, true},
		{"B read transposed (strided row)", []int{3, 1, 5}, []int{3, 9, 1}, true, true},
		{"broadcast batch", []int{2, 1, 1, 4}, []int{3, 1, 10}, true, false},
		{"strided column (a column of a wider matrix)", []int{3, 9, 2}, []int{3, 1, 20}, false, false},
		{"streamed, two goroutines", []int{8, 1, 300}, []int{8, 1, 500}, true, false},
	}
	families := []struct {
		name             string
		portable, narrow bool
	}{{"portable", true, false}, {"narrow", false, true}, {"default", false, false}}
	for _, fam := range families {
		for _, tc := range cases {
			for _, dt := range laDTypes {
				t.Run(fam.name+"/"+tc.name+"/"+dt.String(), func(t *testing.T) {
					if tc.as[0] == 8 && (fam.portable || testing.Short()) {
						t.Skip("4 MB of output: slow to check, and the portable kernel does not stream")
					}
					p, n := gemm.UsePortable(fam.portable), gemm.UseNarrow(fam.narrow)
					defer func() { gemm.UsePortable(p); gemm.UseNarrow(n) }()
					a, b := laRandom(dt, 3, tc.as...), laRandom(dt, 4, tc.bs...)
					if tc.as[len(tc.as)-1] == 2 {
						a = Slice(a, -1, 0, 1, 1) // column stride 2
					}
					ra, rb := a, b
					if tc.transA {
						ra = laTransposeLast(a)
					}
					if tc.transB {
						rb = laTransposeLast(b)
					}
					want, shape := laNaiveMatMul(ra.Clone().Values(), ra.Shape(), rb.Clone().Values(), rb.Shape())
					got := MatMulT(a, b, tc.transA, tc.transB)
					require.Equal(t, shape, got.Shape())
					laAssertClose(t, want, got, laTol(dt, 1))

					// The linear op's form: the rows start as the bias and
					// the products are added to them.
					bias := laRandom(dt, 5, shape[len(shape)-1])
					for i := range want {
						want[i] += bias.Values()[i%bias.Size()]
					}
					laAssertClose(t, want, matmulBiasTrusted(New(dt, shape...), a, b, bias, tc.transA, tc.transB), laTol(dt, 2), "with bias")
				})
			}
		}
	}
}
