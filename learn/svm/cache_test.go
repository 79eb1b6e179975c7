package svm

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// The graph-free kernel columns equal the kernel's graph for the kernels
// they cover (isotropic and ARD stationary, linear), on dense data (rows
// by GEMV) and sparse data (axpys over Xᵀ), also on partial ranges after
// shrinking's swaps, and other kernels keep the graph path.
func TestDenseEvalMatchesKernelGraph(t *testing.T) {
	rng := tensor.NewRNG(3)
	v := rng.Normal(tensor.Float64, 0, 1, 7, 3).Values()
	v[2*3+1], v[4*3] = 0, 0
	sp := slices.Clone(v)
	for i := range sp {
		if i%3 != 1 {
			sp[i] = 0 // 7 of 21 entries left
		}
	}
	for _, x := range []*tensor.Tensor{tensor.FromFloat64s(v, 7, 3), tensor.FromFloat64s(sp, 7, 3)} {
		checkDenseEval(t, x)
	}
	x := tensor.FromFloat64s(v, 7, 3)
	assert.NotNil(t, newDenseEval(kernel.NewRBF(1), x).xr, "dense rows")
	assert.Nil(t, newDenseEval(kernel.NewRBF(1), tensor.FromFloat64s(sp, 7, 3)).xr, "sparse: Xᵀ")
	assert.Nil(t, newDenseEval(kernel.NewScale(kernel.NewRBF(1), 2), x))
	assert.Nil(t, newDenseEval(kernel.NewRBF(1, 2), x), "an ARD lengthscale of the wrong size goes to the graph, which reports it")
}

func checkDenseEval(t *testing.T, x *tensor.Tensor) {
	for name, k := range map[string]kernel.Kernel{
		"rbf":      kernel.NewRBF(1.3),
		"rbf ard":  kernel.NewRBF(0.5, 2, 1),
		"matern32": kernel.NewMatern32(0.8),
		"rq":       kernel.NewRationalQuadratic(2, 1.1),
		"linear":   kernel.NewLinear(0.7),
	} {
		e := newDenseEval(k, x)
		require.NotNil(t, e, name)
		assert.Equal(t, strings.HasPrefix(name, "rbf"), e.rbf, "%s: the vector exp is for the RBF only", name)
		perm := []int{0, 1, 2, 3, 4, 5, 6}
		for _, sw := range [][2]int{{0, 0}, {1, 5}, {6, 2}} {
			e.swap(sw[0], sw[1])
			perm[sw[0]], perm[sw[1]] = perm[sw[1]], perm[sw[0]]
			col := make([]float64, 7)
			for r := range 7 {
				e.fill(r, 2, 7, col)
				want, err := kernelRows(k, tensor.Slice(x, 0, perm[r], perm[r]+1, 1), x)
				require.NoError(t, err)
				for j := 2; j < 7; j++ {
					assert.InDelta(t, want[perm[j]], col[j], 1e-13, "%s K[%d,%d]", name, perm[r], perm[j])
				}
			}
		}
	}
}

// The column cache keeps partial columns within its budget, evicts the
// least recently used, extends a column without losing its entries, and
// swaps entries (dropping columns too short to hold both).
func TestColCache(t *testing.T) {
	c := newColCache(4, 8) // room for 8 floats
	a, start := c.get(0, 2)
	assert.Equal(t, 0, start)
	a[0], a[1] = 10, 11
	b, _ := c.get(1, 4)
	copy(b, []float64{20, 21, 22, 23})
	a, start = c.get(0, 4) // extends column 0: 2 more floats, budget now 0
	assert.Equal(t, 2, start)
	assert.Equal(t, []float64{10, 11}, a[:2])
	a[2], a[3] = 12, 13
	_, start = c.get(2, 1) // evicts column 1, the least recently used
	assert.Equal(t, 0, start)
	_, start = c.get(1, 1)
	assert.Equal(t, 0, start, "column 1 was evicted")
	c.swap(3, 0) // column 0 (length 4) is now at position 3, its entries 0 and 3 swapped
	col, start := c.get(3, 4)
	assert.Equal(t, 4, start)
	assert.Equal(t, []float64{13, 11, 12, 10}, col)
	assert.Nil(t, c.data[2], "column 2 held entry 0 but not 3: dropped")
}

// By hand: entries (0, 2, 4, 6) have mean 3 and variance 5, so with d = 2
// columns γ = 1/(2·5).
func TestScaleGamma(t *testing.T) {
	assert.InDelta(t, 0.1, ScaleGamma(tensor.FromFloat64s([]float64{0, 2, 4, 6}, 2, 2)), 1e-15)
}
