package data

import "github.com/gradus-ml/gradus/tensor"

// WithIntercept returns a copy of the 2-D matrix x (n, d) with a column of
// ones in front, (n, d+1) float64: the design matrix of a linear model
// whose first weight is the intercept. It panics if x is not 2-D.
func WithIntercept(x *tensor.Tensor) *tensor.Tensor {
	n, d := matrixDims("data.WithIntercept", x)
	xv := x.Values()
	out := make([]float64, 0, n*(d+1))
	for i := range n {
		out = append(out, 1)
		out = append(out, xv[i*d:(i+1)*d]...)
	}
	return tensor.FromFloat64s(out, n, d+1)
}
