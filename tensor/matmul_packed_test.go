package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMatMulPackedEqualsMatMul multiplies against a packed right operand
// in every layout the trusted kernels meet and checks the bits against
// matmulTrusted, and the values against a hand-worked product.
func TestMatMulPackedEqualsMatMul(t *testing.T) {
	for _, dt := range laDTypes {
		b := laRandom(dt, 1, 40, 24)
		bt := Transpose(laRandom(dt, 2, 24, 40)) // a transposed view: GEMM reads it as stored
		cases := []struct {
			name           string
			a, b           *Tensor
			transA, transB bool
		}{
			{"2-D", laRandom(dt, 3, 7, 40), b, false, false},
			{"2-D, a transposed", laRandom(dt, 4, 40, 7), b, true, false},
			{"2-D, b transposed", laRandom(dt, 5, 9, 24), b, false, true},
			{"b a transposed view", laRandom(dt, 6, 5, 40), bt, false, false},
			{"a a strided view", Slice(laRandom(dt, 7, 6, 80), 1, 0, 80, 2), b, false, false},
			{"stacked batch", laRandom(dt, 8, 3, 4, 40), b, false, false},
			{"batch read transposed (not packed)", laRandom(dt, 9, 3, 40, 4), b, true, false},
		}
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				shape := MatMulT(c.a, c.b, c.transA, c.transB).Shape()
				want := matmulTrusted(New(dt, shape...), c.a, c.b, c.transA, c.transB)
				pk := packBTrusted(nil, c.b, c.transB)
				require.NotNil(t, pk)
				got := matmulPackedTrusted(New(dt, shape...), c.a, c.b, c.transA, c.transB, pk)
				requireSameBitsT(t, want, got, "product")
				// With a bias (the linear op's form), against the GEMM
				// that writes the bias as it goes.
				bias := laRandom(dt, 10, shape[len(shape)-1])
				want = matmulBiasTrusted(New(dt, shape...), c.a, c.b, bias, c.transA, c.transB)
				got = matmulBiasPackedTrusted(New(dt, shape...), c.a, c.b, bias, c.transA, c.transB, pk)
				requireSameBitsT(t, want, got, "product with bias")
			})
		}
	}
}

// requireSameBitsT fails unless got and want hold the same bits.
func requireSameBitsT(t *testing.T, want, got *Tensor, what string) {
	t.Helper()
	w, g := want.Values(), got.Values()
	require.Len(t, g, len(w))
	for i := range w {
		if math.Float64bits(w[i]) != math.Float64bits(g[i]) {
			t.Fatalf("%s, element %d: packed %v, plain %v", what, i, g[i], w[i])
		}
	}
}

func TestMatMulPackedHandWorked(t *testing.T) {
	// [1 2; 3 4]·[5 6 7; 8 9 10] = [21 24 27; 47 54 61], then with the
	// same packing a second left operand.
	b := FromValues(Float64, []float64{5, 6, 7, 8, 9, 10}, 2, 3)
	pk := packBTrusted(nil, b, false)
	got := matmulPackedTrusted(New(Float64, 2, 3), FromValues(Float64, []float64{1, 2, 3, 4}, 2, 2), b, false, false, pk)
	require.Equal(t, []float64{21, 24, 27, 47, 54, 61}, got.Values())
	// Plus a bias (1, −1, 0.5) on every row.
	bias := FromValues(Float64, []float64{1, -1, 0.5}, 3)
	got = matmulBiasPackedTrusted(New(Float64, 2, 3), FromValues(Float64, []float64{1, 2, 3, 4}, 2, 2), b, bias, false, false, pk)
	require.Equal(t, []float64{22, 23, 27.5, 48, 53, 61.5}, got.Values())
	e0 := FromValues(Float64, []float64{1, 0, 0, 0}, 2, 2) // [1 0; 0 0]·B = [5 6 7; 0 0 0]
	got = matmulPackedTrusted(New(Float64, 2, 3), e0, b, false, false, pk)
	require.Equal(t, []float64{5, 6, 7, 0, 0, 0}, got.Values())
	// The product reads the packing, not b: until b is packed again, a
	// change to b does not show (which proves the packed path ran)...
	b.SetAt(-1, 0, 0)
	got = matmulPackedTrusted(New(Float64, 2, 3), e0, b, false, false, pk)
	require.Equal(t, []float64{5, 6, 7, 0, 0, 0}, got.Values())
	// ...and packing again into the same value follows it.
	pk2 := packBTrusted(pk, b, false)
	require.Same(t, pk, pk2)
	got = matmulPackedTrusted(New(Float64, 2, 3), e0, b, false, false, pk2)
	require.Equal(t, []float64{-1, 6, 7, 0, 0, 0}, got.Values())
}

func TestMatMulPackedFallsBack(t *testing.T) {
	// A depth of 1 packs nothing; the product is the plain one.
	b := FromValues(Float32, []float64{1, 2, 3}, 1, 3)
	require.Nil(t, packBTrusted(nil, b, false))
	got := matmulPackedTrusted(New(Float32, 2, 3), FromValues(Float32, []float64{2, -1}, 2, 1), b, false, false, nil)
	require.Equal(t, []float64{2, 4, 6, -1, -2, -3}, got.Values())
	// A batched right operand is not packed either.
	require.Nil(t, packBTrusted(nil, laRandom(Float32, 1, 2, 3, 3), false))
	// Nor one column: a row times it is an inner product, whose bits are
	// the dot product's, not a packed GEMM's.
	col := laRandom(Float32, 2, 50, 1)
	require.Nil(t, packBTrusted(nil, col, false))
	row := laRandom(Float32, 3, 1, 50)
	requireSameBitsT(t, matmulTrusted(New(Float32, 1, 1), row, col, false, false),
		matmulPackedTrusted(New(Float32, 1, 1), row, col, false, false, packBTrusted(nil, col, false)), "inner product")
	// A single row against a packed matrix is a vector-matrix product,
	// which does not go through GEMM: the packing is not used.
	b64, row64 := laRandom(Float64, 4, 50, 30), laRandom(Float64, 5, 1, 50)
	requireSameBitsT(t, matmulTrusted(New(Float64, 1, 30), row64, b64, false, false),
		matmulPackedTrusted(New(Float64, 1, 30), row64, b64, false, false, packBTrusted(nil, b64, false)), "row times matrix")
}
