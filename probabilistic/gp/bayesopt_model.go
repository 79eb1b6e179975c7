package gp

import (
	"errors"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Surrogate is the fitted model an Acquisition reads: the GP posterior of
// the latent objective f over the unit cube (BayesOpt scales its box to
// [0, 1]^d), jointly at sets of points and as draws. Nodes returned are
// differentiable with respect to the points, so acquisitions built on them
// are maximised by L-BFGS with gradients from autodiff.
type Surrogate interface {
	// Dim returns the number of input dimensions d.
	Dim() int
	// Posterior returns the posterior mean and variance (m) of f at the
	// points u (m, d), a node of any graph.
	Posterior(u *graph.Node) (mean, variance *graph.Node, err error)
	// Covariance returns the posterior covariance of f(u) and f(v),
	// (m, k) for u (m, d) and v (k, d), nodes of one graph.
	Covariance(u, v *graph.Node) (*graph.Node, error)
	// Sample draws count joint posterior samples of f at u (m, d), shaped
	// (count, m).
	Sample(u *tensor.Tensor, count int, rng *tensor.RNG) (*tensor.Tensor, error)
	// Incumbent returns the best value so far: the largest posterior mean
	// at the observed points, which for noisy observations is less
	// optimistic than the largest observed y.
	Incumbent() float64
	// Observed returns the observed points (n, d), in the unit cube.
	Observed() *tensor.Tensor
	// GP returns the exact GP behind the surrogate, for acquisitions that
	// need its kernel (Thompson sampling's random features).
	GP() *Exact
}

// exactSurrogate is the Surrogate of an exact GP.
type exactSurrogate struct {
	m    *Exact
	best float64
}

// newSurrogate wraps m with its incumbent.
func newSurrogate(m *Exact) (*exactSurrogate, error) {
	g := graph.New()
	mean, _, err := m.Posterior(g.Const(m.X()))
	if err != nil {
		return nil, err
	}
	best := math.Inf(-1)
	for _, v := range mean.Value().Values() {
		best = math.Max(best, v)
	}
	return &exactSurrogate{m: m, best: best}, nil
}

func (s *exactSurrogate) Dim() int { return s.m.X().Shape()[1] }

func (s *exactSurrogate) Posterior(u *graph.Node) (mean, variance *graph.Node, err error) {
	return s.m.Posterior(u)
}

// Covariance is k(u, v) − k(u, X)(K + σ²I)⁻¹k(X, v), scaled back to y's
// units.
func (s *exactSurrogate) Covariance(u, v *graph.Node) (cov *graph.Node, err error) {
	defer tensor.Recover(&err)
	m := s.m
	if m.inference == CG {
		return nil, errors.New("gp: posterior covariances are not available with CG inference")
	}
	if err := m.checkTest(u.Shape(), u.DType()); err != nil {
		return nil, err
	}
	if err := m.checkTest(v.Shape(), v.DType()); err != nil {
		return nil, err
	}
	g := u.Graph()
	k, x := m.trainCov(g)
	l, _, err := m.cholesky(k, true)
	if err != nil {
		return nil, err
	}
	au := graph.TriSolve(l, m.kernel.K(x, u), true, false)
	av := graph.TriSolve(l, m.kernel.K(x, v), true, false)
	cov = graph.Sub(m.kernel.K(u, v), graph.MatMulT(au, av, true, false))
	return graph.MulScalar(cov, m.yStd*m.yStd), nil
}

func (s *exactSurrogate) Sample(u *tensor.Tensor, count int, rng *tensor.RNG) (*tensor.Tensor, error) {
	return s.m.SamplePosterior(u, count, rng)
}

func (s *exactSurrogate) Incumbent() float64 { return s.best }

func (s *exactSurrogate) Observed() *tensor.Tensor { return s.m.X() }

func (s *exactSurrogate) GP() *Exact { return s.m }
