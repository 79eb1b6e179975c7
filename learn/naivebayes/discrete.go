package naivebayes

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// BernoulliOptions configures FitBernoulli.
type BernoulliOptions struct {
	Alpha     float64   // additive (Laplace/Lidstone) smoothing α > 0 (default 1)
	Threshold float64   // a feature counts as present when it is above this (default 0, scikit-learn's binarize)
	Priors    []float64 // class priors summing to 1 (default: the class frequencies)
}

// Bernoulli is a fitted Bernoulli naive Bayes classifier.
type Bernoulli struct {
	FeatureLogProb [][]float64 // FeatureLogProb[c][j] = log p(feature j present | c)
	ClassLogPrior  []float64   // log p(c)
	Threshold      float64     // the binarising threshold
}

// FitBernoulli fits p(x | c) = Πⱼ pⱼᶜ^bⱼ (1 − pⱼᶜ)^(1−bⱼ) for the features
// of x (n, d) binarised as bⱼ = [xⱼ > Threshold], with the smoothed
// estimate pⱼᶜ = (count of bⱼ = 1 in c + α) / (n_c + 2α), as
// scikit-learn's BernoulliNB. Bad data, bad priors and a negative Alpha
// give an error naming the fit.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitBernoulli(x *tensor.Tensor, labels []int, opts BernoulliOptions) (*Bernoulli, error) {
	const op = "naivebayes.FitBernoulli"
	alpha, err := smoothing(op, opts.Alpha)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(opts.Threshold) {
		return nil, fmt.Errorf("%s: the threshold is NaN", op)
	}
	xv, n, d, classes, counts, err := check(op, x, labels)
	if err != nil {
		return nil, err
	}
	priors, err := validate.Priors(op, opts.Priors, counts, n)
	if err != nil {
		return nil, err
	}
	b := &Bernoulli{FeatureLogProb: grid(classes, d), ClassLogPrior: logs(priors), Threshold: opts.Threshold}
	for i, c := range labels {
		for j := range d {
			if xv[i*d+j] > opts.Threshold {
				b.FeatureLogProb[c][j]++
			}
		}
	}
	for c, row := range b.FeatureLogProb {
		den := math.Log(float64(counts[c]) + 2*alpha)
		for j, k := range row {
			row[j] = math.Log(k+alpha) - den
		}
	}
	return b, nil
}

func (b *Bernoulli) jll(op string, x *tensor.Tensor) []float64 {
	k, d := len(b.ClassLogPrior), len(b.FeatureLogProb[0])
	xv, m := validate.Query(op, x, d)
	// log p(x | c) = Σⱼ log(1 − pⱼ) + Σ_{present j} (log pⱼ − log(1 − pⱼ)).
	base := append([]float64(nil), b.ClassLogPrior...)
	diff := grid(k, d)
	for c, row := range b.FeatureLogProb {
		for j, lp := range row {
			neg := math.Log1p(-math.Exp(lp))
			base[c] += neg
			diff[c][j] = lp - neg
		}
	}
	out := make([]float64, m*k)
	for i := range m {
		for c := range k {
			s := base[c]
			for j := range d {
				if xv[i*d+j] > b.Threshold {
					s += diff[c][j]
				}
			}
			out[i*k+c] = s
		}
	}
	return out
}

// JointLogLikelihood returns log p(c) + log p(x | c) for each row of x
// (m, d) and class c, an (m, classes) tensor in x's dtype. It panics with
// a *tensor.Error when x does not have d columns.
func (b *Bernoulli) JointLogLikelihood(x *tensor.Tensor) *tensor.Tensor {
	v := b.jll("naivebayes.Bernoulli.JointLogLikelihood", x) // validates x before x.DType reads it
	return validate.Out(x.DType(), v, x.Shape()[0], len(b.ClassLogPrior))
}

// PredictProba returns p(c | x) for each row of x (m, d), an (m, classes)
// tensor in x's dtype. It panics with a *tensor.Error when x does not have
// d columns.
func (b *Bernoulli) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	return proba(x, b.jll("naivebayes.Bernoulli.PredictProba", x), len(b.ClassLogPrior))
}

// Predict returns the most probable class of each row of x (m, d). It
// panics with a *tensor.Error when x does not have d columns.
func (b *Bernoulli) Predict(x *tensor.Tensor) []int {
	return argmax(b.jll("naivebayes.Bernoulli.Predict", x), len(b.ClassLogPrior))
}

// LogProb returns log p(x) for each row of x (m, d), an (m) tensor in x's
// dtype. It panics with a *tensor.Error when x does not have d columns.
func (b *Bernoulli) LogProb(x *tensor.Tensor) *tensor.Tensor {
	return logProb(x, b.jll("naivebayes.Bernoulli.LogProb", x), len(b.ClassLogPrior))
}

// MultinomialOptions configures FitMultinomial.
type MultinomialOptions struct {
	Alpha  float64   // additive (Laplace/Lidstone) smoothing α > 0 (default 1)
	Priors []float64 // class priors summing to 1 (default: the class frequencies)
}

// Multinomial is a fitted multinomial naive Bayes classifier. It has no
// LogProb: its joint log-likelihood leaves out the multinomial
// coefficient, which depends on x alone, so it is no density of x.
type Multinomial struct {
	FeatureLogProb [][]float64 // FeatureLogProb[c][j] = log θ_cj, the smoothed share of feature j's counts in class c
	ClassLogPrior  []float64   // log p(c)
}

// FitMultinomial fits p(x | c) ∝ Πⱼ θ_cjˣʲ for non-negative counts x
// (n, d), with θ_cj = (N_cj + α) / Σₖ (N_ck + α) where N_cj sums feature j
// over class c, as scikit-learn's MultinomialNB. Bad data (including a
// negative count), bad priors and a negative Alpha give an error naming
// the fit.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitMultinomial(x *tensor.Tensor, labels []int, opts MultinomialOptions) (*Multinomial, error) {
	const op = "naivebayes.FitMultinomial"
	alpha, err := smoothing(op, opts.Alpha)
	if err != nil {
		return nil, err
	}
	xv, n, d, classes, counts, err := check(op, x, labels)
	if err != nil {
		return nil, err
	}
	for i, v := range xv {
		if v < 0 {
			return nil, fmt.Errorf("%s: x[%d, %d] is %v: counts must be non-negative", op, i/d, i%d, v)
		}
	}
	priors, err := validate.Priors(op, opts.Priors, counts, n)
	if err != nil {
		return nil, err
	}
	m := &Multinomial{FeatureLogProb: grid(classes, d), ClassLogPrior: logs(priors)}
	for i, c := range labels {
		for j := range d {
			m.FeatureLogProb[c][j] += xv[i*d+j]
		}
	}
	for _, row := range m.FeatureLogProb {
		tot := 0.0
		for j := range row {
			row[j] += alpha
			tot += row[j]
		}
		for j := range row {
			row[j] = math.Log(row[j]) - math.Log(tot)
		}
	}
	return m, nil
}

func (mn *Multinomial) jll(op string, x *tensor.Tensor) []float64 {
	k, d := len(mn.ClassLogPrior), len(mn.FeatureLogProb[0])
	xv, m := validate.Query(op, x, d)
	out := make([]float64, m*k)
	for i := range m {
		for c, row := range mn.FeatureLogProb {
			s := mn.ClassLogPrior[c]
			for j, lp := range row {
				s += xv[i*d+j] * lp
			}
			out[i*k+c] = s
		}
	}
	return out
}

// JointLogLikelihood returns log p(c) + Σⱼ xⱼ log θ_cj for each row of x
// (m, d) and class c (the multinomial coefficient, the same for every
// class, left out, as scikit-learn does), an (m, classes) tensor in x's
// dtype. It panics with a *tensor.Error when x does not have d columns.
func (mn *Multinomial) JointLogLikelihood(x *tensor.Tensor) *tensor.Tensor {
	v := mn.jll("naivebayes.Multinomial.JointLogLikelihood", x) // validates x before x.DType reads it
	return validate.Out(x.DType(), v, x.Shape()[0], len(mn.ClassLogPrior))
}

// PredictProba returns p(c | x) for each row of x (m, d), an (m, classes)
// tensor in x's dtype. It panics with a *tensor.Error when x does not have
// d columns.
func (mn *Multinomial) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	return proba(x, mn.jll("naivebayes.Multinomial.PredictProba", x), len(mn.ClassLogPrior))
}

// Predict returns the most probable class of each row of x (m, d). It
// panics with a *tensor.Error when x does not have d columns.
func (mn *Multinomial) Predict(x *tensor.Tensor) []int {
	return argmax(mn.jll("naivebayes.Multinomial.Predict", x), len(mn.ClassLogPrior))
}

func smoothing(op string, alpha float64) (float64, error) {
	if alpha == 0 {
		return 1, nil
	}
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return 0, fmt.Errorf("%s: alpha %v must be positive and finite", op, alpha)
	}
	return alpha, nil
}

func logs(p []float64) []float64 {
	out := make([]float64, len(p))
	for i, v := range p {
		out[i] = math.Log(v)
	}
	return out
}
