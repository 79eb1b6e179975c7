package gp

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Prediction is the posterior predictive distribution at test inputs, in
// the units of the original y. A White term of the kernel counts as part of
// the latent covariance at the test inputs (Var), as in scikit-learn; the
// model's own noise σ² is added only to NoisyVar.
type Prediction struct {
	Mean     *tensor.Tensor // (m) posterior mean
	Var      *tensor.Tensor // (m) variance of the latent function f
	NoisyVar *tensor.Tensor // (m) variance of a new observation: Var + σ²
}

// Posterior returns the posterior mean and latent variance at the inputs
// xs (m, d), a node of any graph, in the units of the original y:
//
//	mean = μ + k(xs, X) (K + σ²I)⁻¹ (y − μ)
//	var  = diag k(xs, xs) − diag k(xs, X) (K + σ²I)⁻¹ k(X, xs)
//
// both shaped (m) and differentiable with respect to xs and the
// hyperparameters (Bayesian optimisation differentiates acquisitions
// through them). It returns an error when the training covariance cannot be
// factored even with jitter.
func (m *Exact) Posterior(xs *graph.Node) (mean, variance *graph.Node, err error) {
	defer tensor.Recover(&err)
	g := xs.Graph()
	if err := m.checkTest(xs.Shape(), xs.DType()); err != nil {
		return nil, nil, err
	}
	if m.inference == CG {
		return nil, nil, errors.New("gp.Posterior: not available with CG inference; use Predict")
	}
	mean, variance, _, err = m.posterior(g, xs, false)
	return mean, variance, err
}

// posterior computes the mean and latent variance at xs, and with full set
// the latent covariance (m, m), on the original scale.
func (m *Exact) posterior(g *graph.Graph, xs *graph.Node, full bool) (mean, variance, cov *graph.Node, err error) {
	k, x := m.trainCov(g)
	l, _, err := m.cholesky(k, true)
	if err != nil {
		return nil, nil, nil, err
	}
	ms := xs.Shape()[0]
	a := graph.TriSolve(l, m.residual(g), true, false) // L⁻¹(y − μ)  (n, 1)
	v := graph.TriSolve(l, m.kernel.K(x, xs), true, false)
	mean = graph.Reshape(graph.MatMulT(v, a, true, false), ms) // vᵀa = k(xs, X)K⁻¹(y − μ)
	if m.mean != nil {
		mean = graph.Add(mean, m.mean.Node(g))
	}
	if m.meanFn != nil {
		mean = graph.Add(mean, m.meanFn.Mean(xs))
	}
	mean = graph.AddScalar(graph.MulScalar(mean, m.yStd), m.yMean)
	s2 := m.yStd * m.yStd
	variance = graph.Sub(m.kernel.Diag(xs), graph.Sum(graph.Square(v), []int{0}, false))
	variance = graph.MulScalar(graph.Clamp(variance, 0, math.Inf(1)), s2)
	if full {
		cov = graph.Sub(m.kernel.K(xs, xs), graph.MatMulT(v, v, true, false))
		cov = graph.MulScalar(cov, s2)
	}
	return mean, variance, cov, nil
}

// checkTest validates test inputs against the training inputs.
func (m *Exact) checkTest(shape []int, dt tensor.DType) error {
	d := m.x.Shape()[1]
	if len(shape) != 2 || shape[1] != d {
		return fmt.Errorf("gp: test inputs must be an (m, %d) matrix, got shape %v", d, shape)
	}
	if dt != m.x.DType() {
		return fmt.Errorf("gp: test inputs are %v but the training inputs are %v", dt, m.x.DType())
	}
	return nil
}

// Predict returns the posterior predictive mean and variances at xs
// (m, d), in the units of the original y. It returns an error for inputs
// of the wrong shape or dtype, or when the training covariance cannot be
// factored even with jitter. With CG inference the mean takes one solve and
// the variances batched solves of the test points' kernel columns (use
// PredictMean for large test sets).
func (m *Exact) Predict(xs *tensor.Tensor) (pred *Prediction, err error) {
	defer tensor.Recover(&err)
	if xs == nil {
		return nil, errors.New("gp.Predict: nil inputs")
	}
	if err := m.checkTest(xs.Shape(), xs.DType()); err != nil {
		return nil, err
	}
	if m.inference == CG {
		return m.cgPredict(xs, true)
	}
	g := graph.New()
	mean, variance, _, err := m.posterior(g, g.Const(xs), false)
	if err != nil {
		return nil, err
	}
	pred = &Prediction{Mean: mean.Value().Clone(), Var: variance.Value().Clone()}
	noise := 0.0
	if m.noise != nil {
		noise = m.noise.Value() * m.yStd * m.yStd
	}
	pred.NoisyVar = tensor.AddScalar(pred.Var, noise)
	return pred, nil
}

// SamplePosterior draws count joint samples of the latent function at xs
// (m, d) from the posterior, shaped (count, m), in the units of the
// original y: mean + Lε with L the Cholesky factor of the posterior
// covariance plus jitter (starting at 1e-8, or 1e-5 in float32, and grown
// as needed) and ε standard normal from rng. It returns an error for bad
// inputs or when a covariance cannot be factored.
func (m *Exact) SamplePosterior(xs *tensor.Tensor, count int, rng *tensor.RNG) (s *tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	if xs == nil || rng == nil {
		return nil, errors.New("gp.SamplePosterior: nil inputs or RNG")
	}
	if count < 1 {
		return nil, fmt.Errorf("gp.SamplePosterior: count %d < 1", count)
	}
	if err := m.checkTest(xs.Shape(), xs.DType()); err != nil {
		return nil, err
	}
	if m.inference == CG {
		return nil, errors.New("gp.SamplePosterior: not available with CG inference")
	}
	g := graph.New()
	xn := g.Const(xs)
	mean, _, cov, err := m.posterior(g, xn, true)
	if err != nil {
		return nil, err
	}
	// Symmetrise against rounding, then factor with jitter from the start:
	// a posterior covariance is often numerically singular.
	cov = graph.MulScalar(graph.Add(cov, graph.Transpose(cov)), 0.5)
	scale := m.yStd * m.yStd
	lc, _, err := m.choleskyScaled(cov, scale)
	if err != nil {
		return nil, err
	}
	ms := xs.Shape()[0]
	eps := g.Const(rng.Normal(xs.DType(), 0, 1, ms, count))
	out := graph.Add(graph.Transpose(graph.MatMul(lc, eps)), graph.Reshape(mean, 1, ms))
	return out.Value().Clone(), nil
}

// choleskyScaled factors a covariance given in units of scale (y's
// variance) with jitter relative to that scale, so the jitter means the
// same thing with and without normalisation.
func (m *Exact) choleskyScaled(cov *graph.Node, scale float64) (*graph.Node, float64, error) {
	l, j, err := m.cholesky(graph.MulScalar(cov, 1/scale), false)
	if err != nil {
		return nil, j, err
	}
	return graph.MulScalar(l, math.Sqrt(scale)), j, nil
}

// PredictMean returns the posterior predictive mean at xs (m, d) in the
// units of the original y, without variances: with CG inference one solve
// and one cross-kernel product in row blocks, so it suits large test sets.
func (m *Exact) PredictMean(xs *tensor.Tensor) (mean *tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	if xs == nil {
		return nil, errors.New("gp.PredictMean: nil inputs")
	}
	if err := m.checkTest(xs.Shape(), xs.DType()); err != nil {
		return nil, err
	}
	if m.inference == CG {
		p, err := m.cgPredict(xs, false)
		if err != nil {
			return nil, err
		}
		return p.Mean, nil
	}
	p, err := m.Predict(xs)
	if err != nil {
		return nil, err
	}
	return p.Mean, nil
}
