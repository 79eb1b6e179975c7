package gp

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// LOVEOptions configures Exact.LOVE.
type LOVEOptions struct {
	// Rank is the number of Lanczos iterations k, the rank of the
	// approximation of (K + σ²I)⁻¹ and of the predictive covariance's
	// root for sampling; zero means min(n, 100) (GPyTorch's default).
	Rank int
}

// LOVE is the cache of Lanczos variance estimates (Pleiss, Gardner,
// Weinberger and Wilson 2018, Constant-time predictive distributions for
// Gaussian processes): one Lanczos decomposition Q T Qᵀ of K + σ²I, started
// at y − μ, gives (K + σ²I)⁻¹ ≈ R Rᵀ with R = Q L_T⁻ᵀ (n, k), after which a
// predictive variance costs O(nk) instead of a triangular solve's O(n²),
// and the predictive mean is k(xs, X) R Rᵀ (y − μ). Lanczos runs with full
// reorthogonalisation and stops early when the Krylov space is exhausted.
// It is a snapshot: later changes to the model's hyperparameters are not
// seen.
type LOVE struct {
	m     *Exact
	rt    *tensor.Tensor // (k, n) Rᵀ = L_T⁻¹ Qᵀ
	alpha *tensor.Tensor // (n, 1) R Rᵀ (y − μ)
	op    *kernelOp      // the matrix-free kernel of a CG model, else nil
	r     []float64      // with op: R (n, k) row-major
}

// LOVE builds the LOVE cache of a model at its current hyperparameters.
// With Cholesky inference the Lanczos products use the dense K + σ²I; with
// CG inference they use the same matrix-free tiles as CG (O(n) memory),
// and Predict then costs k kernel rows per test point instead of CG's
// batched solves (SamplePosterior needs Cholesky inference). It returns an
// error for a negative Rank, a model without noise, or a covariance
// Lanczos finds not positive definite.
func (m *Exact) LOVE(opts LOVEOptions) (c *LOVE, err error) {
	defer tensor.Recover(&err)
	const op = "gp.Exact.LOVE"
	if opts.Rank < 0 {
		return nil, fmt.Errorf("%s: negative Rank %d", op, opts.Rank)
	}
	if m.noise == nil {
		return nil, errors.New(op + ": needs observation noise")
	}
	n := m.N()
	k := opts.Rank
	if k == 0 {
		k = 100
	}
	k = min(k, n)
	dt := m.x.DType()
	c = &LOVE{m: m}
	var mvm func([]float64) []float64
	var res []float64
	if m.inference == CG {
		if c.op, _, err = m.cgOperator(op); err != nil {
			return nil, err
		}
		c.op.part = nil // every process keeps the whole cache
		mvm = func(v []float64) []float64 {
			out := make([]float64, n)
			c.op.MatMul(out, v, 1)
			return out
		}
		res = m.y.Values()
		if m.mean != nil {
			mu := m.mean.Value()
			for i := range res {
				res[i] -= mu
			}
		}
	} else {
		g := graph.New()
		kh, _ := m.trainCov(g)
		mvm = denseMVM(kh.Value().Values(), n)
		res = m.residual(g).Value().Values()
	}
	start := res
	if norm(start) == 0 {
		start = repeat(1, n)
	}
	q, alpha, beta := lanczos(mvm, start, k, dt)
	lt, err := tensor.Cholesky(tridiag(alpha, beta, dt))
	if err != nil {
		return nil, fmt.Errorf("%s: the Lanczos tridiagonal matrix is not positive definite: %w", op, err)
	}
	c.rt = tensor.TriSolve(lt, tensor.Transpose(q).Contiguous(), true, false)
	c.alpha = tensor.MatMulT(c.rt, tensor.MatMul(c.rt, tensor.FromValues(dt, res, n, 1)), true, false)
	if c.op != nil {
		c.r = tensor.Transpose(c.rt).Contiguous().Values()
	}
	return c, nil
}

// Rank returns the number of Lanczos iterations kept.
func (c *LOVE) Rank() int { return c.rt.Shape()[0] }

// posterior returns the mean (m), the latent variance (m) and, with full,
// the latent covariance (m, m) at xs on the model's (normalised) scale,
// and S = Rᵀ k(X, xs) (k, m).
func (c *LOVE) posterior(g *graph.Graph, xs *graph.Node) (mean, variance, s *graph.Node) {
	m := c.m
	kx := m.kernel.K(g.Const(m.x), xs) // (n, m)
	ms := xs.Shape()[0]
	mean = graph.Reshape(graph.MatMulT(kx, g.Const(c.alpha), true, false), ms)
	if m.mean != nil {
		mean = graph.Add(mean, m.mean.Node(g))
	}
	if m.meanFn != nil {
		mean = graph.Add(mean, m.meanFn.Mean(xs))
	}
	s = graph.MatMul(g.Const(c.rt), kx)
	variance = graph.Clamp(graph.Sub(m.kernel.Diag(xs), graph.Sum(graph.Square(s), []int{0}, false)), 0, math.Inf(1))
	return mean, variance, s
}

// Predict returns the posterior predictive mean and variances at xs
// (m, d) from the cache, in the units of the original y, as Exact.Predict
// does exactly. It returns an error for inputs of the wrong shape or dtype.
func (c *LOVE) Predict(xs *tensor.Tensor) (pred *Prediction, err error) {
	defer tensor.Recover(&err)
	m := c.m
	if xs == nil {
		return nil, errors.New("gp.LOVE.Predict: nil inputs")
	}
	if err := m.checkTest(xs.Shape(), xs.DType()); err != nil {
		return nil, err
	}
	if c.op != nil {
		return c.predictCG(xs), nil
	}
	g := graph.New()
	mean, variance, _ := c.posterior(g, g.Const(xs))
	s2 := m.yStd * m.yStd
	pred = &Prediction{
		Mean: tensor.AddScalar(tensor.MulScalar(mean.Value(), m.yStd), m.yMean),
		Var:  tensor.MulScalar(variance.Value(), s2),
	}
	pred.NoisyVar = tensor.AddScalar(pred.Var, m.noise.Value()*s2)
	return pred, nil
}

// predictCG is Predict for a CG model: the cross-kernel products K(xs, X)·R
// and K(xs, X)·α come from the operator's tiles, in blocks of test rows.
func (c *LOVE) predictCG(xs *tensor.Tensor) *Prediction {
	m, k := c.m, c.op
	ms, rank := xs.Shape()[0], c.Rank()
	xt := k.scaleInputs(xs.Values())
	mean := k.crossMatMul(xt, ms, c.alpha.Values(), 1)
	kr := k.crossMatMul(xt, ms, c.r, rank) // (m, k)
	mu := 0.0
	if m.mean != nil {
		mu = m.mean.Value()
	}
	s2 := m.yStd * m.yStd
	v := make([]float64, ms)
	for i := range ms {
		row := kr[i*rank : (i+1)*rank]
		v[i] = math.Max(k.scale-dot(row, row), 0) * s2
		mean[i] = (mean[i]+mu)*m.yStd + m.yMean
	}
	dt := m.x.DType()
	pred := &Prediction{Mean: tensor.FromValues(dt, mean, ms), Var: tensor.FromValues(dt, v, ms)}
	pred.NoisyVar = tensor.AddScalar(pred.Var, k.noise*s2)
	return pred
}

// SamplePosterior draws count joint samples of the latent function at xs
// (m, d), shaped (count, m), in the units of the original y: mean + Pε,
// where P P ᵀ approximates the predictive covariance
// k(xs, xs) − Sᵀ S (S = Rᵀ k(X, xs)) by a second Lanczos decomposition of
// rank min(m, Rank) that uses only products with it (Pleiss et al. 2018,
// §4), and ε is standard normal from rng. It returns an error for bad
// inputs.
func (c *LOVE) SamplePosterior(xs *tensor.Tensor, count int, rng *tensor.RNG) (out *tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	m := c.m
	if xs == nil || rng == nil {
		return nil, errors.New("gp.LOVE.SamplePosterior: nil inputs or RNG")
	}
	if count < 1 {
		return nil, fmt.Errorf("gp.LOVE.SamplePosterior: count %d < 1", count)
	}
	if err := m.checkTest(xs.Shape(), xs.DType()); err != nil {
		return nil, err
	}
	if c.op != nil {
		return nil, errors.New("gp.LOVE.SamplePosterior: needs a model with Cholesky inference")
	}
	g := graph.New()
	xn := g.Const(xs)
	mean, _, s := c.posterior(g, xn)
	ms := xs.Shape()[0]
	kss := denseMVM(m.kernel.K(xn, xn).Value().Values(), ms)
	sv := s.Value().Values()
	mvm := func(v []float64) []float64 { // k(xs, xs)v − Sᵀ(Sv)
		out := kss(v)
		for r := 0; r < len(sv)/ms; r++ {
			row := sv[r*ms : (r+1)*ms]
			axpy(-dot(row, v), row, out)
		}
		return out
	}
	root := lanczosRoot(mvm, ms, min(ms, c.Rank()), rng, xs.DType())
	eps := rng.Normal(xs.DType(), 0, 1, root.Shape()[1], count)
	draws := tensor.Transpose(tensor.MatMul(root, eps)).Contiguous() // (count, m)
	draws = tensor.Add(draws, tensor.Reshape(mean.Value(), 1, ms))
	return tensor.AddScalar(tensor.MulScalar(draws, m.yStd), m.yMean), nil
}

// lanczosRoot returns P (n, k') with P Pᵀ ≈ A for the symmetric positive
// semi-definite A given by its products, from a Lanczos decomposition
// Q T Qᵀ started at a random vector: P = Q V diag(√max(λ, 0)) with
// T = V diag(λ) Vᵀ.
func lanczosRoot(mvm func([]float64) []float64, n, k int, rng *tensor.RNG, dt tensor.DType) *tensor.Tensor {
	start := make([]float64, n)
	for i := range start {
		start[i] = rng.NormFloat64()
	}
	q, alpha, beta := lanczos(mvm, start, k, dt)
	w, v, err := tensor.Eigh(tridiag(alpha, beta, dt))
	if err != nil {
		tensor.Fail("gp.LOVE", "eigendecomposition of the Lanczos matrix failed: %v", err)
	}
	wv := w.Values()
	for i := range wv {
		wv[i] = math.Sqrt(math.Max(wv[i], 0))
	}
	return tensor.MatMul(q, tensor.Mul(v, tensor.FromValues(dt, wv, 1, len(wv))))
}

// lanczos runs up to k steps of the Lanczos process with full
// reorthogonalisation on the symmetric matrix given by mvm (on length-n
// vectors), from start. It returns Q (n, k') with orthonormal columns and
// the diagonal alpha (k') and off-diagonal beta (k'−1) of T = QᵀAQ; k' < k
// when the Krylov space is exhausted.
func lanczos(mvm func([]float64) []float64, start []float64, k int, dt tensor.DType) (q *tensor.Tensor, alpha, beta []float64) {
	n := len(start)
	qs := [][]float64{scaled(start, 1/norm(start))}
	var scale float64
	for j := 0; j < k; j++ {
		w := mvm(qs[j])
		a := dot(w, qs[j])
		alpha = append(alpha, a)
		scale = math.Max(scale, math.Abs(a))
		for pass := 0; pass < 2; pass++ { // twice is enough (Parlett 1998)
			for _, qi := range qs {
				axpy(-dot(w, qi), qi, w)
			}
		}
		b := norm(w)
		if j == k-1 || b <= 1e-12*scale {
			break
		}
		beta = append(beta, b)
		qs = append(qs, scaled(w, 1/b))
	}
	flat := make([]float64, n*len(qs))
	for j, col := range qs {
		for i, v := range col {
			flat[i*len(qs)+j] = v
		}
	}
	return tensor.FromValues(dt, flat, n, len(qs)), alpha, beta
}

// denseMVM returns the product with the row-major n×n matrix a, in plain
// loops: Lanczos multiplies by one vector at a time, where a GEMM call
// would repack the matrix on every step.
func denseMVM(a []float64, n int) func([]float64) []float64 {
	return func(v []float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = dot(a[i*n:(i+1)*n], v)
		}
		return out
	}
}

// tridiag returns the symmetric tridiagonal matrix with diagonal a and
// off-diagonal b.
func tridiag(a, b []float64, dt tensor.DType) *tensor.Tensor {
	k := len(a)
	t := make([]float64, k*k)
	for i := range a {
		t[i*k+i] = a[i]
		if i+1 < k {
			t[i*k+i+1], t[(i+1)*k+i] = b[i], b[i]
		}
	}
	return tensor.FromValues(dt, t, k, k)
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }

func axpy(s float64, x, y []float64) {
	for i := range x {
		y[i] += s * x[i]
	}
}

func scaled(a []float64, s float64) []float64 {
	out := make([]float64, len(a))
	for i, v := range a {
		out[i] = v * s
	}
	return out
}

// SamplePrior draws count joint samples of y's latent function at xs
// (m, d) from the GP prior with kernel k and mean function mean (nil: the
// zero mean), shaped (count, m): mean(xs) + Lε with L the Cholesky factor
// of k(xs, xs), plus jitter relative to its average diagonal (starting at
// 1e-8, or 1e-5 in float32) when it is numerically singular, as smooth
// kernels' matrices are. The hyperparameters must be in xs's dtype (a
// model's are). It returns an error for bad inputs or a covariance that
// cannot be factored.
func SamplePrior(k kernel.Kernel, mean MeanFunc, xs *tensor.Tensor, count int, rng *tensor.RNG) (s *tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	if k == nil || xs == nil || rng == nil {
		return nil, errors.New("gp.SamplePrior: nil kernel, inputs or RNG")
	}
	if count < 1 {
		return nil, fmt.Errorf("gp.SamplePrior: count %d < 1", count)
	}
	if xs.Dim() != 2 || xs.Shape()[0] == 0 {
		return nil, fmt.Errorf("gp.SamplePrior: inputs must be an (m, d) matrix, got shape %v", xs.Shape())
	}
	g := graph.New()
	xn := g.Const(xs)
	kx := k.K(xn, xn)
	ms := xs.Shape()[0]
	scale := graph.Mean(graph.Diagonal(kx), nil, false).Item()
	if !(scale > 0) {
		scale = 1
	}
	l, err := choleskyJitter(graph.MulScalar(kx, 1/scale), nil)
	if err != nil {
		return nil, err
	}
	eps := g.Const(rng.Normal(xs.DType(), 0, 1, ms, count))
	out := graph.Transpose(graph.MulScalar(graph.MatMul(l, eps), math.Sqrt(scale)))
	if mean != nil {
		out = graph.Add(out, graph.Reshape(mean.Mean(xn), 1, ms))
	}
	return out.Value().Clone(), nil
}

// SamplePrior draws count joint samples of the latent function at xs
// (m, d) from the model's prior (its kernel and mean at the current
// hyperparameters), shaped (count, m), in the units of the original y (see
// the package function SamplePrior).
func (m *Exact) SamplePrior(xs *tensor.Tensor, count int, rng *tensor.RNG) (*tensor.Tensor, error) {
	if xs != nil {
		if err := m.checkTest(xs.Shape(), xs.DType()); err != nil {
			return nil, err
		}
	}
	mean := m.meanFn
	if m.mean != nil {
		mean = constMean{m.mean}
	}
	s, err := SamplePrior(m.kernel, mean, xs, count, rng)
	if err != nil {
		return nil, err
	}
	return tensor.AddScalar(tensor.MulScalar(s, m.yStd), m.yMean), nil
}

// constMean adapts the constant-mean hyperparameter to MeanFunc.
type constMean struct{ c *kernel.Hyperparam }

func (c constMean) Mean(x *graph.Node) *graph.Node {
	return graph.BroadcastTo(c.c.Node(x.Graph()), x.Shape()[0])
}

func (c constMean) Hyperparams() []*kernel.Hyperparam { return []*kernel.Hyperparam{c.c} }
