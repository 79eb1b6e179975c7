package gp

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Inference selects how an Exact model computes its marginal likelihood
// and predictions.
type Inference int

const (
	// Cholesky factors K + σ²I: exact, O(n³) time and O(n²) memory.
	Cholesky Inference = iota
	// CG is blackbox matrix-matrix inference (Gardner et al. 2018): batched
	// preconditioned conjugate gradients with kernel products computed in
	// row blocks, stochastic Lanczos quadrature for log det and Hutchinson
	// estimates for the gradient's traces: O(n²) time per iteration and
	// O(n) memory beyond the tiles. It needs a Stationary kernel (or a
	// Scale of one) and observation noise.
	CG
)

// CGOptions configures CG inference. Zero fields take the defaults.
type CGOptions struct {
	// Probes is the number of random probe vectors for the log-determinant
	// and trace estimates (default 16).
	Probes int
	// MaxIter is the iteration budget of conjugate gradients (default 1000).
	MaxIter int
	// Tol is the relative residual at which a column stops (default 1e-4).
	Tol float64
	// Rank is the rank of the pivoted-Cholesky preconditioner (default 32;
	// negative: no preconditioner).
	Rank int
	// Seed seeds the probes. Every evaluation draws the same probes, so
	// the estimate is a deterministic function of the hyperparameters.
	Seed uint64
	// BlockRows is the number of rows per kernel tile (default 64; a tile
	// spans 2048 columns).
	BlockRows int
	// Float32 computes the kernel's tiles and their products with the
	// probe vectors in float32, summing each tile's 2048 terms in float32
	// and the tiles in float64, as GPyTorch does on GPUs: several times
	// faster, with products accurate to about 1e-6 relative, so a Tol
	// below 1e-5 may not be reached. It supports the RBF kernel (or a
	// kernel.Scale of one) with tiles of 64 rows; CG, Lanczos and the
	// preconditioner stay in float64.
	Float32 bool
	// Partition, if not nil and of size above 1, splits every kernel
	// product by rows over its ranks and sums the parts by all-reduce
	// (see RowPartition); a distributed.Comm from an mpi build is one.
	// The estimates equal the unpartitioned ones up to the order of the
	// gradient pass's sums.
	Partition RowPartition
}

func (o CGOptions) withDefaults() CGOptions {
	if o.Probes == 0 {
		o.Probes = 16
	}
	if o.MaxIter == 0 {
		o.MaxIter = 1000
	}
	if o.Tol == 0 {
		o.Tol = 1e-4
	}
	if o.Rank == 0 {
		o.Rank = 32
	}
	return o
}

func (o CGOptions) check() error {
	if o.Probes < 0 || o.MaxIter < 0 || o.Tol < 0 || math.IsNaN(o.Tol) || o.BlockRows < 0 {
		return fmt.Errorf("gp.NewExact: CG options must not be negative, got %+v", o)
	}
	return checkPartition(o.Partition)
}

// CGStats describes the last CG evaluation of a model.
type CGStats struct {
	Iterations int     // products with the kernel operator
	Residual   float64 // worst relative residual of the batched solve
	Rank       int     // rank of the preconditioner reached
	LogDet     float64 // the estimate of log det(K + σ²I)
	Quad       float64 // (y − μ)ᵀ(K + σ²I)⁻¹(y − μ)
}

// LastCG returns statistics of the model's last CG evaluation (zero before
// one, or with Cholesky inference).
func (m *Exact) LastCG() CGStats { return m.cgStats }

// cgOperator returns the kernel operator and, unless disabled, the
// pivoted-Cholesky preconditioner at the current hyperparameters.
func (m *Exact) cgOperator(op string) (*kernelOp, *PivotedCholesky, error) {
	if m.noise == nil {
		return nil, nil, fmt.Errorf("%s: CG inference needs observation noise (NoiseFree is set)", op)
	}
	n, d := m.x.Shape()[0], m.x.Shape()[1]
	k, err := newKernelOp(op, m.kernel, m.x.Values(), n, d, m.noise, m.cg.BlockRows)
	if err != nil {
		return nil, nil, err
	}
	k.part = m.cg.Partition
	if m.cg.Float32 {
		if err := k.useFloat32(op); err != nil {
			return nil, nil, err
		}
	}
	if m.cg.Rank < 0 {
		return k, nil, nil
	}
	diag := make([]float64, n)
	for i := range diag {
		diag[i] = k.scale
	}
	pc, err := NewPivotedCholesky(diag, k.row, m.cg.Rank, k.noise)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	return k, pc, nil
}

// cgEstimate returns the CG estimate of the log marginal likelihood and,
// for every hyperparameter, the estimate of its gradient in constrained
// units (Gardner et al. 2018, eqs. 3–4):
//
//	log p ≈ −½ rᵀα − ½ (log det P + (1/t) Σᵢ ‖zᵢ‖²_{P⁻¹} e₁ᵀ log(Tᵢ) e₁) − (n/2) log 2π
//	∂/∂θ  ≈ ½ αᵀ(∂K̂/∂θ)α − (1/2t) Σᵢ (P⁻¹zᵢ)ᵀ(∂K̂/∂θ)(K̂⁻¹zᵢ)
//
// with r = y − μ, α = K̂⁻¹r and probes zᵢ ~ N(0, P) solved in one batch.
func (m *Exact) cgEstimate(op string) (lml float64, grads map[*kernel.Hyperparam][]float64, err error) {
	k, pc, err := m.cgOperator(op)
	if err != nil {
		return 0, nil, err
	}
	n, t := k.n, m.cg.Probes
	rng := tensor.NewRNG(m.cg.Seed)
	var z []float64
	if pc != nil {
		z = pc.Sample(rng, t)
	} else {
		z = rng.Normal(tensor.Float64, 0, 1, n, t).Float64s()
	}
	r := m.y.Values()
	mu := 0.0
	if m.mean != nil {
		mu = m.mean.Value()
	}
	b := make([]float64, n*(t+1))
	for i := 0; i < n; i++ {
		b[i*(t+1)] = r[i] - mu
		copy(b[i*(t+1)+1:(i+1)*(t+1)], z[i*t:(i+1)*t])
	}
	var prec Preconditioner
	if pc != nil {
		prec = pc
	}
	res, err := mbcg(op, k, prec, b, t+1, m.cg.MaxIter, m.cg.Tol)
	if k.err != nil {
		return 0, nil, fmt.Errorf("%s: %w", op, k.err)
	}
	if err != nil {
		return 0, nil, err
	}
	x := res.X.Float64s()
	quad := 0.0
	for i := 0; i < n; i++ {
		quad += b[i*(t+1)] * x[i*(t+1)]
	}
	logdet := 0.0
	if pc != nil {
		logdet = pc.LogDet()
	}
	for j := 1; j <= t; j++ {
		q, err := lanczosLogQuad(res.Diag[j], res.Off[j])
		if err != nil {
			return 0, nil, fmt.Errorf("%s: %w", op, err)
		}
		logdet += res.RZ0[j] * q / float64(t)
	}
	lml = -0.5*quad - 0.5*logdet - 0.5*float64(n)*math.Log(2*math.Pi)
	worst := 0.0
	for _, rj := range res.Residuals {
		worst = math.Max(worst, rj)
	}
	m.cgStats = CGStats{Iterations: res.Iterations, Residual: worst, LogDet: logdet, Quad: quad}
	if pc != nil {
		m.cgStats.Rank = pc.Rank()
	}

	// Weights for one pass: W = A·Bᵀ with A = [½α, −(1/2t)P⁻¹Z], B = [α, K̂⁻¹Z].
	pz := make([]float64, n*t)
	if pc != nil {
		pc.Solve(pz, z, t)
	} else {
		copy(pz, z)
	}
	a := make([]float64, n*(t+1))
	for i := 0; i < n; i++ {
		a[i*(t+1)] = 0.5 * x[i*(t+1)]
		for j := 0; j < t; j++ {
			a[i*(t+1)+1+j] = -0.5 / float64(t) * pz[i*t+j]
		}
	}
	gt, err := k.gradTerms(a, x, t+1)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", op, err)
	}
	grads = map[*kernel.Hyperparam][]float64{k.lsP: gt.ls, m.noise: {gt.noise}}
	if k.scaleP != nil {
		grads[k.scaleP] = []float64{gt.scale}
	}
	if k.alphaP != nil {
		grads[k.alphaP] = []float64{gt.alpha}
	}
	if m.mean != nil {
		s := 0.0
		for i := 0; i < n; i++ {
			s += x[i*(t+1)]
		}
		grads[m.mean] = []float64{s}
	}
	return lml, grads, nil
}

// cgLogMarginalLikelihood returns the CG estimate as a node of g whose
// value is the estimate and whose gradient with respect to every
// hyperparameter's RawNode(g) is the stochastic gradient estimate, so the
// fitting loop differentiates it like the exact one: the value plus
// Σ gθ·(θ − stop(θ)), which adds zero. Only first derivatives are
// meaningful.
func (m *Exact) cgLogMarginalLikelihood(g *graph.Graph) (*graph.Node, error) {
	lml, grads, err := m.cgEstimate("gp.LogMarginalLikelihood")
	if err != nil {
		return nil, err
	}
	dt := m.x.DType()
	out := g.Scalar(dt, lml)
	for _, p := range m.params {
		gv, ok := grads[p]
		if !ok {
			continue
		}
		th := p.Node(g)
		delta := graph.Sub(th, graph.StopGradient(th))
		gn := g.Const(tensor.FromValues(dt, gv, th.Shape()...))
		out = graph.Add(out, graph.Sum(graph.Mul(delta, gn), nil, false))
	}
	return out, nil
}

// cgPredict returns the posterior mean (and, with variance set, the
// latent variance) at xs by CG: mean = μ + K(xs, X)α with α from one
// solve, variance = s − diag K(xs, X)K̂⁻¹K(X, xs) from batched solves of
// the test points' kernel columns (32 at a time), on the original scale.
func (m *Exact) cgPredict(xs *tensor.Tensor, variance bool) (*Prediction, error) {
	const op = "gp.Predict"
	k, pc, err := m.cgOperator(op)
	if err != nil {
		return nil, err
	}
	var prec Preconditioner
	if pc != nil {
		prec = pc
	}
	r := m.y.Values()
	mu := 0.0
	if m.mean != nil {
		mu = m.mean.Value()
	}
	for i := range r {
		r[i] -= mu
	}
	res, err := mbcg(op, k, prec, r, 1, m.cg.MaxIter, m.cg.Tol)
	if k.err != nil {
		return nil, fmt.Errorf("%s: %w", op, k.err)
	}
	if err != nil {
		return nil, err
	}
	ms := xs.Shape()[0]
	xt := k.scaleInputs(xs.Values())
	mean := k.crossMatMul(xt, ms, res.X.Float64s(), 1)
	for i := range mean {
		mean[i] = (mean[i]+mu)*m.yStd + m.yMean
	}
	dt := m.x.DType()
	pred := &Prediction{Mean: tensor.FromValues(dt, mean, ms)}
	if !variance {
		return pred, nil
	}
	v := make([]float64, ms)
	s2 := m.yStd * m.yStd
	const chunk = 32
	for c0 := 0; c0 < ms; c0 += chunk {
		c1 := min(ms, c0+chunk)
		w := c1 - c0
		kt := make([]float64, w*k.n) // K(xs, X), then transposed to (n, w)
		k.tile(kt, nil, xt[c0*k.d:c1*k.d], w, 0, k.n)
		kc := make([]float64, k.n*w)
		for j := 0; j < w; j++ {
			for i := 0; i < k.n; i++ {
				kc[i*w+j] = kt[j*k.n+i]
			}
		}
		sol, err := mbcg(op, k, prec, kc, w, m.cg.MaxIter, m.cg.Tol)
		if k.err != nil {
			return nil, fmt.Errorf("%s: %w", op, k.err)
		}
		if err != nil {
			return nil, err
		}
		sv := sol.X.Float64s()
		for j := 0; j < w; j++ {
			q := 0.0
			for i := 0; i < k.n; i++ {
				q += kc[i*w+j] * sv[i*w+j]
			}
			v[c0+j] = math.Max(k.scale-q, 0) * s2
		}
	}
	pred.Var = tensor.FromValues(dt, v, ms)
	pred.NoisyVar = tensor.AddScalar(pred.Var, k.noise*s2)
	return pred, nil
}
