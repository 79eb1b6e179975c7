package tensor

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMatMulVector checks the matrix-vector products that skip GEMM: A·x
// and Aᵀ·x, xᵀ·B and xᵀ·Bᵀ (rows split between goroutines at the larger
// size), against sums worked out here in the same order as no kernel (so
// to a rounding), and the bits against the row kernels called directly, in
// both dtypes, and with a bias added. A strided vector still takes GEMM,
// and agrees with the reference.
func TestMatMulVector(t *testing.T) {
	for _, sz := range [][2]int{{3, 5}, {7, 2}, {300, 257}} {
		m, k := sz[0], sz[1]
		a := laRandom(Float64, 21, m, k) // m×k
		x := laRandom(Float64, 22, k)
		y := laRandom(Float64, 23, m)
		ref := func(rows, inner int, at func(i, p int) float64, v func(p int) float64) []float64 {
			out := make([]float64, rows)
			for i := range rows {
				for p := range inner {
					out[i] += at(i, p) * v(p)
				}
			}
			return out
		}
		av := a.Values()
		ax := ref(m, k, func(i, p int) float64 { return av[i*k+p] }, func(p int) float64 { return x.At(p) })
		aty := ref(k, m, func(i, p int) float64 { return av[p*k+i] }, func(p int) float64 { return y.At(p) })
		cases := []struct {
			name string
			got  *Tensor
			want []float64
		}{
			{"A·x", MatMul(a, x), ax},
			{"A·x (column)", MatMul(a, Reshape(x, k, 1)), ax},
			{"Aᵀ·y", MatMulT(a, Reshape(y, m, 1), true, false), aty},
			{"yᵀ·A", MatMul(y, a), aty},
			{"xᵀ·Aᵀ", MatMulT(Reshape(x, 1, k), a, false, true), ax},
			{"A·x, x strided (GEMM)", MatMul(a, Slice(Reshape(Concat(1, Reshape(x, k, 1), Reshape(x, k, 1)), 2*k), 0, 0, 2*k, 2)), ax},
			{"A·x in float32", MatMul(a.Cast(Float32), x.Cast(Float32)), ax},
		}
		for _, c := range cases {
			got := c.got.Values()
			require.Len(t, got, len(c.want), c.name)
			for i, w := range c.want {
				tol := 1e-13 * (1 + math.Abs(w)) * float64(k)
				if c.got.DType() == Float32 {
					tol = 1e-5 * (1 + math.Abs(w)) * float64(k)
				}
				assert.InDelta(t, w, got[i], tol, "%s %d×%d, entry %d", c.name, m, k, i)
			}
		}
		// The bits are the row kernels' (A·x, xᵀ·Aᵀ through rowsDotFast;
		// Aᵀ·y, yᵀ·A through rowsCombineFast).
		checkRowKernelBits[float64](t, a, x, y)
		checkRowKernelBits[float32](t, a.Cast(Float32), x.Cast(Float32), y.Cast(Float32))
		// With a bias (a Linear layer on one example, or with one output),
		// contiguous or strided: the product plus the bias, bit for bit.
		biases := laRandom(Float64, 24, 3*max(m, k))
		for _, c := range []struct {
			name string
			l, r *Tensor
			n    int
		}{{"A·x + b", a, Reshape(x, k, 1), 1}, {"yᵀ·A + b", Reshape(y, 1, m), a, k}} {
			for _, bias := range []*Tensor{Slice(biases, 0, 0, c.n, 1), Slice(biases, 0, 0, 3*c.n, 3)} {
				rows := c.l.Shape()[0]
				got := matmulBiasTrusted(New(Float64, rows, c.n), c.l, c.r, bias, false, false).Values()
				want := Add(MatMul(c.l, c.r), bias).Values()
				for i, w := range want {
					require.Equal(t, math.Float64bits(w), math.Float64bits(got[i]), "%s, bias stride %d, entry %d", c.name, bias.Strides()[0], i)
				}
			}
		}
	}
}

// checkRowKernelBits requires the four matrix-vector layouts of a (m×k),
// x (k) and y (m) to have the bits of the row kernels called directly.
func checkRowKernelBits[T Float](t *testing.T, a, x, y *Tensor) {
	t.Helper()
	m, k := a.Shape()[0], a.Shape()[1]
	dots := make([]T, m)
	rowsDotFast(storage[T](a), k, 0, m, 0, k, storage[T](x), dots)
	comb := make([]T, k)
	rowsCombineFast(storage[T](a), k, 0, m, 0, k, storage[T](y), comb)
	for _, c := range []struct {
		got  *Tensor
		want []T
	}{{MatMul(a, x), dots}, {MatMulT(Reshape(x, 1, k), a, false, true), dots}, {MatMul(y, a), comb}, {MatMulT(a, Reshape(y, m, 1), true, false), comb}} {
		got := storage[T](c.got)
		for i, w := range c.want {
			require.Equal(t, math.Float64bits(float64(w)), math.Float64bits(float64(got[i])), "%s entry %d", a.DType(), i)
		}
	}
}

// TestRowKernelsSameBitsAnyThreads checks that the matrix-vector passes,
// cut into parts by size alone, give the same bits on one goroutine as on
// several, and so does an SVD whose bidiagonalisation is made of them.
func TestRowKernelsSameBitsAnyThreads(t *testing.T) {
	withProcs := func(procs int, f func()) {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		f()
	}
	many := max(2, runtime.NumCPU())
	// Sizes cut into the most parts: two goroutines then run two each.
	for _, sz := range [][2]int{{600, 257}, {2001, 80}, {37, 4000}} {
		m, k := sz[0], sz[1]
		require.Equal(t, gemvMaxParts, gemvParts(m, k), "%d×%d must be cut into the most parts", m, k)
		a := laRandom(Float64, 31, m, k).Values()
		x, y := laRandom(Float64, 32, k).Values(), laRandom(Float64, 33, m).Values()
		var dots, combs [2][]float64
		for i, procs := range []int{1, many} {
			dots[i], combs[i] = make([]float64, m), make([]float64, k)
			withProcs(procs, func() {
				rowsDotFast(a, k, 0, m, 0, k, x, dots[i])
				rowsCombineFast(a, k, 0, m, 0, k, y, combs[i])
			})
		}
		for i := range dots[0] {
			require.Equal(t, math.Float64bits(dots[0][i]), math.Float64bits(dots[1][i]), "%d×%d A·x entry %d", m, k, i)
		}
		for j := range combs[0] {
			require.Equal(t, math.Float64bits(combs[0][j]), math.Float64bits(combs[1][j]), "%d×%d Aᵀ·y entry %d", m, k, j)
		}
	}
	a := laRandom(Float64, 34, 420, 400) // its first passes are cut into four
	require.Equal(t, gemvMaxParts, gemvParts(420, 399))
	assertSameBitsAnyProcs(t, func() []*Tensor {
		u, s, v, err := SVD(a)
		require.NoError(t, err)
		return []*Tensor{u, s, v}
	})
}
