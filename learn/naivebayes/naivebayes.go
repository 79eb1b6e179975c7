// Package naivebayes holds the naive Bayes classifiers of scikit-learn's
// family: Gaussian (continuous features), Bernoulli (binary features, or
// features binarised at a threshold) and multinomial (counts). Each
// assumes the features independent given the class (Duda, Hart & Stork
// 2001, "Pattern Classification", §2.9; McCallum & Nigam 1998, "A
// comparison of event models for naive Bayes text classification") and
// is fitted in closed form.
//
//	x, labels, err := data.Classes("sklearn/iris.csv", "target")
//	m, err := naivebayes.FitGaussian(x, labels, naivebayes.GaussianOptions{})
//	if err != nil { … }
//	pred := m.Predict(x)            // []int
//	p := m.PredictProba(x)          // (n, 3) tensor, rows sum to 1
//	jll := m.JointLogLikelihood(x)  // (n, 3): log p(c) + log p(x | c)
//	lp := m.LogProb(x)              // (n): log p(x)
//	fmt.Println(m.Theta, m.Var)
//
// Labels are 0 … classes−1 with every class present. x may be float32 or
// float64; the fits compute in float64, and PredictProba, LogProb and
// JointLogLikelihood return tensors of their input's dtype. Predict breaks
// ties towards the lower class.
package naivebayes

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// GaussianOptions configures FitGaussian.
type GaussianOptions struct {
	VarSmoothing float64   // added to every variance, times the largest feature variance (default 1e-9, scikit-learn's)
	Priors       []float64 // class priors, one per class, summing to 1 (default: the class frequencies)
}

// Gaussian is a fitted Gaussian naive Bayes classifier.
type Gaussian struct {
	Theta    [][]float64 // Theta[c][j]: the mean of feature j in class c
	Var      [][]float64 // Var[c][j]: its variance (divisor n_c) plus the smoothing
	Priors   []float64   // p(c)
	Epsilon  float64     // the smoothing added to each variance
	features int
}

// FitGaussian fits p(x | c) = Πⱼ N(xⱼ; θ_cj, σ²_cj) by the class means and
// variances of x (n, d) under labels, adding VarSmoothing times the
// largest variance of any feature over all of x to each σ², as
// scikit-learn's GaussianNB does, so that constant features do not divide
// by zero (VarSmoothing itself when every feature is constant, where
// scikit-learn divides by zero). Bad data (NaN, one class, an empty class, labels not matching
// the rows), bad priors and a negative VarSmoothing give an error naming
// the fit.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitGaussian(x *tensor.Tensor, labels []int, opts GaussianOptions) (*Gaussian, error) {
	const op = "naivebayes.FitGaussian"
	smooth := opts.VarSmoothing
	if smooth == 0 {
		smooth = 1e-9
	}
	if !(smooth > 0) || math.IsInf(smooth, 0) {
		return nil, fmt.Errorf("%s: VarSmoothing %v must be positive and finite", op, opts.VarSmoothing)
	}
	xv, n, d, classes, counts, err := check(op, x, labels)
	if err != nil {
		return nil, err
	}
	priors, err := validate.Priors(op, opts.Priors, counts, n)
	if err != nil {
		return nil, err
	}
	// ε = smoothing × the largest variance of a feature over all rows.
	maxVar := 0.0
	for j := range d {
		m, s := 0.0, 0.0
		for i := range n {
			m += xv[i*d+j]
		}
		m /= float64(n)
		for i := range n {
			s += (xv[i*d+j] - m) * (xv[i*d+j] - m)
		}
		maxVar = max(maxVar, s/float64(n))
	}
	if maxVar == 0 {
		maxVar = 1 // every feature constant: a unit scale, so the posterior is the prior
	}
	g := &Gaussian{Theta: grid(classes, d), Var: grid(classes, d), Priors: priors, Epsilon: smooth * maxVar, features: d}
	for i, c := range labels {
		for j := range d {
			g.Theta[c][j] += xv[i*d+j]
		}
	}
	for c := range classes {
		for j := range d {
			g.Theta[c][j] /= float64(counts[c])
		}
	}
	for i, c := range labels {
		for j := range d {
			e := xv[i*d+j] - g.Theta[c][j]
			g.Var[c][j] += e * e
		}
	}
	for c := range classes {
		for j := range d {
			g.Var[c][j] = g.Var[c][j]/float64(counts[c]) + g.Epsilon
		}
	}
	return g, nil
}

// JointLogLikelihood returns log p(c) + log p(x | c) for each row of x
// (m, d) and class c, an (m, classes) tensor in x's dtype. It panics with
// a *tensor.Error when x does not have d columns.
func (g *Gaussian) JointLogLikelihood(x *tensor.Tensor) *tensor.Tensor {
	v := g.jll("naivebayes.Gaussian.JointLogLikelihood", x) // validates x before x.DType reads it
	return validate.Out(x.DType(), v, x.Shape()[0], len(g.Priors))
}

func (g *Gaussian) jll(op string, x *tensor.Tensor) []float64 {
	xv, m := validate.Query(op, x, g.features)
	k, d := len(g.Priors), g.features
	base := make([]float64, k)
	for c := range k {
		base[c] = math.Log(g.Priors[c])
		for _, v := range g.Var[c] {
			base[c] -= 0.5 * math.Log(2*math.Pi*v)
		}
	}
	out := make([]float64, m*k)
	for i := range m {
		row := xv[i*d : (i+1)*d]
		for c := range k {
			s := 0.0
			for j, v := range row {
				e := v - g.Theta[c][j]
				s += e * e / g.Var[c][j]
			}
			out[i*k+c] = base[c] - 0.5*s
		}
	}
	return out
}

// PredictProba returns p(c | x) for each row of x (m, d), an (m, classes)
// tensor in x's dtype. It panics with a *tensor.Error when x does not have
// d columns.
func (g *Gaussian) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	return proba(x, g.jll("naivebayes.Gaussian.PredictProba", x), len(g.Priors))
}

// Predict returns the most probable class of each row of x (m, d). It
// panics with a *tensor.Error when x does not have d columns.
func (g *Gaussian) Predict(x *tensor.Tensor) []int {
	return argmax(g.jll("naivebayes.Gaussian.Predict", x), len(g.Priors))
}

// LogProb returns log p(x) = log Σ_c p(c)·p(x | c) for each row of x
// (m, d), an (m) tensor in x's dtype. It panics with a *tensor.Error when
// x does not have d columns.
func (g *Gaussian) LogProb(x *tensor.Tensor) *tensor.Tensor {
	return logProb(x, g.jll("naivebayes.Gaussian.LogProb", x), len(g.Priors))
}

// check validates x and labels for op.
func check(op string, x *tensor.Tensor, labels []int) (xv []float64, n, d, classes int, counts []int, err error) {
	if xv, n, d, err = validate.Matrix(op, x); err != nil {
		return
	}
	classes, counts, err = validate.Labels(op, labels, n)
	return
}

func grid(r, c int) [][]float64 {
	g := make([][]float64, r)
	for i := range g {
		g[i] = make([]float64, c)
	}
	return g
}

// proba normalises the (m, k) joint log-likelihoods into probabilities in
// x's dtype.
func proba(x *tensor.Tensor, jll []float64, k int) *tensor.Tensor {
	t := tensor.Softmax(tensor.FromFloat64s(jll, len(jll)/k, k), 1)
	return t.Cast(outDType(x))
}

// logProb returns the log-sum-exp of each row of the (m, k) joint
// log-likelihoods in x's dtype.
func logProb(x *tensor.Tensor, jll []float64, k int) *tensor.Tensor {
	t := tensor.LogSumExp(tensor.FromFloat64s(jll, len(jll)/k, k), []int{1}, false)
	return t.Cast(outDType(x))
}

func argmax(jll []float64, k int) []int {
	return tensor.ArgMax(tensor.FromFloat64s(jll, len(jll)/k, k), 1)
}

func outDType(x *tensor.Tensor) tensor.DType {
	if x.DType() == tensor.Float32 {
		return tensor.Float32
	}
	return tensor.Float64
}
