package naivebayes_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/naivebayes"
	"github.com/gradus-ml/gradus/tensor"
)

// Naive Bayes fits in closed form, with no iterations to run out of;
// invalid hyperparameters are errors naming them.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5, 6, 7}, 4, 2)
	labels := []int{0, 1, 0, 1}
	cases := []struct {
		name, want string
		err        error
	}{
		{"Gaussian negative smoothing", "-1", numtest.Err(naivebayes.FitGaussian(x, labels, naivebayes.GaussianOptions{VarSmoothing: -1}))},
		{"Gaussian negative prior", "prior 0 is -0.5", numtest.Err(naivebayes.FitGaussian(x, labels, naivebayes.GaussianOptions{Priors: []float64{-0.5, 1.5}}))},
		{"Gaussian priors not summing to 1", "sum to 0.5", numtest.Err(naivebayes.FitGaussian(x, labels, naivebayes.GaussianOptions{Priors: []float64{0.25, 0.25}}))},
		{"Bernoulli negative α", "-1", numtest.Err(naivebayes.FitBernoulli(x, labels, naivebayes.BernoulliOptions{Alpha: -1}))},
		{"Bernoulli NaN threshold", "NaN", numtest.Err(naivebayes.FitBernoulli(x, labels, naivebayes.BernoulliOptions{Threshold: math.NaN()}))},
		{"multinomial negative α", "-2", numtest.Err(naivebayes.FitMultinomial(x, labels, naivebayes.MultinomialOptions{Alpha: -2}))},
		{"multinomial three priors for two classes", "3 priors for 2 classes", numtest.Err(naivebayes.FitMultinomial(x, labels, naivebayes.MultinomialOptions{Priors: []float64{0.2, 0.3, 0.5}}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Degenerate but valid data, a constant column or identical rows, gives
// finite probabilities: the variance smoothing keeps a zero variance
// positive, and the counts' smoothing keeps every probability above 0.
func TestFitsOnDegenerateDataAreFinite(t *testing.T) {
	labels := []int{0, 1, 0, 1, 1}
	data := map[string]*tensor.Tensor{
		"constant column": tensor.FromFloat64s([]float64{3, 0, 3, 1, 3, 2, 3, 4, 3, 3}, 5, 2),
		"identical rows":  tensor.Full(tensor.Float64, 2, 5, 2),
	}
	for name, x := range data {
		cases := []numtest.FitCase{
			{Name: "Gaussian", Fit: func() ([]float64, error) {
				m, err := naivebayes.FitGaussian(x, labels, naivebayes.GaussianOptions{})
				if m == nil {
					return nil, err
				}
				return append(m.PredictProba(x).Values(), m.LogProb(x).Values()...), err
			}},
			{Name: "Bernoulli", Fit: func() ([]float64, error) {
				m, err := naivebayes.FitBernoulli(x, labels, naivebayes.BernoulliOptions{})
				if m == nil {
					return nil, err
				}
				return append(m.PredictProba(x).Values(), m.LogProb(x).Values()...), err
			}},
			{Name: "multinomial", Fit: func() ([]float64, error) {
				m, err := naivebayes.FitMultinomial(x, labels, naivebayes.MultinomialOptions{})
				if m == nil {
					return nil, err
				}
				return m.PredictProba(x).Values(), err
			}},
		}
		numtest.FiniteFits(t, name, cases)
	}
}

// When every feature is constant the features say nothing: the posterior
// of any row is the prior.
func TestGaussianOnConstantFeaturesGivesThePrior(t *testing.T) {
	x := tensor.Full(tensor.Float64, 2, 5, 2)
	m, err := naivebayes.FitGaussian(x, []int{0, 1, 0, 1, 1}, naivebayes.GaussianOptions{})
	if err != nil {
		t.Fatal(err)
	}
	query := tensor.FromFloat64s([]float64{2, 2, 2.5, 1.5}, 2, 2)
	// The second row is 0.5 from the mean at variance 1e-9: both classes'
	// log-likelihoods are about −2.5e8, equal up to rounding at that scale.
	numtest.CloseValues(t, []float64{0.4, 0.6, 0.4, 0.6}, m.PredictProba(query).Values(), 1e-6)
}

// Scoring a nil matrix is misuse named by the method, not a nil-pointer
// crash inside it.
func TestScoringNilIsMisuse(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 1, 0, 1, 1, 0, 0}, 4, 2)
	labels := []int{0, 1, 0, 1}
	g, err := naivebayes.FitGaussian(x, labels, naivebayes.GaussianOptions{})
	require.NoError(t, err)
	b, err := naivebayes.FitBernoulli(x, labels, naivebayes.BernoulliOptions{})
	require.NoError(t, err)
	m, err := naivebayes.FitMultinomial(x, labels, naivebayes.MultinomialOptions{})
	require.NoError(t, err)
	for _, c := range []struct {
		op, site string
		f        func()
	}{
		{"naivebayes.Gaussian.JointLogLikelihood", numtest.Here(), func() { g.JointLogLikelihood(nil) }},
		{"naivebayes.Bernoulli.JointLogLikelihood", numtest.Here(), func() { b.JointLogLikelihood(nil) }},
		{"naivebayes.Multinomial.JointLogLikelihood", numtest.Here(), func() { m.JointLogLikelihood(nil) }},
	} {
		numtest.Misuse(t, c.op, c.site, c.f, "nil")
	}
}
