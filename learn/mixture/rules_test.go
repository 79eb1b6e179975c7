package mixture_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/tensor"
)

// binary is 40 rows of 6 bits from two prototypes with flips.
func binary() *tensor.Tensor {
	rng := tensor.NewRNG(5)
	v := make([]float64, 0, 240)
	for i := range 40 {
		for j := range 6 {
			bit := float64((i%2 + j) % 2)
			if rng.Float64() < 0.2 {
				bit = 1 - bit
			}
			v = append(v, bit)
		}
	}
	return tensor.FromFloat64s(v, 40, 6)
}

// fitCase is a fit whose model's outputs are checked.
type fitCase struct {
	name, op string
	fit      func() ([][]float64, error)
}

var covariances = []struct {
	name string
	ct   mixture.CovarianceType
}{{"full", mixture.Full}, {"diagonal", mixture.Diagonal}, {"spherical", mixture.Spherical}, {"tied", mixture.Tied}}

// Every fit out of iterations returns its mixture with a
// *tensor.NotConvergedError, and that mixture gives finite densities and
// probabilities.
func TestFitsOutOfIterationsReturnBestModel(t *testing.T) {
	x, bits := iris(t), binary()
	start, _ := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 3, MaxIter: 1, Seed: 2})
	var cases []fitCase
	for _, c := range covariances {
		cases = append(cases, fitCase{"EM " + c.name, "mixture.FitGaussianMixture", func() ([][]float64, error) {
			m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 3, Covariance: c.ct, MaxIter: 1, Seed: 2})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.LogProb(x).Values(), m.PredictProba(x).Values()}, err
		}})
	}
	cases = append(cases, []fitCase{
		{"gradient", "mixture.FitGaussianMixtureGradient", func() ([][]float64, error) {
			m, err := mixture.FitGaussianMixtureGradient(ctx, x, mixture.GaussianMixtureGradientOptions{Start: start, MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.LogProb(x).Values(), m.PredictProba(x).Values()}, err
		}},
		{"Bernoulli", "mixture.FitBernoulliMixture", func() ([][]float64, error) {
			m, err := mixture.FitBernoulliMixture(ctx, bits, mixture.BernoulliMixtureOptions{K: 2, MaxIter: 1, Seed: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.LogProb(bits).Values(), m.PredictProba(bits).Values()}, err
		}},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.fit()
			numtest.Unconverged(t, err, c.op, out...)
		})
	}
}

// Invalid hyperparameters are errors naming them.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	x := iris(t)
	cases := []struct {
		name, want string
		err        error
	}{
		{"K = 0", "K = 0", numtest.Err(mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{}))},
		{"negative RegCovar", "RegCovar", numtest.Err(mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 2, RegCovar: -1}))},
		{"negative MaxIter", "MaxIter", numtest.Err(mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 2, MaxIter: -1}))},
		{"negative Tol", "Tol", numtest.Err(mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 2, Tol: -1}))},
		{"negative restarts", "Restarts", numtest.Err(mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 2, Restarts: -1}))},
		{"gradient without start", "Start", numtest.Err(mixture.FitGaussianMixtureGradient(ctx, x, mixture.GaussianMixtureGradientOptions{}))},
		{"Bernoulli negative MaxIter", "MaxIter", numtest.Err(mixture.FitBernoulliMixture(ctx, binary(), mixture.BernoulliMixtureOptions{K: 2, MaxIter: -1}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Degenerate but valid data, a constant column or identical rows, gives a
// mixture with finite densities: RegCovar keeps its covariances positive
// definite.
func TestFitsOnDegenerateDataAreFinite(t *testing.T) {
	data := map[string]*tensor.Tensor{
		"constant column": tensor.FromFloat64s([]float64{7, 0, 7, 1, 7, 5, 7, 6, 7, 0.5, 7, 5.5}, 6, 2),
		"identical rows":  tensor.Full(tensor.Float64, 3, 6, 2),
	}
	for name, x := range data {
		for _, c := range covariances {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 2, Covariance: c.ct})
				if err != nil {
					t.Fatal(err)
				}
				numtest.Finite(t, "log-density", m.LogProb(x).Values())
				numtest.Finite(t, "probabilities", m.PredictProba(x).Values())
			})
		}
	}
	t.Run("Bernoulli identical rows", func(t *testing.T) {
		x := tensor.Full(tensor.Float64, 1, 5, 3)
		m, err := mixture.FitBernoulliMixture(ctx, x, mixture.BernoulliMixtureOptions{K: 2})
		if err != nil {
			t.Fatal(err)
		}
		numtest.Finite(t, "log-density", m.LogProb(x).Values())
	})
}
