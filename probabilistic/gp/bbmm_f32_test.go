package gp

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// f32Pair returns the float64 and the float32-tile operators of kernel k
// on x (n, d), with column tiles of cols points so that the tiles have
// ragged edges.
func f32Pair(t *testing.T, k kernel.Kernel, x *tensor.Tensor, cols int) (op64, op32 *kernelOp) {
	n, d := x.Shape()[0], x.Shape()[1]
	noise := kernel.NewHyperparam("noise", 0.3)
	op64, err := newKernelOp("test", k, x.Values(), n, d, noise, 0)
	require.NoError(t, err)
	op32, err = newKernelOp("test", k, x.Values(), n, d, noise, 0)
	require.NoError(t, err)
	op64.cols, op32.cols = cols, cols // before useFloat32, which lays the points out by column tile
	require.NoError(t, op32.useFloat32("test"))
	return op64, op32
}

// The float32 tiles give the float64 product to float32 rounding: each
// entry within 1e-5 of the sum of its terms' magnitudes (tile sums of 100
// terms in float32, tile totals in float64), for training and test rows.
func TestKernelOpFloat32MatchesFloat64(t *testing.T) {
	x, _ := toyData(4, 150, 3)
	xt := tensor.NewRNG(6).Uniform(tensor.Float64, -2, 2, 70, 3)
	v := tensor.NewRNG(5).Normal(tensor.Float64, 0, 1, 150, 5).Float64s()
	for _, name := range []string{"rbf", "rbf-ard"} {
		t.Run(name, func(t *testing.T) {
			k := bbmmKernels()[name]()
			op64, op32 := f32Pair(t, k, x, 100)
			abs := make([]float64, len(v))
			for i, e := range v {
				abs[i] = math.Abs(e)
			}
			scale := make([]float64, 150*5)
			op64.MatMul(scale, abs, 5) // Σ_j |K_ij v_jc| (+ noise term)
			got, want := make([]float64, 150*5), make([]float64, 150*5)
			op32.MatMul(got, v, 5)
			op64.MatMul(want, v, 5)
			for i := range want {
				assert.InDelta(t, want[i], got[i], 1e-5*scale[i], "entry %d", i)
			}
			xs := op64.scaleInputs(xt.Values())
			cw, cg := op64.crossMatMul(xs, 70, v, 5), op32.crossMatMul(xs, 70, v, 5)
			cs := op64.crossMatMul(xs, 70, abs, 5)
			for i := range cw {
				assert.InDelta(t, cw[i], cg[i], 1e-5*cs[i], "cross entry %d", i)
			}
		})
	}
}

// The gradient pass in float32 tiles gives the float64 one's terms to
// float32 rounding.
func TestGradTermsFloat32MatchesFloat64(t *testing.T) {
	x, _ := toyData(7, 150, 3)
	rng := tensor.NewRNG(8)
	a := rng.Normal(tensor.Float64, 0, 1, 150, 4).Float64s()
	b := rng.Normal(tensor.Float64, 0, 1, 150, 4).Float64s()
	for _, name := range []string{"rbf", "rbf-ard"} {
		t.Run(name, func(t *testing.T) {
			op64, op32 := f32Pair(t, bbmmKernels()[name](), x, 100)
			want, err := op64.gradTerms(a, b, 4)
			require.NoError(t, err)
			got, err := op32.gradTerms(a, b, 4)
			require.NoError(t, err)
			// The terms are sums of 150² products of order one, of size 30-100.
			tol := 1e-3 // 15 times the differences seen (values of 30-100)
			assert.InDelta(t, want.scale, got.scale, tol)
			assert.Equal(t, want.noise, got.noise)
			require.Len(t, got.ls, len(want.ls))
			for q := range want.ls {
				assert.InDelta(t, want.ls[q], got.ls[q], tol, "ls[%d]", q)
			}
			assert.NotZero(t, got.ls[0])
		})
	}
}

// A float32 CG model reaches the Cholesky LML and gradient as closely as
// the float64 one does (TestCGLogMarginalLikelihoodMatchesExact).
func TestCGFloat32MatchesExact(t *testing.T) {
	k := kernel.NewScale(kernel.NewRBF(0.9, 1.3), 1.2)
	ex, cgm, _, _ := bbmmPair(t, 1000, k, CGOptions{Probes: 64, Rank: 40, Tol: 1e-5, Seed: 1, Float32: true})
	assertNearExact(t, ex, cgm)
	assert.LessOrEqual(t, cgm.LastCG().Residual, 1e-5)
}

func TestCGFloat32BadInputs(t *testing.T) {
	x, y := toyData(10, 50, 2)
	_, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewMatern52(1), Inference: CG, CG: CGOptions{Float32: true}})
	assert.ErrorContains(t, err, "gp.NewExact: CGOptions.Float32 supports the RBF kernel")
	_, err = NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(1), Inference: CG, CG: CGOptions{Float32: true, BlockRows: 32}})
	assert.ErrorContains(t, err, "BlockRows 32 cannot be used with it")
}
