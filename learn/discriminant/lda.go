// Package discriminant holds Gaussian discriminant analysis in
// scikit-learn's form: linear discriminant analysis, with a covariance
// shared by the classes, and its Fisher projection onto at most
// classes − 1 discriminant directions (Linear), and quadratic discriminant
// analysis, with a covariance per class (Quadratic). Both are fitted in
// closed form (Hastie, Tibshirani & Friedman 2009, "The Elements of
// Statistical Learning", §4.3; Fisher 1936, "The use of multiple
// measurements in taxonomic problems").
//
//	x, labels, err := data.Classes("sklearn/iris.csv", "target")
//	lda, err := discriminant.FitLinear(x, labels, discriminant.LinearOptions{})
//	if err != nil { … }
//	pred := lda.Predict(x)      // []int
//	p := lda.PredictProba(x)    // (n, 3)
//	z := lda.Transform(x)       // (n, 2): the Fisher projection
//	qda, err := discriminant.FitQuadratic(x, labels, discriminant.QuadraticOptions{RegParam: 0.1})
//	fmt.Println(qda.Predict(x)[:5])
//
// Labels are 0 … classes−1 with every class present. x may be float32 or
// float64; the fits compute in float64 and the tensors returned have their
// input's dtype. Predict breaks ties towards the lower class.
package discriminant

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// Solver chooses how FitLinear computes the discriminant.
type Solver int

const (
	// SVD is scikit-learn's default solver "svd": it never forms the
	// covariance, works from singular value decompositions of the
	// within-class and between-class scatter, and gives the Fisher
	// projection (Transform). It does not shrink.
	SVD Solver = iota
	// LSQR is scikit-learn's "lsqr": it solves Σw = μ_c for the pooled
	// covariance Σ, which may be shrunk (Shrinkage). It has no Transform.
	LSQR
)

// LinearOptions configures FitLinear.
type LinearOptions struct {
	Solver     Solver    // SVD (default) or LSQR
	Priors     []float64 // class priors summing to 1 (default: the class frequencies)
	Shrinkage  float64   // LSQR only: s ∈ [0, 1] turns each class covariance C into (1 − s)·C + s·tr(C)/d·I (default 0)
	Components int       // SVD only: dimensions Transform keeps, at most min(classes − 1, d) (default: that bound)
	Tol        float64   // SVD only: singular values of the scaled scatter below it count as zero (default 1e-4)
}

// Linear is a fitted linear discriminant analysis.
type Linear struct {
	Means     [][]float64 // Means[c]: the mean of class c
	Priors    []float64   // p(c)
	Coef      [][]float64 // Coef[c]: the weights of class c's discriminant, Decision = x·Coefᵀ + Intercept
	Intercept []float64
	// Scalings (d, r) maps centred data onto the discriminant directions,
	// which are orthonormal under the within-class covariance (SVD only).
	Scalings [][]float64
	// XBar is the prior-weighted mean of the class means, the centre of
	// the projection (SVD only).
	XBar []float64
	// ExplainedVarianceRatio is the share of the between-class variance
	// along each kept direction (SVD only).
	ExplainedVarianceRatio []float64
	Solver                 Solver
	components             int
}

// FitLinear fits Gaussian class densities with a common covariance to the
// rows of x (n, d) under labels, as scikit-learn's
// LinearDiscriminantAnalysis with solver "svd" (the default) or "lsqr":
// the class c scores δ_c(x) = xᵀΣ⁻¹μ_c − ½μ_cᵀΣ⁻¹μ_c + log p(c), with Σ
// the within-class covariance (divisor n − classes for SVD; the
// prior-weighted class covariances, divisor n_c, for LSQR).
//
// It returns an error naming the fit for bad data (NaN, one class, an
// empty class), bad priors, a Shrinkage outside [0, 1] or with the SVD
// solver, too many Components, a singular within-class scatter (LSQR:
// use Shrinkage), or class means that coincide.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitLinear(x *tensor.Tensor, labels []int, opts LinearOptions) (*Linear, error) {
	const op = "discriminant.FitLinear"
	xv, n, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, err
	}
	k, counts, err := validate.Labels(op, labels, n)
	if err != nil {
		return nil, err
	}
	priors, err := validate.Priors(op, opts.Priors, counts, n)
	if err != nil {
		return nil, err
	}
	s := opts.Shrinkage
	switch {
	case !(s >= 0 && s <= 1):
		return nil, fmt.Errorf("%s: shrinkage %v must lie in [0, 1]", op, s)
	case s != 0 && opts.Solver == SVD:
		return nil, fmt.Errorf("%s: the SVD solver does not shrink: use Solver LSQR with Shrinkage", op)
	case opts.Solver != SVD && opts.Solver != LSQR:
		return nil, fmt.Errorf("%s: unknown solver %d", op, opts.Solver)
	}
	l := &Linear{Means: classMeans(xv, d, labels, counts), Priors: priors, Solver: opts.Solver}
	if opts.Solver == LSQR {
		return l, l.solveLSQR(op, xv, d, labels, s)
	}
	comps := opts.Components
	if comps == 0 {
		comps = min(k-1, d)
	}
	if comps < 0 || comps > min(k-1, d) {
		return nil, fmt.Errorf("%s: %d components, but at most min(classes − 1, d) = %d", op, comps, min(k-1, d))
	}
	tol := opts.Tol
	if tol == 0 {
		tol = 1e-4
	}
	if !(tol > 0) {
		return nil, fmt.Errorf("%s: Tol %v must be positive", op, tol)
	}
	l.components = comps
	return l, l.solveSVD(op, xv, n, d, labels, tol)
}

// solveSVD is scikit-learn's _solve_svd: whiten by the SVD of the scaled
// within-class residuals, then take the SVD of the weighted class means
// in that space.
func (l *Linear) solveSVD(op string, xv []float64, n, d int, labels []int, tol float64) error {
	k := len(l.Priors)
	xc := make([]float64, n*d)
	std := make([]float64, d)
	for i, c := range labels {
		for j := range d {
			e := xv[i*d+j] - l.Means[c][j]
			xc[i*d+j] = e
			std[j] += e * e
		}
	}
	for j := range std {
		if std[j] = math.Sqrt(std[j] / float64(n)); std[j] == 0 {
			std[j] = 1
		}
	}
	if n == k {
		return fmt.Errorf("%s: %d rows for %d classes leave no within-class scatter", op, n, k)
	}
	f := math.Sqrt(1 / float64(n-k))
	for i := range n {
		for j := range d {
			xc[i*d+j] *= f / std[j]
		}
	}
	s, v, err := svd(xc, n, d)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	rank := 0
	for _, e := range s {
		if e > tol {
			rank++
		}
	}
	if rank == 0 {
		return fmt.Errorf("%s: the within-class scatter is zero", op)
	}
	// scalings (d, rank) = V[:, :rank] / std / s.
	sc := make([]float64, d*rank)
	for j := range d {
		for r := range rank {
			sc[j*rank+r] = v[j][r] / std[j] / s[r]
		}
	}
	l.XBar = make([]float64, d)
	for c, m := range l.Means {
		for j := range d {
			l.XBar[j] += l.Priors[c] * m[j]
		}
	}
	// The class means, centred, weighted by √(n·p(c)/(classes − 1)), in
	// the whitened space: (k, rank).
	b := make([]float64, k*rank)
	for c, m := range l.Means {
		w := math.Sqrt(float64(n) * l.Priors[c] / float64(k-1))
		for r := range rank {
			t := 0.0
			for j := range d {
				t += (m[j] - l.XBar[j]) * sc[j*rank+r]
			}
			b[c*rank+r] = w * t
		}
	}
	s2, v2, err := svd(b, k, rank)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	tot, rank2 := 0.0, 0
	for _, e := range s2 {
		tot += e * e
		if e > tol*s2[0] {
			rank2++
		}
	}
	if rank2 == 0 || tot == 0 {
		return fmt.Errorf("%s: the class means coincide: there is no between-class scatter", op)
	}
	for _, e := range s2[:min(len(s2), l.components)] {
		l.ExplainedVarianceRatio = append(l.ExplainedVarianceRatio, e*e/tot)
	}
	// Scalings = scalings · V2[:, :rank2].
	l.Scalings = make([][]float64, d)
	for j := range d {
		l.Scalings[j] = make([]float64, rank2)
		for q := range rank2 {
			for r := range rank {
				l.Scalings[j][q] += sc[j*rank+r] * v2[r][q]
			}
		}
	}
	// coef = (means − xbar)·Scalings; intercept = −½‖coef‖² + log p(c);
	// Coef = coef·Scalingsᵀ; intercept −= xbar·Coef.
	l.Coef, l.Intercept = make([][]float64, k), make([]float64, k)
	for c, m := range l.Means {
		proj := make([]float64, rank2)
		for q := range rank2 {
			for j := range d {
				proj[q] += (m[j] - l.XBar[j]) * l.Scalings[j][q]
			}
			l.Intercept[c] -= 0.5 * proj[q] * proj[q]
		}
		l.Intercept[c] += math.Log(l.Priors[c])
		l.Coef[c] = make([]float64, d)
		for j := range d {
			for q := range rank2 {
				l.Coef[c][j] += proj[q] * l.Scalings[j][q]
			}
			l.Intercept[c] -= l.XBar[j] * l.Coef[c][j]
		}
	}
	return nil
}

// solveLSQR is scikit-learn's _solve_lstsq: Coef = Σ⁻¹μ_c for the pooled,
// optionally shrunk, covariance.
func (l *Linear) solveLSQR(op string, xv []float64, d int, labels []int, shrink float64) error {
	k := len(l.Priors)
	sigma := make([]float64, d*d)
	for c := range k {
		var rows []float64
		for i, lc := range labels {
			if lc == c {
				rows = append(rows, xv[i*d:(i+1)*d]...)
			}
		}
		cov := covariance(rows, d, l.Means[c], shrink)
		for i := range sigma {
			sigma[i] += l.Priors[c] * cov[i]
		}
	}
	chol, err := tensor.Cholesky(tensor.FromFloat64s(sigma, d, d))
	if err != nil {
		return fmt.Errorf("%s: the within-class covariance is singular (%w): set Shrinkage", op, err)
	}
	mu := make([]float64, 0, d*k)
	for j := range d {
		for c := range k {
			mu = append(mu, l.Means[c][j])
		}
	}
	w := tensor.CholeskySolve(chol, tensor.FromFloat64s(mu, d, k)).Values() // (d, k)
	l.Coef, l.Intercept = make([][]float64, k), make([]float64, k)
	for c := range k {
		l.Coef[c] = make([]float64, d)
		for j := range d {
			l.Coef[c][j] = w[j*k+c]
			l.Intercept[c] -= 0.5 * l.Means[c][j] * l.Coef[c][j]
		}
		l.Intercept[c] += math.Log(l.Priors[c])
	}
	return nil
}

// covariance returns the covariance (divisor m) of the m rows about
// mean, shrunk as scikit-learn's shrunk_covariance: (1 − s)·C +
// s·tr(C)/d·I (Ledoit & Wolf 2004, "A well-conditioned estimator for
// large-dimensional covariance matrices").
func covariance(rows []float64, d int, mean []float64, shrink float64) []float64 {
	m := len(rows) / d
	c := make([]float64, d*d)
	for i := range m {
		r := rows[i*d : (i+1)*d]
		for a := range d {
			for b := range d {
				c[a*d+b] += (r[a] - mean[a]) * (r[b] - mean[b])
			}
		}
	}
	tr := 0.0
	for a := range d {
		tr += c[a*d+a]
	}
	for i := range c {
		c[i] *= (1 - shrink) / float64(m)
	}
	for a := range d {
		c[a*d+a] += shrink * tr / float64(m*d)
	}
	return c
}

// Decision returns the class scores δ_c(x) = x·Coef_c + Intercept_c for
// the rows of x (m, d), an (m, classes) tensor in x's dtype; for two
// classes scikit-learn's decision_function is column 1 minus column 0. It
// panics with a *tensor.Error when x does not have d columns.
func (l *Linear) Decision(x *tensor.Tensor) *tensor.Tensor {
	v := l.decision("discriminant.Linear.Decision", x) // validates x before x.DType reads it
	return validate.Out(x.DType(), v, x.Shape()[0], len(l.Priors))
}

func (l *Linear) decision(op string, x *tensor.Tensor) []float64 {
	d, k := len(l.Means[0]), len(l.Priors)
	xv, m := validate.Query(op, x, d)
	out := make([]float64, m*k)
	for i := range m {
		for c := range k {
			s := l.Intercept[c]
			for j, w := range l.Coef[c] {
				s += xv[i*d+j] * w
			}
			out[i*k+c] = s
		}
	}
	return out
}

// PredictProba returns p(c | x), the softmax of the class scores, for the
// rows of x (m, d): an (m, classes) tensor in x's dtype. It panics with a
// *tensor.Error when x does not have d columns.
func (l *Linear) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	return softmax(x, l.decision("discriminant.Linear.PredictProba", x), len(l.Priors))
}

// Predict returns the class of highest score for each row of x (m, d). It
// panics with a *tensor.Error when x does not have d columns.
func (l *Linear) Predict(x *tensor.Tensor) []int {
	k := len(l.Priors)
	s := l.decision("discriminant.Linear.Predict", x)
	return tensor.ArgMax(tensor.FromFloat64s(s, len(s)/k, k), 1)
}

// Transform projects the rows of x (m, d) onto the discriminant directions,
// (x − XBar)·Scalings, keeping the first Components columns: the Fisher
// projection, which separates the class means best relative to the
// within-class spread. Each column matches scikit-learn's transform up to
// its sign. It panics with a *tensor.Error when x does not have d columns
// or the model was fitted with the LSQR solver.
func (l *Linear) Transform(x *tensor.Tensor) *tensor.Tensor {
	const op = "discriminant.Linear.Transform"
	if l.Solver != SVD {
		tensor.Fail(op, "the LSQR solver has no projection: fit with the SVD solver")
	}
	d := len(l.XBar)
	xv, m := validate.Query(op, x, d)
	r := min(l.components, len(l.Scalings[0]))
	out := make([]float64, m*r)
	for i := range m {
		for q := range r {
			s := 0.0
			for j := range d {
				s += (xv[i*d+j] - l.XBar[j]) * l.Scalings[j][q]
			}
			out[i*r+q] = s
		}
	}
	return validate.Out(x.DType(), out, m, r)
}
