package inference

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// ADVI out of steps returns q as it stands with a *tensor.NotConvergedError
// naming the steps, for both families, and q is finite. (The samplers and
// the Ising sweeps run fixed budgets with no convergence test.)
func TestADVIOutOfStepsReturnsBestFit(t *testing.T) {
	for _, fam := range []Family{MeanField, FullRank} {
		r, err := ADVI(ctx, gaussian2D(0.5, 2), ADVIOptions{Family: fam, MaxSteps: 20, Window: 5, Tol: 1e-12, Seed: 1})
		if r == nil {
			t.Fatalf("no result: %v", err)
		}
		nc := numtest.Unconverged(t, err, "inference.ADVI", r.Mean, r.Cov, r.ELBO)
		if nc != nil {
			assert.Equal(t, 20, nc.Iterations)
		}
	}
}

// Invalid options and bad data are errors naming them.
func TestInferenceRejectsInvalidOptions(t *testing.T) {
	y := tensor.FromFloat64s([]float64{1, -1, math.NaN(), 1}, 2, 2)
	cases := []struct {
		name, want string
		err        error
	}{
		{"ADVI negative MaxSteps", "MaxSteps -1", numtest.Err(ADVI(ctx, gaussian2D(0, 1), ADVIOptions{MaxSteps: -1}))},
		{"ADVI negative LR", "LR -0.1", numtest.Err(ADVI(ctx, gaussian2D(0, 1), ADVIOptions{LR: -0.1}))},
		{"ADVI NaN Tol", "Tol NaN", numtest.Err(ADVI(ctx, gaussian2D(0, 1), ADVIOptions{Tol: math.NaN()}))},
		{"Ising NaN observation", "y[1, 0] is NaN", numtest.Err(IsingDenoise(ctx, y, IsingOptions{}))},
		{"Ising negative σ", "need σ > 0", numtest.Err(IsingDenoise(ctx, tensor.Ones(tensor.Float64, 2, 2), IsingOptions{Sigma: -1}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}
