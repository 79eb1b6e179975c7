package pca

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// KernelPCA is PCA in the feature space of a kernel (Schölkopf, Smola and
// Müller 1998, Nonlinear component analysis as a kernel eigenvalue
// problem): the eigendecomposition of the centred kernel
// matrix K̃ = (I − 1/n)K(I − 1/n) of the training rows.
type KernelPCA struct {
	Kernel      kernel.Kernel
	X           *tensor.Tensor // the training rows (n, d), float64
	Eigenvalues []float64      // of K̃, decreasing (not divided by n)
	alphas      *tensor.Tensor // (n, k) eigenvectors scaled by 1/√λ
	colMean     []float64      // the column means of K (n)
	allMean     float64        // the mean of K
}

// KernelPCAOptions configures FitKernelPCA. The zero value means the
// defaults stated on each field.
type KernelPCAOptions struct {
	// Kernel is the kernel (any probabilistic/kernel kernel, at its current
	// hyperparameters); nil means an RBF with γ = 1/d (lengthscale
	// √(d/2)), scikit-learn's default γ.
	Kernel kernel.Kernel
	// Components is the number of components k ≤ n; zero means every
	// component whose eigenvalue is positive (above 1e-12 of the largest).
	Components int
}

// FitKernelPCA computes kernel principal components of the rows of x
// (n, d) in closed form (no context). Components whose eigenvalue is not
// positive cannot be normalised: asking for one is an error. Each
// component's training projections are signed by PCA's convention
// (largest magnitude positive). It returns an error for bad data (NaN or
// ±Inf, fewer than two rows, zero columns) or more components than rows.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitKernelPCA(x *tensor.Tensor, opts KernelPCAOptions) (*KernelPCA, error) {
	if _, _, err := centred("pca.FitKernelPCA", x); err != nil { // validates x
		return nil, err
	}
	x64 := x.Cast(tensor.Float64)
	n, d := x.Shape()[0], x.Shape()[1]
	k := opts.Components
	if k < 0 || k > n {
		return nil, fmt.Errorf("pca.FitKernelPCA: %d components for %d rows", k, n)
	}
	kern := opts.Kernel
	if kern == nil {
		kern = kernel.NewRBF(math.Sqrt(float64(d) / 2))
	}
	km, err := kernelMatrix(kern, x64, x64)
	if err != nil {
		return nil, fmt.Errorf("pca.FitKernelPCA: %w", err)
	}
	colMean := tensor.Mean(km, []int{0}, false).Values()
	allMean := 0.0
	for _, v := range colMean {
		allMean += v
	}
	allMean /= float64(n)
	kc := centreRows(km, colMean, colMean, allMean)
	all := k == 0
	if all {
		k = n
	}
	vals, vecs, err := topEigen(kc, k)
	if err != nil {
		return nil, fmt.Errorf("pca.FitKernelPCA: %w", err)
	}
	if all {
		keep := 0
		for keep < len(vals) && vals[keep] > 1e-12*math.Max(vals[0], 1e-300) {
			keep++
		}
		if keep == 0 {
			return nil, fmt.Errorf("pca.FitKernelPCA: the centred kernel matrix has no positive eigenvalue")
		}
		vals, vecs = vals[:keep], tensor.Slice(vecs, 1, 0, keep, 1).Contiguous()
	}
	for i, v := range vals {
		if !(v > 1e-12*math.Max(vals[0], 1e-300)) {
			return nil, fmt.Errorf("pca.FitKernelPCA: component %d has eigenvalue %g; ask for fewer components", i, v)
		}
	}
	flipRowsOfT(vecs)
	scaleColumns(vecs, vals, func(l float64) float64 { return 1 / math.Sqrt(l) })
	return &KernelPCA{Kernel: kern, X: x64, Eigenvalues: vals, alphas: vecs, colMean: colMean, allMean: allMean}, nil
}

// Transform projects the rows of x (m, d) onto the components: the centred
// kernel row k̃(x) times each eigenvector over √λ. For the training rows it
// gives √λ times the eigenvectors. It panics with a *tensor.Error unless x
// is a matrix with the training columns.
func (p *KernelPCA) Transform(x *tensor.Tensor) *tensor.Tensor {
	checkCols("pca.KernelPCA.Transform", x, p.X.Shape()[1])
	km, err := kernelMatrix(p.Kernel, x.Cast(tensor.Float64), p.X)
	if err != nil {
		tensor.Fail("pca.KernelPCA.Transform", "%v", err)
	}
	rowMean := tensor.Mean(km, []int{1}, false).Values()
	return tensor.MatMul(centreRows(km, rowMean, p.colMean, p.allMean), p.alphas)
}

// kernelMatrix evaluates K(a, b) through the kernel's graph, passing the
// same node twice when a and b are the same tensor (so stationary kernels
// see exact zeros on the diagonal and White its noise).
func kernelMatrix(k kernel.Kernel, a, b *tensor.Tensor) (m *tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	g := graph.New()
	an := g.Const(a)
	bn := an
	if b != a {
		bn = g.Const(b)
	}
	return k.K(an, bn).Value().Clone(), nil
}

// centreRows returns K − r1ᵀ − 1cᵀ + m for the row means r and the training
// column means c of K (m, n).
func centreRows(km *tensor.Tensor, rowMean, colMean []float64, allMean float64) *tensor.Tensor {
	rows, cols := km.Shape()[0], km.Shape()[1]
	v := km.Contiguous().Values()
	out := make([]float64, len(v))
	for i := range rows {
		for j := range cols {
			out[i*cols+j] = v[i*cols+j] - rowMean[i] - colMean[j] + allMean
		}
	}
	return tensor.FromFloat64s(out, rows, cols)
}
