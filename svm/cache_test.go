package svm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/tensor"
)

// The graph-free kernel columns equal the kernel's graph for the kernels
// they cover (isotropic and ARD stationary, linear), and other kernels
// keep the graph path.
func TestDirectColumnsMatchKernelGraph(t *testing.T) {
	rng := tensor.NewRNG(3)
	x := rng.Normal(tensor.Float64, 0, 1, 7, 3)
	for name, k := range map[string]gp.Kernel{
		"rbf":      gp.NewRBF(1.3),
		"rbf ard":  gp.NewRBF(0.5, 2, 1),
		"matern32": gp.NewMatern32(0.8),
		"rq":       gp.NewRationalQuadratic(2, 1.1),
		"linear":   gp.NewLinear(0.7),
	} {
		f := directColumns(k, x)
		require.NotNil(t, f, name)
		col := make([]float64, 7)
		for r := range 7 {
			f(r, col)
			want, err := kernelRows(k, tensor.Slice(x, 0, r, r+1, 1), x)
			require.NoError(t, err)
			for j := range col {
				assert.InDelta(t, want[j], col[j], 1e-13, "%s K[%d,%d]", name, r, j)
			}
		}
	}
	assert.Nil(t, directColumns(gp.NewScale(gp.NewRBF(1), 2), x))
	assert.Nil(t, directColumns(gp.NewRBF(1, 2), x), "an ARD lengthscale of the wrong size goes to the graph, which reports it")
}

// By hand: entries (0, 2, 4, 6) have mean 3 and variance 5, so with d = 2
// columns γ = 1/(2·5).
func TestScaleGamma(t *testing.T) {
	assert.InDelta(t, 0.1, ScaleGamma(tensor.FromFloat64s([]float64{0, 2, 4, 6}, 2, 2)), 1e-15)
}
