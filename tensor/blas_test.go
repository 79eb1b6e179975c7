package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	gt "gorgonia.org/tensor"
)

// A = [[1 2 3] [4 5 6]], B = [[7 8] [9 10] [11 12]]; A·B = [[58 64] [139 154]]
// (58 = 1·7 + 2·9 + 3·11).
var (
	cvA      = []float64{1, 2, 3, 4, 5, 6}
	cvAT     = []float64{1, 4, 2, 5, 3, 6}
	cvB      = []float64{7, 8, 9, 10, 11, 12}
	cvBT     = []float64{7, 9, 11, 8, 10, 12}
	cvAB     = []float64{58, 64, 139, 154}
	cvAPad   = []float64{1, 2, 3, 1000, 4, 5, 6} // lda = 4, the 1000 must not be read
	cvNaN4   = []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	cvOnes4  = []float64{1, 1, 1, 1}
	cvTwoAB1 = []float64{117, 129, 279, 309} // 2·A·B + 1
)

func TestBLASGemm(t *testing.T) {
	cases := []struct {
		name        string
		tA, tB      blas.Transpose
		a           []float64
		lda         int
		b           []float64
		ldb         int
		alpha, beta float64
		c, want     []float64
	}{
		{"NN", blas.NoTrans, blas.NoTrans, cvA, 3, cvB, 2, 1, 0, cvNaN4, cvAB},
		{"TN", blas.Trans, blas.NoTrans, cvAT, 2, cvB, 2, 1, 0, cvNaN4, cvAB},
		{"NT", blas.NoTrans, blas.Trans, cvA, 3, cvBT, 3, 1, 0, cvNaN4, cvAB},
		{"CC", blas.ConjTrans, blas.ConjTrans, cvAT, 2, cvBT, 3, 1, 0, cvNaN4, cvAB},
		{"padded lda", blas.NoTrans, blas.NoTrans, cvAPad, 4, cvB, 2, 1, 0, cvNaN4, cvAB},
		{"alpha beta", blas.NoTrans, blas.NoTrans, cvA, 3, cvB, 2, 2, 1, cvOnes4, cvTwoAB1},
	}
	for _, dt := range cvDTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				var got []float64
				if dt == Float32 {
					out := cvF32s(c.c)
					BLAS{}.Sgemm(c.tA, c.tB, 2, 2, 3, float32(c.alpha), cvF32s(c.a), c.lda, cvF32s(c.b), c.ldb, float32(c.beta), out, 2)
					for _, v := range out {
						got = append(got, float64(v))
					}
				} else {
					got = append([]float64{}, c.c...)
					BLAS{}.Dgemm(c.tA, c.tB, 2, 2, 3, c.alpha, c.a, c.lda, c.b, c.ldb, c.beta, got, 2)
				}
				assert.Equal(t, c.want, got)
			})
		}
	}
}

func TestBLASGemmBadArgsPanicLikeGonum(t *testing.T) {
	c := make([]float64, 4)
	cases := []struct {
		name string
		f    func()
	}{
		{"lda", func() { BLAS{}.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, cvA, 2, cvB, 2, 0, c, 2) }},
		{"short b", func() { BLAS{}.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, cvA, 3, cvB[:5], 2, 0, c, 2) }},
		{"transpose", func() { BLAS{}.Dgemm(blas.Transpose('x'), blas.NoTrans, 2, 2, 3, 1, cvA, 3, cvB, 2, 0, c, 2) }},
		{"m<0", func() { BLAS{}.Sgemm(blas.NoTrans, blas.NoTrans, -1, 2, 3, 1, nil, 3, nil, 2, 0, nil, 2) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				require.NotNil(t, r)
				assert.Contains(t, fmt.Sprint(r), "blas: ")
			}()
			tc.f()
		})
	}
	// An empty C needs no valid A or B, as in gonum.
	assert.NotPanics(t, func() { BLAS{}.Dgemm(blas.NoTrans, blas.NoTrans, 0, 2, 3, 1, nil, 3, nil, 2, 0, nil, 2) })
}

func TestBLASInGorgoniaMatMul(t *testing.T) {
	prev := gt.WhichBLAS()
	defer gt.Use(prev)
	UseInGorgonia()
	require.IsType(t, BLAS{}, gt.WhichBLAS())
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			var a, b *gt.Dense
			if dt == Float32 {
				a = gt.New(gt.WithShape(2, 3), gt.WithBacking(cvF32s(cvA)))
				b = gt.New(gt.WithShape(3, 2), gt.WithBacking(cvF32s(cvB)))
			} else {
				a = gt.New(gt.WithShape(2, 3), gt.WithBacking(append([]float64{}, cvA...)))
				b = gt.New(gt.WithShape(3, 2), gt.WithBacking(append([]float64{}, cvB...)))
			}
			c, err := gt.MatMul(a, b)
			require.NoError(t, err)
			require.Equal(t, gt.Shape{2, 2}, c.Shape())
			got, err := FromDense(c.(*gt.Dense))
			require.NoError(t, err)
			assert.Equal(t, cvAB, got.Values())
		})
	}
}

func cvF32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}
