// Package preprocess holds feature transforms in scikit-learn's form:
// polynomial features (PolynomialFeatures) and standardisation
// (StandardScaler), each fitted once and applied with Transform and undone
// with InverseTransform.
//
//	x, labels, err := data.Classes("sklearn/iris.csv", "target")
//	s, err := preprocess.FitStandardScaler(x, preprocess.StandardScalerOptions{})
//	if err != nil { … }
//	z := s.Transform(x)            // columns with mean 0, variance 1
//	back := s.InverseTransform(z)  // x again
//	p, err := preprocess.FitPolynomialFeatures(x, preprocess.PolynomialOptions{Degree: 2})
//	f := p.Transform(x)            // (n, 15): 1, x₀ … x₃, x₀², x₀x₁, …
//	fmt.Println(p.Powers[5], f.Shape(), back.Shape())
//
// x may be float32 or float64; statistics are computed in float64 and the
// tensors returned have their input's dtype.
package preprocess

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// PolynomialOptions configures FitPolynomialFeatures.
type PolynomialOptions struct {
	Degree          int  // the largest total degree, ≥ 1 (default 2)
	InteractionOnly bool // keep only products of distinct features (no powers x_j², …)
	NoBias          bool // leave out the constant column of ones (default: include it first)
}

// PolynomialFeatures maps rows to all monomials of their features up to a
// degree.
type PolynomialFeatures struct {
	// Powers[k][j] is the power of feature j in output column k.
	Powers [][]int
	Degree int
}

// FitPolynomialFeatures sets up the monomials of the d features of x
// (n, d) up to Degree, in scikit-learn's column order: by degree, and
// within a degree in lexicographic order of the feature indices
// (combinations with replacement, or without it for InteractionOnly),
// after the constant column unless NoBias. It returns an error naming the
// fit for bad data and for a negative Degree.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitPolynomialFeatures(x *tensor.Tensor, opts PolynomialOptions) (*PolynomialFeatures, error) {
	const op = "preprocess.FitPolynomialFeatures"
	deg := opts.Degree
	if deg == 0 {
		deg = 2
	}
	if deg < 1 {
		return nil, fmt.Errorf("%s: degree %d must be at least 1", op, opts.Degree)
	}
	_, _, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, err
	}
	p := &PolynomialFeatures{Degree: deg}
	if !opts.NoBias {
		p.Powers = append(p.Powers, make([]int, d))
	}
	var comb func(first, left int, pw []int)
	comb = func(first, left int, pw []int) {
		if left == 0 {
			p.Powers = append(p.Powers, append([]int(nil), pw...))
			return
		}
		for j := first; j < d; j++ {
			pw[j]++
			next := j
			if opts.InteractionOnly {
				next = j + 1
			}
			comb(next, left-1, pw)
			pw[j]--
		}
	}
	for k := 1; k <= deg; k++ {
		comb(0, k, make([]int, d))
	}
	return p, nil
}

// Transform returns the monomials of each row of x (m, d), an
// (m, len(Powers)) tensor in x's dtype. It panics with a *tensor.Error
// when x does not have d columns.
func (p *PolynomialFeatures) Transform(x *tensor.Tensor) *tensor.Tensor {
	d, k := len(p.Powers[len(p.Powers)-1]), len(p.Powers)
	xv, m := validate.Query("preprocess.PolynomialFeatures.Transform", x, d)
	out := make([]float64, m*k)
	for i := range m {
		for c, pw := range p.Powers {
			v := 1.0
			for j, e := range pw {
				for range e {
					v *= xv[i*d+j]
				}
			}
			out[i*k+c] = v
		}
	}
	return validate.Out(x.DType(), out, m, k)
}

// InverseTransform recovers the original features from transformed rows
// z (m, len(Powers)) by reading their degree-one columns. It panics with
// a *tensor.Error when z does not have len(Powers) columns.
func (p *PolynomialFeatures) InverseTransform(z *tensor.Tensor) *tensor.Tensor {
	k := len(p.Powers)
	d := len(p.Powers[0])
	zv, m := validate.Query("preprocess.PolynomialFeatures.InverseTransform", z, k)
	col := make([]int, d)
	for c, pw := range p.Powers {
		tot, at := 0, 0
		for j, e := range pw {
			tot += e
			if e == 1 {
				at = j
			}
		}
		if tot == 1 {
			col[at] = c
		}
	}
	out := make([]float64, m*d)
	for i := range m {
		for j, c := range col {
			out[i*d+j] = zv[i*k+c]
		}
	}
	return validate.Out(z.DType(), out, m, d)
}

// StandardScalerOptions configures FitStandardScaler.
type StandardScalerOptions struct {
	NoMean bool // do not subtract the mean (default: subtract it)
	NoStd  bool // do not divide by the standard deviation (default: divide)
}

// StandardScaler standardises columns: (x − Mean) / Scale.
type StandardScaler struct {
	Mean  []float64 // the column means (computed even with NoMean, as scikit-learn does)
	Var   []float64 // the column variances, divisor n
	Scale []float64 // √Var, or 1 for a constant column; all ones with NoStd
	// Centre and Standardise record what Transform applies.
	Centre, Standardise bool
}

// FitStandardScaler computes the mean and the variance (divisor n) of
// each column of x (n, d). A column whose variance is indistinguishable
// from zero, by scikit-learn's bound var ≤ n·ε·var + (n·|mean|·ε)² (Chan,
// Golub & LeVeque 1983, "Algorithms for computing the sample variance"),
// gets Scale 1, so it is centred but not blown up. It returns an error
// naming the fit for bad data (nil, NaN or ±Inf, zero columns).
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitStandardScaler(x *tensor.Tensor, opts StandardScalerOptions) (*StandardScaler, error) {
	const op = "preprocess.FitStandardScaler"
	xv, n, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, err
	}
	s := &StandardScaler{Mean: make([]float64, d), Var: make([]float64, d), Scale: make([]float64, d), Centre: !opts.NoMean, Standardise: !opts.NoStd}
	const eps = 0x1p-52
	for j := range d {
		m := 0.0
		for i := range n {
			m += xv[i*d+j]
		}
		m /= float64(n)
		v := 0.0
		for i := range n {
			e := xv[i*d+j] - m
			v += e * e
		}
		v /= float64(n)
		s.Mean[j], s.Var[j], s.Scale[j] = m, v, 1
		bound := float64(n)*eps*v + math.Pow(float64(n)*m*eps, 2)
		if s.Standardise && v > bound {
			s.Scale[j] = math.Sqrt(v)
		}
	}
	return s, nil
}

// Transform returns (x − Mean) / Scale for the rows of x (m, d), without
// the subtraction under NoMean and the division under NoStd, in x's
// dtype. It panics with a *tensor.Error when x does not have d columns.
func (s *StandardScaler) Transform(x *tensor.Tensor) *tensor.Tensor {
	d := len(s.Mean)
	xv, m := validate.Query("preprocess.StandardScaler.Transform", x, d)
	for i := range m {
		for j := range d {
			v := xv[i*d+j]
			if s.Centre {
				v -= s.Mean[j]
			}
			xv[i*d+j] = v / s.Scale[j]
		}
	}
	return validate.Out(x.DType(), xv, m, d)
}

// InverseTransform undoes Transform: z·Scale + Mean (without the mean
// under NoMean), in z's dtype. It panics with a *tensor.Error when z does
// not have d columns.
func (s *StandardScaler) InverseTransform(z *tensor.Tensor) *tensor.Tensor {
	d := len(s.Mean)
	zv, m := validate.Query("preprocess.StandardScaler.InverseTransform", z, d)
	for i := range m {
		for j := range d {
			v := zv[i*d+j] * s.Scale[j]
			if s.Centre {
				v += s.Mean[j]
			}
			zv[i*d+j] = v
		}
	}
	return validate.Out(z.DType(), zv, m, d)
}
