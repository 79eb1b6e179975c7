package discriminant

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// QuadraticOptions configures FitQuadratic.
type QuadraticOptions struct {
	RegParam float64   // r ∈ [0, 1]: each class covariance becomes (1 − r)·Σ_c + r·I (default 0)
	Priors   []float64 // class priors summing to 1 (default: the class frequencies)
	Tol      float64   // singular values of a class's centred rows below it count as zero (default 1e-4)
}

// Quadratic is a fitted quadratic discriminant analysis.
type Quadratic struct {
	Means  [][]float64 // Means[c]: the mean of class c
	Priors []float64   // p(c)
	// Rotations[c] (d, r_c) holds the principal axes of class c's
	// covariance as columns, Rotations[c][j][q], r_c = min(n_c, d).
	Rotations [][][]float64
	// Scalings[c] holds the regularised variances along those axes.
	Scalings [][]float64
}

// FitQuadratic fits a Gaussian with its own covariance to each class of
// the rows of x (n, d), as scikit-learn's QuadraticDiscriminantAnalysis:
// each class's centred rows are decomposed by the SVD, their variances
// along the axes s²/(n_c − 1) shrunk as (1 − r)·s²/(n_c − 1) + r. As in
// scikit-learn, a class with n_c ≤ d rows keeps only n_c axes, the last of
// which (singular value zero, from the centring) is an arbitrary direction
// outside the rows' span: give each class more rows than features for
// scores that do not depend on that choice.
//
// It returns an error naming the fit for bad data (NaN, one class, an
// empty class, a class with a single row), bad priors, a RegParam outside
// [0, 1], and, with RegParam 0, a class whose covariance is singular
// (collinear features, or n_c ≤ d): set RegParam there.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitQuadratic(x *tensor.Tensor, labels []int, opts QuadraticOptions) (*Quadratic, error) {
	const op = "discriminant.FitQuadratic"
	reg, tol := opts.RegParam, opts.Tol
	if tol == 0 {
		tol = 1e-4
	}
	if !(reg >= 0 && reg <= 1) {
		return nil, fmt.Errorf("%s: RegParam %v must lie in [0, 1]", op, reg)
	}
	if !(tol > 0) {
		return nil, fmt.Errorf("%s: Tol %v must be positive", op, tol)
	}
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
	q := &Quadratic{Means: classMeans(xv, d, labels, counts), Priors: priors}
	for c := range k {
		if counts[c] == 1 {
			return nil, fmt.Errorf("%s: class %d has a single row: its covariance is undefined", op, c)
		}
		rows := make([]float64, 0, counts[c]*d)
		for i, lc := range labels {
			if lc == c {
				for j := range d {
					rows = append(rows, xv[i*d+j]-q.Means[c][j])
				}
			}
		}
		s, v, err := svd(rows, counts[c], d)
		if err != nil {
			return nil, fmt.Errorf("%s: class %d: %w", op, c, err)
		}
		rank := 0
		for _, e := range s {
			if e > tol {
				rank++
			}
		}
		if rank < d && reg == 0 {
			return nil, fmt.Errorf("%s: class %d's covariance is singular (rank %d of %d: collinear features or too few rows): set RegParam", op, c, rank, d)
		}
		s2 := make([]float64, len(s))
		for i, e := range s {
			s2[i] = (1-reg)*e*e/float64(counts[c]-1) + reg
		}
		q.Rotations = append(q.Rotations, v)
		q.Scalings = append(q.Scalings, s2)
	}
	return q, nil
}

func (q *Quadratic) decision(op string, x *tensor.Tensor) []float64 {
	d, k := len(q.Means[0]), len(q.Priors)
	xv, m := validate.Query(op, x, d)
	out := make([]float64, m*k)
	e := make([]float64, d)
	for c := range k {
		logDet := 0.0
		for _, s := range q.Scalings[c] {
			logDet += math.Log(s)
		}
		base := math.Log(q.Priors[c]) - 0.5*logDet
		for i := range m {
			for j := range d {
				e[j] = xv[i*d+j] - q.Means[c][j]
			}
			norm2 := 0.0
			for r, s := range q.Scalings[c] {
				t := 0.0
				for j := range d {
					t += e[j] * q.Rotations[c][j][r]
				}
				norm2 += t * t / s
			}
			out[i*k+c] = base - 0.5*norm2
		}
	}
	return out
}

// Decision returns the class scores log p(c) − ½log|Σ_c| −
// ½(x − μ_c)ᵀΣ_c⁻¹(x − μ_c) for the rows of x (m, d), an (m, classes)
// tensor in x's dtype (scikit-learn's _decision_function). It panics with
// a *tensor.Error when x does not have d columns.
func (q *Quadratic) Decision(x *tensor.Tensor) *tensor.Tensor {
	v := q.decision("discriminant.Quadratic.Decision", x) // validates x before x.DType reads it
	return validate.Out(x.DType(), v, x.Shape()[0], len(q.Priors))
}

// PredictProba returns p(c | x), the softmax of the class scores, for the
// rows of x (m, d): an (m, classes) tensor in x's dtype. It panics with a
// *tensor.Error when x does not have d columns.
func (q *Quadratic) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	return softmax(x, q.decision("discriminant.Quadratic.PredictProba", x), len(q.Priors))
}

// Predict returns the class of highest score for each row of x (m, d). It
// panics with a *tensor.Error when x does not have d columns.
func (q *Quadratic) Predict(x *tensor.Tensor) []int {
	k := len(q.Priors)
	s := q.decision("discriminant.Quadratic.Predict", x)
	return tensor.ArgMax(tensor.FromFloat64s(s, len(s)/k, k), 1)
}
