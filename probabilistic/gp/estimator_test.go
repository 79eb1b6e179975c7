package gp_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// line returns n points on [0, 1] and sin(3x) at them.
func line(n int) (x, y *tensor.Tensor) {
	xs := make([]float64, n)
	ys := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i) / float64(n-1)
		ys[i] = math.Sin(3 * xs[i])
	}
	return tensor.FromFloat64s(xs, n, 1), tensor.FromFloat64s(ys, n)
}

// Bad data and options come back as errors that name the fit and the fault.
func TestFitsRejectBadInput(t *testing.T) {
	ctx := context.Background()
	x, y := line(6)
	k := func() kernel.Kernel { return kernel.NewScale(kernel.NewRBF(1), 1) }
	nan := tensor.FromFloat64s([]float64{0, 0.2, math.NaN(), 0.6, 0.8, 1}, 6, 1)
	cases := []struct {
		name string
		err  func() error
		want string
	}{
		{"exact nil kernel", func() error { _, err := gp.FitExact(ctx, x, y, gp.ExactOptions{}); return err }, "nil kernel"},
		{"exact NaN", func() error { _, err := gp.FitExact(ctx, nan, y, gp.ExactOptions{Kernel: k()}); return err }, "non-finite value at row 2"},
		{"exact no columns", func() error {
			_, err := gp.FitExact(ctx, tensor.Zeros(tensor.Float64, 6, 0), y, gp.ExactOptions{Kernel: k()})
			return err
		}, "no data"},
		{"exact rows", func() error {
			_, err := gp.FitExact(ctx, x, tensor.Zeros(tensor.Float64, 5), gp.ExactOptions{Kernel: k()})
			return err
		}, "6 rows but y has 5"},
		{"exact bounds", func() error {
			_, err := gp.FitExact(ctx, x, y, gp.ExactOptions{Kernel: k(), Bounds: map[string][2]float64{"rbf.lengthscale": {2, 1}}})
			return err
		}, "not an interval"},
		{"sparse NaN", func() error { _, err := gp.FitSparse(ctx, nan, y, gp.SparseOptions{Kernel: k()}); return err }, "gp.FitSparse: gp.NewSparse: x holds a non-finite value"},
		{"classifier one class", func() error {
			_, err := gp.FitClassifier(ctx, x, []int{1, 1, 1, 1, 1, 1}, gp.ClassifierOptions{Kernel: k()})
			return err
		}, "fitting needs both classes"},
		{"classifier label", func() error {
			_, err := gp.FitClassifier(ctx, x, []int{0, 1, 2, 0, 1, 0}, gp.ClassifierOptions{Kernel: k()})
			return err
		}, "label 2 is 2"},
		{"multiclass one class", func() error {
			_, err := gp.FitMultiClassifier(ctx, x, []int{2, 2, 2, 2, 2, 2}, gp.MultiClassifierOptions{Kernel: k()})
			return err
		}, "only 1 class"},
		{"multiclass NaN", func() error {
			_, err := gp.FitMultiClassifier(ctx, nan, []int{0, 1, 2, 0, 1, 2}, gp.MultiClassifierOptions{Kernel: k()})
			return err
		}, "non-finite value at row 2"},
		{"svgp NaN", func() error { _, err := gp.FitSVGP(ctx, nan, y, gp.SVGPOptions{Kernel: k()}); return err }, "gp.FitSVGP: gp.NewSVGP: x holds a non-finite value at row 2"},
		{"svgp classifier label", func() error {
			_, err := gp.FitSVGPClassifier(ctx, x, []int{0, 1, 2, 0, 1, 0}, gp.SVGPOptions{Kernel: k()})
			return err
		}, "gp.FitSVGPClassifier: label 2 at row 2"},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err(), c.want, c.name)
	}
}

// A cancelled context stops every GP fit before its first evaluation: the
// error wraps context.Canceled, and the models that come back hold the
// starting hyperparameters (Exact, Sparse, Classifier: no start finished;
// SVGP: no step taken)
// or nothing (MultiClassifier: no Newton step was taken).
func TestFitsStopOnCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x, y := line(8)

	m, err := gp.FitExact(ctx, x, y, gp.ExactOptions{Kernel: kernel.NewRBF(0.7), Restarts: 3})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, m)
	assert.Equal(t, 0.7, math.Round(m.Hyperparam("rbf.lengthscale").Value()*1e12)/1e12)
	assert.Nil(t, m.FitResult())

	s, err := gp.FitSparse(ctx, x, y, gp.SparseOptions{Kernel: kernel.NewRBF(0.7)})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, s)

	c, err := gp.FitClassifier(ctx, x, []int{0, 0, 0, 0, 1, 1, 1, 1}, gp.ClassifierOptions{Kernel: kernel.NewRBF(0.7)})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, c)

	_, err = gp.FitMultiClassifier(ctx, x, []int{0, 0, 1, 1, 2, 2, 0, 1}, gp.MultiClassifierOptions{Kernel: kernel.NewRBF(0.7)})
	require.ErrorIs(t, err, context.Canceled)

	v, err := gp.FitSVGP(ctx, x, y, gp.SVGPOptions{Kernel: kernel.NewRBF(0.7)})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, v)
	assert.Equal(t, 0.7, math.Round(v.Hyperparam("rbf.lengthscale").Value()*1e12)/1e12)
	assert.Empty(t, v.Trace())

	vc, err := gp.FitSVGPClassifier(ctx, x, []int{0, 0, 0, 0, 1, 1, 1, 1}, gp.SVGPOptions{Kernel: kernel.NewRBF(0.7)})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, vc)
}
