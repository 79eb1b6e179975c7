package anomaly_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/anomaly"
	"github.com/gradus-ml/gradus/tensor"
)

// EM out of iterations gives the detector so far with a
// *tensor.NotConvergedError (the mixture's), and it scores every row with
// a finite log-density, for each covariance type.
func TestFitOutOfIterationsReturnsBestDetector(t *testing.T) {
	x := blobs(tensor.NewRNG(1), 60, false)
	for _, restarts := range []int{1, 3} {
		d, err := anomaly.FitDetector(context.Background(), x, anomaly.Options{Components: 3, K: 4, MaxIter: 1, Tol: 1e-12, Restarts: restarts})
		if d == nil {
			t.Fatalf("no detector: %v", err)
		}
		numtest.Unconverged(t, err, "mixture.FitGaussianMixture", d.LogProb(x).Values())
		assert.ErrorContains(t, err, "anomaly.FitDetector: ")
	}
}

// Invalid hyperparameters are errors naming them.
func TestFitRejectsInvalidHyperparameters(t *testing.T) {
	x := blobs(tensor.NewRNG(1), 20, false)
	for _, c := range []struct {
		name string
		opts anomaly.Options
		want string
	}{
		{"components above d", anomaly.Options{Components: 7, K: 2}, "Components = 7 for 6 columns"},
		{"K = 0", anomaly.Options{Components: 2}, "K = 0 components"},
		{"negative MaxIter", anomaly.Options{Components: 2, K: 2, MaxIter: -1}, "MaxIter"},
		{"negative RegCovar", anomaly.Options{Components: 2, K: 2, RegCovar: -1}, "RegCovar"},
	} {
		_, err := anomaly.FitDetector(context.Background(), x, c.opts)
		assert.ErrorContains(t, err, c.want, c.name)
	}
}

// Degenerate but valid data, a constant column or identical rows, gives a
// detector whose log-densities are finite.
func TestFitOnDegenerateDataIsFinite(t *testing.T) {
	constant := blobs(tensor.NewRNG(2), 30, false)
	for i := range 30 {
		constant.Float64s()[i*6+5] = 4
	}
	for name, x := range map[string]*tensor.Tensor{"constant column": constant, "identical rows": tensor.Full(tensor.Float64, 1.5, 30, 6)} {
		t.Run(name, func(t *testing.T) {
			d, err := anomaly.FitDetector(context.Background(), x, anomaly.Options{Components: 2, K: 2})
			if err != nil {
				t.Fatal(err)
			}
			numtest.Finite(t, "log-density", d.LogProb(x).Values())
		})
	}
}
