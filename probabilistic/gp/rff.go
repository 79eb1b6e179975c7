package gp

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// RFF is a random Fourier feature map for a stationary kernel (Rahimi &
// Recht 2007): by Bochner's theorem k(x − x') = σ² E_ω[cos(ωᵀ(x − x'))]
// for ω drawn from the kernel's normalised spectral density, so with D
// draws ω and phases b ~ U[0, 2π),
//
//	φ(x) = σ √(2/D) cos(ωᵀx + b),   φ(x)ᵀφ(x') ≈ k(x, x'),
//
// with an error that shrinks like 1/√D. The spectral density is a normal
// N(0, diag ℓ⁻²) for the RBF and a multivariate Student t with 2ν degrees
// of freedom and the same scale for the Matérn ν kernels (ν = ½, 3⁄2, 5⁄2).
type RFF struct {
	omega    *tensor.Tensor // (d, D) float64 frequencies
	phase    *tensor.Tensor // (1, D) float64 phases
	variance float64
}

// NewRFF draws numFeatures random features for the kernel k on inputs
// with d columns, with the current hyperparameter values (later changes
// to them do not affect the map). k must be an RBF or Matérn kernel
// (NewRBF, NewMatern12/32/52), optionally wrapped in NewScale; other
// kernels, bad sizes or a nil rng are errors.
func NewRFF(k kernel.Kernel, d, numFeatures int, rng *tensor.RNG) (*RFF, error) {
	if rng == nil {
		return nil, errors.New("gp.NewRFF: nil rng")
	}
	if d < 1 || numFeatures < 1 {
		return nil, fmt.Errorf("gp.NewRFF: need d ≥ 1 and numFeatures ≥ 1, got %d and %d", d, numFeatures)
	}
	variance := 1.0
	if s, ok := k.(*kernel.Scale); ok {
		variance = s.Variance().Value()
		k = s.Kernel()
	}
	st, ok := k.(*kernel.Stationary)
	if !ok {
		return nil, fmt.Errorf("gp.NewRFF: %T has no supported spectral density (want an RBF or Matérn kernel, optionally scaled)", k)
	}
	var dof int // 2ν for Matérn; 0 for the RBF
	switch st.Kind() {
	case kernel.KindRBF:
	case kernel.KindMatern12:
		dof = 1
	case kernel.KindMatern32:
		dof = 3
	case kernel.KindMatern52:
		dof = 5
	default:
		return nil, fmt.Errorf("gp.NewRFF: the %s kernel is not supported (want an RBF or Matérn kernel)", st.Kind())
	}
	ls := st.Lengthscale().Get()
	if len(ls) != 1 && len(ls) != d {
		return nil, fmt.Errorf("gp.NewRFF: %d lengthscales for %d input columns", len(ls), d)
	}
	omega := make([]float64, d*numFeatures)
	phase := make([]float64, numFeatures)
	for j := 0; j < numFeatures; j++ {
		scale := 1.0
		if dof > 0 {
			// ω = z·√(2ν/u), u ~ χ²(2ν): a multivariate t shares u over
			// the dimensions.
			u := 0.0
			for i := 0; i < dof; i++ {
				z := rng.NormFloat64()
				u += z * z
			}
			scale = math.Sqrt(float64(dof) / u)
		}
		for i := 0; i < d; i++ {
			l := ls[0]
			if len(ls) > 1 {
				l = ls[i]
			}
			omega[i*numFeatures+j] = rng.NormFloat64() * scale / l
		}
		phase[j] = 2 * math.Pi * rng.Float64()
	}
	return &RFF{
		omega:    tensor.FromFloat64s(omega, d, numFeatures),
		phase:    tensor.FromFloat64s(phase, 1, numFeatures),
		variance: variance,
	}, nil
}

// NumFeatures returns D.
func (r *RFF) NumFeatures() int { return r.omega.Shape()[1] }

// Frequencies returns the frequencies ω, one column per feature (d, D).
func (r *RFF) Frequencies() *tensor.Tensor { return r.omega }

// FeaturesNode returns φ(x) for x (n, d) as an (n, D) node of x's graph
// and dtype, differentiable with respect to x. It panics with a
// *tensor.Error if x has the wrong number of columns.
func (r *RFF) FeaturesNode(x *graph.Node) *graph.Node {
	d, nf := r.omega.Shape()[0], r.omega.Shape()[1]
	if x.Dim() != 2 || x.Shape()[1] != d {
		tensor.Fail("gp.RFF.Features", "inputs must be an (n, %d) matrix, got %v", d, x.Shape())
	}
	g, dt := x.Graph(), x.DType()
	proj := graph.Add(graph.MatMul(x, g.Const(r.omega.Cast(dt))), g.Const(r.phase.Cast(dt)))
	return graph.MulScalar(graph.Cos(proj), math.Sqrt(2*r.variance/float64(nf)))
}

// Features returns φ(x) for x (n, d) as an (n, D) tensor of x's dtype.
// It panics with a *tensor.Error if x has the wrong number of columns.
func (r *RFF) Features(x *tensor.Tensor) *tensor.Tensor {
	g := graph.New()
	return r.FeaturesNode(g.Const(x)).Value()
}

// Kernel returns the approximate kernel matrix φ(x1)φ(x2)ᵀ; x2 nil means
// x1.
func (r *RFF) Kernel(x1, x2 *tensor.Tensor) *tensor.Tensor {
	f1 := r.Features(x1)
	f2 := f1
	if x2 != nil && x2 != x1 {
		f2 = r.Features(x2)
	}
	return tensor.MatMulT(f1, f2, false, true)
}

// RFFRegression is Bayesian linear regression on random Fourier
// features, y = φ(x)ᵀw + ε with w ~ N(0, I) and ε ~ N(0, σ²): a GP with
// the approximate kernel φ(x)ᵀφ(x') whose cost is O(nD²) instead of
// O(n³). It works in float64.
type RFFRegression struct {
	rff   *RFF
	noise float64
	la    *tensor.Tensor // Cholesky factor of A = ΦᵀΦ/σ² + I (D, D)
	mean  *tensor.Tensor // posterior mean of w, A⁻¹Φᵀy/σ² (D, 1)
	lml   float64
}

// NewRFFRegression computes the posterior over the weights given inputs x
// (n, d), targets y (n) or (n, 1) and the noise variance σ² > 0. It
// returns an error for bad shapes or a non-positive noise.
func NewRFFRegression(r *RFF, x, y *tensor.Tensor, noise float64) (m *RFFRegression, err error) {
	defer tensor.Recover(&err)
	if r == nil || x == nil || y == nil {
		return nil, errors.New("gp.NewRFFRegression: nil features, x or y")
	}
	if !(noise > 0) {
		return nil, fmt.Errorf("gp.NewRFFRegression: noise variance %g must be positive", noise)
	}
	if x.Dim() != 2 || y.Size() != x.Shape()[0] {
		return nil, fmt.Errorf("gp.NewRFFRegression: want x (n, d) and y (n), got %v and %v", x.Shape(), y.Shape())
	}
	n := x.Shape()[0]
	phi := r.Features(tensor.FromFloat64s(x.Values(), x.Shape()...)) // (n, D)
	yv := tensor.FromFloat64s(y.Values(), n, 1)
	a := tensor.AddDiag(tensor.MulScalar(tensor.MatMulT(phi, phi, true, false), 1/noise), tensor.Scalar(tensor.Float64, 1))
	la, err := tensor.Cholesky(a)
	if err != nil {
		return nil, err
	}
	pty := tensor.MatMulT(phi, yv, true, false) // Φᵀy (D, 1)
	mean := tensor.MulScalar(tensor.CholeskySolve(la, pty), 1/noise)
	// log N(y | 0, ΦΦᵀ + σ²I) by the matrix determinant lemma and
	// Woodbury: |ΦΦᵀ + σ²I| = |A| σ^(2n), yᵀ(ΦΦᵀ + σ²I)⁻¹y = (yᵀy − yᵀΦ A⁻¹Φᵀy/σ²)/σ².
	yy := tensor.Sum(tensor.Square(yv), nil, false).Item()
	v := tensor.TriSolve(la, pty, true, false)
	quad := (yy - tensor.Sum(tensor.Square(v), nil, false).Item()/noise) / noise
	logdet := tensor.LogDetChol(la).Item() + float64(n)*math.Log(noise)
	lml := -0.5*quad - 0.5*logdet - 0.5*float64(n)*math.Log(2*math.Pi)
	return &RFFRegression{rff: r, noise: noise, la: la, mean: mean, lml: lml}, nil
}

// Weights returns the posterior mean of the weights (D).
func (m *RFFRegression) Weights() []float64 { return m.mean.Values() }

// LogMarginalLikelihood returns log N(y | 0, ΦΦᵀ + σ²I).
func (m *RFFRegression) LogMarginalLikelihood() float64 { return m.lml }

// Predict returns the predictive mean φ(x*)ᵀw̄ and variances φ(x*)ᵀA⁻¹φ(x*)
// (plus σ² for NoisyVar) at xs (m, d). The weights' posterior is factored
// at construction, so prediction cannot fail on data; inputs that are not
// a matrix with the features' columns panic with a *tensor.Error.
func (m *RFFRegression) Predict(xs *tensor.Tensor) *Prediction {
	if xs == nil || xs.Dim() != 2 {
		tensor.Fail("gp.RFFRegression.Predict", "inputs must be an (m, d) matrix, got %v", xs)
	}
	phi := m.rff.Features(tensor.FromFloat64s(xs.Values(), xs.Shape()...)) // (m, D)
	mean := tensor.Reshape(tensor.MatMul(phi, m.mean), xs.Shape()[0])
	v := tensor.TriSolve(m.la, tensor.Transpose(phi), true, false)
	variance := tensor.Sum(tensor.Square(v), []int{0}, false)
	return &Prediction{Mean: mean, Var: variance, NoisyVar: tensor.AddScalar(variance, m.noise)}
}
