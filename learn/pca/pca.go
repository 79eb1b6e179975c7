// Package pca holds the principal-component family: PCA by the covariance
// or Gram eigendecomposition or by the SVD, with whitening (FitPCA),
// probabilistic PCA by maximum likelihood in closed form, by EM or by
// gradient with its log-likelihood as a differentiable graph (FitPPCA,
// FitPPCAEM, FitPPCAGradient), and kernel PCA with centring in feature
// space on the kernels of probabilistic/kernel (FitKernelPCA).
//
//	p, err := pca.FitPCA(x, pca.PCAOptions{Components: 2}) // x (n, d)
//	z := p.Transform(x)                                     // (n, 2)
//	fmt.Println(p.ExplainedVarianceRatio)
//
// The closed forms take no context; the iterative PPCA fits take ctx first
// and return a *tensor.NotConvergedError when they run out of iterations.
//
// Sign convention: an eigenvector's sign is arbitrary, so each component
// (a row of Components, or a kernel PCA projection) is flipped to make its
// entry of largest magnitude positive. The same data then give the same
// signs on every run and platform.
package pca

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// Method chooses the eigenproblem PCA solves.
type Method int

const (
	// Covariance diagonalises the d×d covariance matrix: the choice when
	// n ≥ d.
	Covariance Method = iota
	// Gram diagonalises the n×n Gram matrix of the centred rows and maps
	// its eigenvectors back (the dual form): the choice when d > n.
	Gram
	// SVD takes the thin singular value decomposition of the centred data
	// (tensor.SVD): the most accurate, as it never squares the data.
	SVD
)

// PCAOptions configures FitPCA. The zero value keeps min(n, d) components,
// does not whiten and diagonalises the covariance.
type PCAOptions struct {
	Components int    // number of components kept (0: min(n, d))
	Whiten     bool   // Transform scales each component to unit variance
	Method     Method // Covariance (default), Gram or SVD
}

// PCA is a fitted principal component analysis.
type PCA struct {
	Mean                   []float64      // the column means removed before projecting
	Components             *tensor.Tensor // (k, d) float64, orthonormal rows, by decreasing variance
	ExplainedVariance      []float64      // the variance along each component (divisor n − 1)
	ExplainedVarianceRatio []float64      // ExplainedVariance over the total variance
	Whiten                 bool
}

// FitPCA computes the principal components of the rows of x (n, d),
// n ≥ 2, in closed form (no context). The variances use the unbiased
// divisor n − 1, as scikit-learn does. It returns an error for a
// non-matrix x, fewer than two rows, zero columns, values that are not
// finite, or more components than min(n, d).
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitPCA(x *tensor.Tensor, opts PCAOptions) (*PCA, error) {
	xc, mean, err := centred("pca.FitPCA", x)
	if err != nil {
		return nil, err
	}
	n, d := xc.Shape()[0], xc.Shape()[1]
	k := opts.Components
	if k == 0 {
		k = min(n, d)
	}
	if k < 0 || k > min(n, d) {
		return nil, fmt.Errorf("pca.FitPCA: %d components for data of shape (%d, %d)", k, n, d)
	}
	var vals []float64
	var vecs *tensor.Tensor // (d, k) eigenvectors of the covariance
	switch opts.Method {
	case Covariance:
		c := tensor.MulScalar(tensor.MatMulT(xc, xc, true, false), 1/float64(n-1))
		vals, vecs, err = topEigen(c, k)
	case Gram:
		// XXᵀu = λu gives v = Xᵀu/√λ with XᵀXv = λv.
		gm := tensor.MatMulT(xc, xc, false, true)
		var u *tensor.Tensor
		vals, u, err = topEigen(gm, k)
		if err == nil {
			vecs = tensor.MatMulT(xc, u, true, false)
			scaleColumns(vecs, vals, func(l float64) float64 { return 1 / math.Sqrt(math.Max(l, 1e-300)) })
			for i := range vals {
				vals[i] /= float64(n - 1)
			}
		}
	case SVD:
		var sv, v *tensor.Tensor
		_, sv, v, err = tensor.SVD(xc)
		if err == nil {
			vals = make([]float64, k)
			for i, x := range sv.Values()[:k] {
				vals[i] = x * x / float64(n-1)
			}
			vecs = tensor.Slice(v, 1, 0, k, 1).Contiguous()
		}
	default:
		return nil, fmt.Errorf("pca.FitPCA: unknown method %d", opts.Method)
	}
	if err != nil {
		return nil, fmt.Errorf("pca.FitPCA: %w", err)
	}
	comps := tensor.Transpose(vecs).Contiguous()
	flipRows(comps)
	total := 0.0
	for _, v := range tensor.Mul(xc, xc).Values() {
		total += v
	}
	total /= float64(n - 1)
	ratio := make([]float64, k)
	for i, v := range vals {
		if total > 0 { // constant data: no variance to explain, ratios 0
			ratio[i] = v / total
		}
	}
	return &PCA{Mean: mean, Components: comps, ExplainedVariance: vals, ExplainedVarianceRatio: ratio, Whiten: opts.Whiten}, nil
}

// Transform projects the rows of x (m, d) onto the components: (x − mean)·Vᵀ,
// divided by √(explained variance) when whitening. It panics with a
// *tensor.Error when x does not have d columns.
func (p *PCA) Transform(x *tensor.Tensor) *tensor.Tensor {
	d := len(p.Mean)
	checkCols("pca.Transform", x, d)
	z := tensor.MatMulT(tensor.Sub(x.Cast(tensor.Float64), tensor.FromFloat64s(p.Mean, d)), p.Components, false, true)
	if p.Whiten {
		scaleColumns(z, p.ExplainedVariance, invSqrt)
	}
	return z
}

// InverseTransform maps projections z (m, k) back to the data space:
// z·V + mean (undoing the whitening first). With every component kept it
// inverts Transform; with fewer it gives the best rank-k reconstruction.
func (p *PCA) InverseTransform(z *tensor.Tensor) *tensor.Tensor {
	k := p.Components.Shape()[0]
	checkCols("pca.InverseTransform", z, k)
	z = z.Cast(tensor.Float64).Clone()
	if p.Whiten {
		scaleColumns(z, p.ExplainedVariance, math.Sqrt)
	}
	return tensor.Add(tensor.MatMul(z, p.Components), tensor.FromFloat64s(p.Mean, len(p.Mean)))
}

// centred checks x (validate.Matrix, and at least two rows) and returns
// its rows minus their mean, in float64, and the mean.
func centred(op string, x *tensor.Tensor) (*tensor.Tensor, []float64, error) {
	v, n, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, nil, err
	}
	if n < 2 {
		return nil, nil, fmt.Errorf("%s: x has %d row; at least two are needed", op, n)
	}
	x64 := tensor.FromFloat64s(v, n, d)
	mean := tensor.Mean(x64, []int{0}, false)
	return tensor.Sub(x64, mean), mean.Values(), nil
}

// topEigen returns the k largest eigenvalues of the symmetric a, in
// decreasing order, and their eigenvectors as columns (n, k).
func topEigen(a *tensor.Tensor, k int) ([]float64, *tensor.Tensor, error) {
	w, v, err := tensor.Eigh(a)
	if err != nil {
		return nil, nil, err
	}
	n := w.Size()
	wv := w.Values()
	vals := make([]float64, k)
	cols := make([]int, k)
	for i := range k {
		vals[i], cols[i] = wv[n-1-i], n-1-i
	}
	return vals, tensor.IndexSelect(v, 1, cols), nil
}

// scaleColumns multiplies column j of the matrix m (in place) by f(s[j]).
// invSqrt is whitening's scale 1/√v, and 0 for a component without
// variance (constant data), whose projections are all 0 anyway: a finite
// answer instead of 0·∞.
func invSqrt(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return 1 / math.Sqrt(v)
}

func scaleColumns(m *tensor.Tensor, s []float64, f func(float64) float64) {
	rows, cols := m.Shape()[0], m.Shape()[1]
	v := m.Float64s()
	for j := range cols {
		c := f(s[j])
		for i := range rows {
			v[i*cols+j] *= c
		}
	}
}

// flipRows negates each row of m (in place) whose entry of largest
// magnitude is negative.
func flipRows(m *tensor.Tensor) {
	rows, cols := m.Shape()[0], m.Shape()[1]
	v := m.Float64s()
	for i := range rows {
		r := v[i*cols : (i+1)*cols]
		big := 0
		for j := range r {
			if math.Abs(r[j]) > math.Abs(r[big]) {
				big = j
			}
		}
		if r[big] < 0 {
			for j := range r {
				r[j] = -r[j]
			}
		}
	}
}

func checkCols(op string, x *tensor.Tensor, d int) {
	if x == nil || x.Dim() != 2 || x.Shape()[1] != d {
		tensor.Fail(op, "want an (m, %d) matrix, got %v", d, x)
	}
}
