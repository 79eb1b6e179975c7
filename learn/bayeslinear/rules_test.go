package bayeslinear

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// outputs returns what a regression predicts on x: means and variances.
func outputs(m interface {
	Predict(*tensor.Tensor) *tensor.Tensor
	PredictVariance(*tensor.Tensor) *tensor.Tensor
}, x *tensor.Tensor) [][]float64 {
	return [][]float64{m.Predict(x).Values(), m.PredictVariance(x).Values()}
}

// Every iterative fit out of iterations returns its model so far with a
// *tensor.NotConvergedError, and that model predicts finite values.
func TestFitsOutOfIterationsReturnBestModel(t *testing.T) {
	phi, yv := polyData(30, 1)
	y := vec(yv)
	labels := make([]int, len(yv))
	for i, v := range yv {
		if v > 1 {
			labels[i] = 1
		}
	}
	cases := []struct {
		name, op string
		fit      func() ([][]float64, error)
	}{
		{"evidence", "bayeslinear.FitEvidence", func() ([][]float64, error) {
			m, err := FitEvidence(ctx, phi, y, EvidenceOptions{MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return outputs(m, phi), err
		}},
		{"evidence by gradient", "bayeslinear.FitEvidenceGradient", func() ([][]float64, error) {
			m, err := FitEvidenceGradient(ctx, phi, y, EvidenceOptions{MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return outputs(m, phi), err
		}},
		{"RVM", "bayeslinear.FitRVM", func() ([][]float64, error) {
			m, err := FitRVM(ctx, phi, y, RVMOptions{MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return outputs(m, phi), err
		}},
		{"RVC", "bayeslinear.FitRVC", func() ([][]float64, error) {
			m, err := FitRVC(ctx, phi, labels, RVCOptions{MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.PredictProba(phi).Values()}, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.fit()
			numtest.Unconverged(t, err, c.op, out...)
		})
	}
}

// Invalid hyperparameters are errors naming them.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	phi, yv := polyData(10, 1)
	y := vec(yv)
	labels := []int{0, 1, 0, 1, 0, 1, 0, 1, 0, 1}
	cases := []struct {
		name, want string
		err        error
	}{
		{"negative α", "α = -1", numtest.Err(FitRegression(phi, y, RegressionOptions{Alpha: -1}))},
		{"NaN β", "β = NaN", numtest.Err(FitEvidence(ctx, phi, y, EvidenceOptions{Beta: math.NaN()}))},
		{"infinite α", "α = +Inf", numtest.Err(FitEvidenceGradient(ctx, phi, y, EvidenceOptions{Alpha: math.Inf(1)}))},
		{"negative MaxIter", "MaxIter = -1", numtest.Err(FitEvidenceGradient(ctx, phi, y, EvidenceOptions{MaxIter: -1}))},
		{"negative Tol", "Tol = -1", numtest.Err(FitRVM(ctx, phi, y, RVMOptions{Tol: -1}))},
		{"negative PruneAlpha", "PruneAlpha = -1", numtest.Err(FitRVM(ctx, phi, y, RVMOptions{PruneAlpha: -1}))},
		{"RVC negative MaxIter", "MaxIter = -2", numtest.Err(FitRVC(ctx, phi, labels, RVCOptions{MaxIter: -2}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Degenerate but valid designs give finite models: duplicated and zero
// columns, a zero design, targets the design reproduces exactly. An exact
// fit has no evidence maximum (β → ∞): the fits stop at β's bound with a
// *tensor.NotConvergedError saying so, never with a NaN or an overflow.
func TestEvidenceFitsOnDegenerateDesignsAreFinite(t *testing.T) {
	design := func(v ...float64) *tensor.Tensor { return tensor.FromFloat64s(v, 5, 2) }
	noisy := vec([]float64{1, 2.1, 2.9, 4.2, 5})
	exact := vec([]float64{1, 2, 3, 4, 5})
	cases := []struct {
		name    string
		x, y    *tensor.Tensor
		exactly bool // y is in the design's span
	}{
		{"duplicated columns", design(1, 1, 2, 2, 3, 3, 4, 4, 5, 5), noisy, false},
		{"duplicated columns, exact fit", design(1, 1, 2, 2, 3, 3, 4, 4, 5, 5), exact, true},
		{"zero column", design(1, 0, 2, 0, 3, 0, 4, 0, 5, 0), noisy, false},
		{"zero column, exact fit", design(1, 0, 2, 0, 3, 0, 4, 0, 5, 0), exact, true},
		{"zero design", design(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), noisy, false},
		{"constant targets", design(1, 1, 1, 2, 1, 3, 1, 4, 1, 5), vec([]float64{3, 3, 3, 3, 3}), true},
	}
	fits := []struct {
		name string
		fit  func(x, y *tensor.Tensor) ([][]float64, error)
	}{
		{"FitEvidence", func(x, y *tensor.Tensor) ([][]float64, error) {
			m, err := FitEvidence(ctx, x, y, EvidenceOptions{})
			if m == nil {
				return nil, err
			}
			return outputs(m, x), err
		}},
		{"FitEvidenceGradient", func(x, y *tensor.Tensor) ([][]float64, error) {
			m, err := FitEvidenceGradient(ctx, x, y, EvidenceOptions{})
			if m == nil {
				return nil, err
			}
			return outputs(m, x), err
		}},
		{"FitRVM", func(x, y *tensor.Tensor) ([][]float64, error) {
			m, err := FitRVM(ctx, x, y, RVMOptions{})
			if m == nil {
				return nil, err
			}
			return outputs(m, x), err
		}},
	}
	for _, c := range cases {
		for _, f := range fits {
			t.Run(c.name+"/"+f.name, func(t *testing.T) {
				out, err := f.fit(c.x, c.y)
				if c.exactly {
					nc := numtest.Unconverged(t, err, "bayeslinear."+f.name, out...)
					if nc != nil {
						assert.ErrorContains(t, err, "the design fits y exactly")
					}
					return
				}
				var nc *tensor.NotConvergedError
				if err != nil && !errors.As(err, &nc) {
					t.Fatal(err)
				}
				for _, o := range out {
					numtest.Finite(t, f.name, o)
				}
			})
		}
	}
}
