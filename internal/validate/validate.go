// Package validate checks the inputs of the estimators (learn/ and the
// probabilistic ones), so that every fit words its errors the same way:
// "<fit>: <what was wrong>". Fits get errors; predictions, which the
// conventions treat as misuse when shapes are wrong, get *tensor.Error
// panics.
package validate

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Matrix returns the entries of the data matrix x (n, d) as row-major
// float64 values with its shape. It errors, naming op, when x is nil, not
// 2-D, not float32 or float64, has no rows or no columns, or holds a NaN
// or an infinity.
func Matrix(op string, x *tensor.Tensor) (v []float64, n, d int, err error) {
	return NamedMatrix(op, "x", x)
}

// NamedMatrix is Matrix for a data matrix that the fit calls name (the
// second sample of a two-sample test, say), so that its errors name it.
func NamedMatrix(op, name string, x *tensor.Tensor) (v []float64, n, d int, err error) {
	if x == nil {
		return nil, 0, 0, fmt.Errorf("%s: %s is nil", op, name)
	}
	if x.Dim() != 2 {
		return nil, 0, 0, fmt.Errorf("%s: %s must be an (n, d) matrix, got shape %v", op, name, x.Shape())
	}
	n, d = x.Shape()[0], x.Shape()[1]
	if n == 0 {
		return nil, 0, 0, fmt.Errorf("%s: %s has no rows", op, name)
	}
	if d == 0 {
		return nil, 0, 0, fmt.Errorf("%s: %s has zero columns", op, name)
	}
	v = x.Values()
	for i, e := range v {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			return nil, 0, 0, fmt.Errorf("%s: %s[%d, %d] is %v: values must be finite", op, name, i/d, i%d, e)
		}
	}
	return v, n, d, nil
}

// Target returns the regression targets y, an (n) tensor, as float64
// values. It errors, naming op, when y is nil, not 1-D of length n, or
// holds a value that is not finite.
func Target(op string, y *tensor.Tensor, n int) ([]float64, error) {
	if y == nil {
		return nil, fmt.Errorf("%s: y is nil", op)
	}
	if y.Dim() != 1 || y.Shape()[0] != n {
		return nil, fmt.Errorf("%s: y must have shape (%d) to match x's rows, got %v", op, n, y.Shape())
	}
	v := y.Values()
	for i, e := range v {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			return nil, fmt.Errorf("%s: y[%d] is %v: targets must be finite", op, i, e)
		}
	}
	return v, nil
}

// Labels checks class labels for n rows: len(labels) == n, each in
// 0 … classes−1 with classes = max+1 ≥ 2, and every class present. It
// returns classes and the count of each class, or an error naming op.
func Labels(op string, labels []int, n int) (classes int, counts []int, err error) {
	if len(labels) != n {
		return 0, nil, fmt.Errorf("%s: %d labels for %d rows", op, len(labels), n)
	}
	for i, c := range labels {
		if c < 0 {
			return 0, nil, fmt.Errorf("%s: label %d of row %d is negative: classes are 0 … classes−1", op, c, i)
		}
		classes = max(classes, c+1)
	}
	if classes < 2 {
		return 0, nil, fmt.Errorf("%s: the labels hold one class; a classifier needs at least two", op)
	}
	counts = make([]int, classes)
	for _, c := range labels {
		counts[c]++
	}
	for c, k := range counts {
		if k == 0 {
			return 0, nil, fmt.Errorf("%s: class %d has no rows: labels must be 0 … %d with every class present", op, c, classes-1)
		}
	}
	return classes, counts, nil
}

// Priors returns the class priors of a fit: a copy of priors after
// checking them (one per class, each non-negative, summing to 1 within
// 1e-8), or, when priors is nil, the class frequencies counts[c]/n. op
// names the fit in errors.
func Priors(op string, priors []float64, counts []int, n int) ([]float64, error) {
	classes := len(counts)
	if priors == nil {
		p := make([]float64, classes)
		for c, m := range counts {
			p[c] = float64(m) / float64(n)
		}
		return p, nil
	}
	if len(priors) != classes {
		return nil, fmt.Errorf("%s: %d priors for %d classes", op, len(priors), classes)
	}
	s := 0.0
	for c, p := range priors {
		if !(p >= 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("%s: prior %d is %v: priors must be non-negative", op, c, p)
		}
		s += p
	}
	if math.Abs(s-1) > 1e-8 {
		return nil, fmt.Errorf("%s: the priors sum to %v, not 1", op, s)
	}
	return append([]float64(nil), priors...), nil
}

// Query returns the rows of x (m, d) for a prediction as row-major float64
// values and m. It panics with a *tensor.Error naming op when x is nil,
// not 2-D or does not have d columns.
func Query(op string, x *tensor.Tensor, d int) ([]float64, int) {
	if x == nil {
		tensor.Fail(op, "x is nil")
	}
	if x.Dim() != 2 || x.Shape()[1] != d {
		tensor.Fail(op, "x must be an (m, %d) matrix, got shape %v", d, x.Shape())
	}
	return x.Values(), x.Shape()[0]
}

// Out returns values as a tensor of dtype dt (float32 or float64, the
// dtype of the caller's input) and the given shape.
func Out(dt tensor.DType, values []float64, shape ...int) *tensor.Tensor {
	if dt != tensor.Float32 {
		dt = tensor.Float64
	}
	return tensor.FromValues(dt, values, shape...)
}
