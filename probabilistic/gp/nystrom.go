package gp

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Nystrom is the Nyström approximation of a kernel through m landmark
// points z (Williams & Seeger 2001):
//
//	K(x1, x2) ≈ K(x1, z) K(z, z)⁻¹ K(z, x2) = Φ(x1) Φ(x2)ᵀ,  Φ(x) = K(x, z) L⁻ᵀ,
//
// with L the Cholesky factor of K(z, z) (plus jitter when it is singular).
// The approximation is exact when the landmarks are the data points, and
// for landmarks drawn as growing nested subsets of the data its error
// tr(K − K̃) shrinks as m grows.
type Nystrom struct {
	kernel kernel.Kernel
	z      *tensor.Tensor // (m, d)
	l      *tensor.Tensor // lower Cholesky factor of K(z, z) + jitter·I
	jitter float64
}

// NewNystrom factors K(z, z) for the landmarks z (m, d). It tries without
// jitter first and escalates (see Jitter) if K(z, z) is not positive
// definite, returning a *CholeskyError when that fails. Bad shapes are
// returned as errors.
func NewNystrom(k kernel.Kernel, z *tensor.Tensor) (ny *Nystrom, err error) {
	defer tensor.Recover(&err)
	if k == nil || z == nil {
		return nil, errors.New("gp.NewNystrom: nil kernel or landmarks")
	}
	if z.Dim() != 2 || z.Shape()[0] == 0 {
		return nil, fmt.Errorf("gp.NewNystrom: landmarks must be a non-empty (m, d) matrix, got shape %v", z.Shape())
	}
	z = z.Contiguous()
	l, jitter, err := cholJitter(kernelMatrix(k, z, nil), true)
	if err != nil {
		return nil, err
	}
	return &Nystrom{kernel: k, z: z, l: l, jitter: jitter}, nil
}

// Jitter returns the jitter added to the diagonal of K(z, z) (0 when it
// factored without).
func (ny *Nystrom) Jitter() float64 { return ny.jitter }

// Landmarks returns z.
func (ny *Nystrom) Landmarks() *tensor.Tensor { return ny.z }

// Features returns Φ(x) = K(x, z) L⁻ᵀ, shaped (n, m), so that Φ Φᵀ is the
// approximate kernel matrix. It panics with a *tensor.Error if x does not
// match the landmarks' columns or dtype.
func (ny *Nystrom) Features(x *tensor.Tensor) *tensor.Tensor {
	kzx := kernelMatrix(ny.kernel, ny.z, x)                                       // (m, n)
	return tensor.Transpose(tensor.TriSolve(ny.l, kzx, true, false)).Contiguous() // (L⁻¹Kzx)ᵀ
}

// Approx returns the approximate kernel matrix K(x1, z) K(z, z)⁻¹ K(z, x2);
// x2 nil means x1.
func (ny *Nystrom) Approx(x1, x2 *tensor.Tensor) *tensor.Tensor {
	f1 := ny.Features(x1)
	f2 := f1
	if x2 != nil && x2 != x1 {
		f2 = ny.Features(x2)
	}
	return tensor.MatMulT(f1, f2, false, true)
}

// kernelMatrix evaluates k(a, b) as a tensor; b nil means K(a, a) (the
// same node twice, so kernels see exact zero distances on the diagonal).
func kernelMatrix(k kernel.Kernel, a, b *tensor.Tensor) *tensor.Tensor {
	g := graph.New()
	an := g.Const(a)
	bn := an
	if b != nil && b != a {
		bn = g.Const(b)
	}
	return k.K(an, bn).Value()
}

// kernelDiag evaluates diag k(a, a) as a tensor, shaped (n).
func kernelDiag(k kernel.Kernel, a *tensor.Tensor) *tensor.Tensor {
	g := graph.New()
	return k.Diag(g.Const(a)).Value()
}

// cholJitter factors a symmetric matrix, adding jitter to the diagonal if
// it is not positive definite: none first when zeroFirst is set, then
// 1e-10 times the mean diagonal, ×10 per try, up to 1e-4 of it. It returns
// a *CholeskyError when every try fails.
func cholJitter(a *tensor.Tensor, zeroFirst bool) (l *tensor.Tensor, jitter float64, err error) {
	n := a.Shape()[0]
	scale := 0.0
	for i := 0; i < n; i++ {
		scale += a.At(i, i)
	}
	scale = math.Max(scale/float64(n), 1e-300)
	var jitters []float64
	if zeroFirst {
		jitters = append(jitters, 0)
	}
	for j := 1e-10; j <= 1.0001e-4; j *= 10 {
		jitters = append(jitters, j*scale)
	}
	var npd *tensor.NotPositiveDefiniteError
	for _, jit := range jitters {
		ak := a
		if jit > 0 {
			ak = tensor.AddDiag(a, tensor.Scalar(a.DType(), jit))
		}
		l, err = tensor.Cholesky(ak)
		if err == nil {
			return l, jit, nil
		}
		if !errors.As(err, &npd) {
			return nil, jit, err
		}
		if math.IsNaN(npd.Value) {
			break
		}
		jitter = jit
	}
	return nil, jitter, &CholeskyError{N: n, Tries: len(jitters), Jitter: jitter, Err: npd}
}
