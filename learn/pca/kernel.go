package pca

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// KernelPCA is PCA in the feature space of a kernel (Schölkopf, Smola and
// Müller 1998; seed 000 §4.6): the eigendecomposition of the centred kernel
// matrix K̃ = (I − 1/n)K(I − 1/n) of the training rows.
type KernelPCA struct {
	Kernel      kernel.Kernel
	X           *tensor.Tensor // the training rows (n, d), float64
	Eigenvalues []float64      // of K̃, decreasing (not divided by n)
	alphas      *tensor.Tensor // (n, k) eigenvectors scaled by 1/√λ
	colMean     []float64      // the column means of K (n)
	allMean     float64        // the mean of K
}

// FitKernelPCA computes k kernel principal components of the rows of x
// (n, d) under kernel (any probabilistic/gp kernel, at its current
// hyperparameters). Components whose eigenvalue is not positive cannot be
// normalised and are an error. Each component's training projections are
// signed by PCA's convention (largest magnitude positive).
func FitKernelPCA(x *tensor.Tensor, kernel kernel.Kernel, k int) (*KernelPCA, error) {
	if kernel == nil {
		return nil, fmt.Errorf("pca.FitKernelPCA: nil kernel")
	}
	if x == nil || x.Dim() != 2 || x.Shape()[0] < 2 {
		return nil, fmt.Errorf("pca.FitKernelPCA: data must be an (n, d) matrix with n ≥ 2, got %v", x)
	}
	n := x.Shape()[0]
	if k < 1 || k > n {
		return nil, fmt.Errorf("pca.FitKernelPCA: %d components for %d rows", k, n)
	}
	x64 := x.Cast(tensor.Float64)
	km, err := kernelMatrix(kernel, x64, x64)
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
	vals, vecs, err := topEigen(kc, k)
	if err != nil {
		return nil, fmt.Errorf("pca.FitKernelPCA: %w", err)
	}
	for i, v := range vals {
		if !(v > 1e-12*math.Max(vals[0], 1e-300)) {
			return nil, fmt.Errorf("pca.FitKernelPCA: component %d has eigenvalue %g; ask for fewer components", i, v)
		}
	}
	flipRowsOfT(vecs)
	scaleColumns(vecs, vals, func(l float64) float64 { return 1 / math.Sqrt(l) })
	return &KernelPCA{Kernel: kernel, X: x64, Eigenvalues: vals, alphas: vecs, colMean: colMean, allMean: allMean}, nil
}

// Transform projects the rows of x (m, d) onto the components: the centred
// kernel row k̃(x) times each eigenvector over √λ. For the training rows it
// gives √λ times the eigenvectors.
func (p *KernelPCA) Transform(x *tensor.Tensor) (*tensor.Tensor, error) {
	checkCols("pca.KernelPCA.Transform", x, p.X.Shape()[1])
	km, err := kernelMatrix(p.Kernel, x.Cast(tensor.Float64), p.X)
	if err != nil {
		return nil, fmt.Errorf("pca.KernelPCA.Transform: %w", err)
	}
	rowMean := tensor.Mean(km, []int{1}, false).Values()
	return tensor.MatMul(centreRows(km, rowMean, p.colMean, p.allMean), p.alphas), nil
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
