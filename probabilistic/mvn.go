package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// MultivariateNormal is a batch of d-dimensional normal distributions
// N(Loc, L·Lᵀ) given by the lower-triangular Cholesky factor L of the
// covariance (the scale_tril of PyTorch and TensorFlow Probability), so
// densities, samples and KLs need triangular solves only.
type MultivariateNormal struct {
	Loc       *graph.Node // (batch..., d)
	ScaleTril *graph.Node // (batch..., d, d), lower triangular with a positive diagonal
	batch     []int
	d         int
}

// NewMVNFromScaleTril returns N(loc, L·Lᵀ) for loc (..., d) and the lower
// Cholesky factor scaleTril (..., d, d); only its lower triangle is used.
// The batch shapes of the two broadcast. It panics if the shapes do not fit,
// and if scaleTril is a constant whose diagonal is not positive.
func NewMVNFromScaleTril(loc, scaleTril *graph.Node) *MultivariateNormal {
	const op = "probabilistic.MultivariateNormal"
	checkParams(op, loc, scaleTril)
	ls, ss := loc.Shape(), scaleTril.Shape()
	if len(ls) == 0 || len(ss) < 2 || ss[len(ss)-1] != ss[len(ss)-2] || ss[len(ss)-1] != ls[len(ls)-1] {
		tensor.Fail(op, "loc and scale_tril %s do not fit: want (..., d) and (..., d, d)", graph.Describe(loc, scaleTril))
	}
	d := ls[len(ls)-1]
	if scaleTril.IsConst() {
		v := scaleTril.Value().Values()
		for i := 0; i < len(v); i += d * d {
			for j := 0; j < d; j++ {
				if !(v[i+j*d+j] > 0) {
					tensor.Fail(op, "scale_tril %s has the diagonal entry %g: want a positive diagonal", graph.Describe(scaleTril), v[i+j*d+j])
				}
			}
		}
	}
	batch := batchOf(op, ls[:len(ls)-1], ss[:len(ss)-2])
	return &MultivariateNormal{Loc: loc, ScaleTril: graph.Tril(scaleTril), batch: batch, d: d}
}

// NewMVNFromCovariance returns N(loc, cov), factorising the symmetric
// positive definite cov (..., d, d) with graph.Cholesky, so derivatives flow
// to cov. It returns an error wrapping tensor.ErrNotPositiveDefinite when a
// covariance is not positive definite, and panics if the shapes do not fit.
func NewMVNFromCovariance(loc, cov *graph.Node) (d *MultivariateNormal, err error) {
	const op = "probabilistic.MultivariateNormal"
	checkParams(op, loc, cov)
	ls, cs := loc.Shape(), cov.Shape()
	if len(ls) == 0 || len(cs) < 2 || cs[len(cs)-1] != cs[len(cs)-2] || cs[len(cs)-1] != ls[len(ls)-1] {
		tensor.Fail(op, "loc and covariance %s do not fit: want (..., d) and (..., d, d)", graph.Describe(loc, cov))
	}
	l, err := cholesky(cov)
	if err != nil {
		return nil, err
	}
	return NewMVNFromScaleTril(loc, l), nil
}

// cholesky factorises, turning the data error of a matrix that is not
// positive definite into an error value; misuse still panics.
func cholesky(a *graph.Node) (l *graph.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			if de, ok := r.(*graph.DataError); ok {
				err = de
				return
			}
			panic(r)
		}
	}()
	return graph.Cholesky(a), nil
}

// NewMVNDiag returns N(loc, diag(scaleDiag²)) for loc (..., d) and the
// standard deviations scaleDiag (..., d): the same distribution as
// independent Normals, but with event shape (d). It panics if the shapes do
// not fit or scaleDiag is a constant with a non-positive entry.
func NewMVNDiag(loc, scaleDiag *graph.Node) *MultivariateNormal {
	const op = "probabilistic.MultivariateNormal"
	checkParams(op, loc, scaleDiag)
	ls, ss := loc.Shape(), scaleDiag.Shape()
	if len(ls) == 0 || len(ss) == 0 || ls[len(ls)-1] != ss[len(ss)-1] {
		tensor.Fail(op, "loc and scale_diag %s do not fit: want (..., d) and (..., d)", graph.Describe(loc, scaleDiag))
	}
	checkConst(op, "scale_diag", scaleDiag, positive, "scale_diag > 0")
	d := ls[len(ls)-1]
	eye := scaleDiag.Graph().Const(tensor.Eye(scaleDiag.DType(), d))
	return NewMVNFromScaleTril(loc, graph.Mul(graph.Unsqueeze(scaleDiag, -1), eye))
}

// BatchShape returns the broadcast batch shape of Loc and ScaleTril.
func (d *MultivariateNormal) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns (d).
func (d *MultivariateNormal) EventShape() []int { return []int{d.d} }

// Dim returns the dimension d of the event.
func (d *MultivariateNormal) Dim() int { return d.d }

// Covariance returns L·Lᵀ, shaped (batch of L..., d, d).
func (d *MultivariateNormal) Covariance() *graph.Node {
	return graph.MatMulT(d.ScaleTril, d.ScaleTril, false, true)
}

// halfLogDet returns ½ log det Σ = Σᵢ log Lᵢᵢ.
func (d *MultivariateNormal) halfLogDet() *graph.Node {
	return graph.MulScalar(graph.LogDetChol(d.ScaleTril), 0.5)
}

// LogProb returns −½‖L⁻¹(x − μ)‖² − Σᵢ log Lᵢᵢ − (d/2) log 2π for x of
// shape (..., d).
func (d *MultivariateNormal) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.MultivariateNormal.LogProb", x, d.Loc, d.batch, []int{d.d})
	diff := graph.Unsqueeze(graph.Sub(x, d.Loc), -1)
	z := graph.TriSolve(d.ScaleTril, diff, true, false)
	maha := graph.Sum(graph.Square(z), []int{-2, -1}, false)
	lp := graph.Add(graph.MulScalar(maha, 0.5), d.halfLogDet())
	return graph.Neg(graph.AddScalar(lp, 0.5*float64(d.d)*log2Pi))
}

// Entropy returns (d/2)(1 + log 2π) + ½ log det Σ.
func (d *MultivariateNormal) Entropy() *graph.Node {
	h := graph.AddScalar(d.halfLogDet(), 0.5*float64(d.d)*(1+log2Pi))
	return graph.BroadcastTo(h, d.batch...)
}

// Mean returns μ broadcast to (batch..., d).
func (d *MultivariateNormal) Mean() *graph.Node {
	return graph.BroadcastTo(d.Loc, concatShape(d.batch, []int{d.d})...)
}

// Variance returns the diagonal of Σ, Σⱼ Lᵢⱼ², shaped (batch..., d).
func (d *MultivariateNormal) Variance() *graph.Node {
	v := graph.Sum(graph.Square(d.ScaleTril), []int{-1}, false)
	return graph.BroadcastTo(v, concatShape(d.batch, []int{d.d})...)
}

// Sample draws μ + L·ε with ε ~ N(0, I), without gradient.
func (d *MultivariateNormal) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	eps := rng.Normal(d.Loc.DType(), 0, 1, sampleShape("probabilistic.MultivariateNormal.Sample", n, d.batch, []int{d.d})...)
	le := tensor.Squeeze(tensor.MatMul(hostValue(d.ScaleTril), tensor.Unsqueeze(eps, -1)), -1)
	return tensor.Add(hostValue(d.Loc), le)
}

// RSample returns the node μ + L·ε with ε ~ N(0, I) a constant,
// differentiable with respect to μ and L (or the covariance it came from).
func (d *MultivariateNormal) RSample(rng *tensor.RNG, n int) *graph.Node {
	eps := rng.Normal(d.Loc.DType(), 0, 1, sampleShape("probabilistic.MultivariateNormal.RSample", n, d.batch, []int{d.d})...)
	e := d.Loc.Graph().Const(tensor.Unsqueeze(eps, -1))
	return graph.Add(d.Loc, graph.Squeeze(graph.MatMul(d.ScaleTril, e), -1))
}
