package pca

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// PPCA is probabilistic PCA (Tipping and Bishop 1999): x = W·z + μ + ε with
// z ~ N(0, I_q) and ε ~ N(0, σ²I_d), so x ~ N(μ, C) with C = WWᵀ + σ²I.
type PPCA struct {
	Mean   []float64      // μ, the sample mean
	W      *tensor.Tensor // (d, q) loading matrix
	Sigma2 float64        // σ², the isotropic noise variance
	// Iterations is the number of EM iterations or L-BFGS iterations the
	// fit ran (0 for the closed form).
	Iterations int
	// Trace holds FitPPCAEM's log-likelihood after each iteration, which
	// EM never lowers (nil for the other fits).
	Trace []float64
}

// PPCAOptions configures FitPPCA, FitPPCAEM and FitPPCAGradient (the
// closed form uses only Components). The zero value means the defaults
// stated on each field; Components must be set.
type PPCAOptions struct {
	// Components is the latent dimension q, 1 ≤ q < d; it is required.
	Components int
	// MaxIter bounds the EM iterations (zero means 500) or the L-BFGS
	// iterations (zero means 500).
	MaxIter int
	// Tol stops EM when the log-likelihood rises by less than Tol·n (zero
	// means 1e-9), and L-BFGS when the gradient's largest entry is below
	// it (zero means 1e-8).
	Tol float64
	// Seed seeds the random initial W of the iterative fits.
	Seed uint64
}

// checkQ returns an error unless 1 ≤ q < d.
func checkQ(op string, q, d int) error {
	if q < 1 || q >= d {
		return fmt.Errorf("%s: %d latent dimensions (Components) for d = %d (want 1 ≤ q < d)", op, q, d)
	}
	return nil
}

// FitPPCA returns the maximum-likelihood PPCA with q latent dimensions in
// closed form: with λ₁ ≥ … ≥ λ_d the eigenvalues of the sample covariance
// S (divisor n) and U_q the top q eigenvectors, σ² = mean of λ_{q+1…d} and
// W = U_q·(Λ_q − σ²I)^{1/2} (columns signed as PCA's components). It needs
// 1 ≤ q < d (q = opts.Components); it returns an error otherwise and for
// bad data (NaN or ±Inf, fewer than two rows). σ² is at least 10⁻¹⁰ of
// the mean variance, so that data lying in a q-dimensional subspace still
// give a finite likelihood.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitPPCA(x *tensor.Tensor, opts PPCAOptions) (*PPCA, error) {
	xc, mean, err := centred("pca.FitPPCA", x)
	if err != nil {
		return nil, err
	}
	n, d := xc.Shape()[0], xc.Shape()[1]
	q := opts.Components
	if err := checkQ("pca.FitPPCA", q, d); err != nil {
		return nil, err
	}
	s := tensor.MulScalar(tensor.MatMulT(xc, xc, true, false), 1/float64(n))
	vals, vecs, err := topEigen(s, d)
	if err != nil {
		return nil, fmt.Errorf("pca.FitPPCA: %w", err)
	}
	sigma2, total := 0.0, 0.0
	for i, v := range vals {
		total += v
		if i >= q {
			sigma2 += v
		}
	}
	sigma2 = max(sigma2/float64(d-q), sigma2Floor(total, d))
	u := tensor.Slice(vecs, 1, 0, q, 1).Contiguous()
	flipRowsOfT(u)
	scaleColumns(u, vals, func(l float64) float64 { return math.Sqrt(math.Max(l-sigma2, 0)) })
	return &PPCA{Mean: mean, W: u, Sigma2: sigma2}, nil
}

// sigma2Floor is the least σ² a fit returns, given the total variance
// (the trace of the covariance) over d dimensions. Data in a q-dimensional
// subspace give σ² = 0 (or, by rounding, slightly below it in EM) and a
// singular C = WWᵀ + σ²I; a floor of 10⁻¹⁰ of the mean variance keeps it
// positive definite (10⁻¹⁰ itself for identical rows).
func sigma2Floor(total float64, d int) float64 {
	if floor := 1e-10 * total / float64(d); floor > 0 {
		return floor
	}
	return 1e-10
}

// flipRowsOfT applies PCA's sign convention to the columns of m.
func flipRowsOfT(m *tensor.Tensor) {
	t := tensor.Transpose(m).Contiguous()
	flipRows(t)
	tensor.CopyInto(m, tensor.Transpose(t))
}

// LogLikelihood returns Σᵢ log N(xᵢ; μ, WWᵀ + σ²I) for the rows of x.
func (m *PPCA) LogLikelihood(x *tensor.Tensor) (float64, error) {
	checkCols("pca.PPCA.LogLikelihood", x, len(m.Mean))
	g := graph.New()
	xc := tensor.Sub(x.Cast(tensor.Float64), tensor.FromFloat64s(m.Mean, len(m.Mean)))
	var ll float64
	err := func() (err error) {
		defer tensor.Recover(&err)
		ll = LogLikelihood(g.Const(xc), g.Const(m.W), g.Scalar(tensor.Float64, math.Log(m.Sigma2))).Item()
		return nil
	}()
	return ll, err
}

// LogLikelihood returns, as a scalar node, the PPCA log-likelihood
// −n/2·(d·log 2π + log|C| + tr(C⁻¹S)) of the centred rows xc (n, d), with
// C = WWᵀ + σ²I, S = xcᵀxc/n, w (d, q) and σ² = exp(logSigma2) (0-d). It is
// differentiable in w and logSigma2 (and xc): fitting it by gradient
// reaches FitPPCA's closed form. A C that is not positive definite panics
// with a *graph.DataError.
func LogLikelihood(xc, w, logSigma2 *graph.Node) *graph.Node {
	n, d := xc.Shape()[0], xc.Shape()[1]
	c := graph.AddDiag(graph.MatMulT(w, w, false, true), graph.Exp(logSigma2))
	l := graph.Cholesky(c)
	s := graph.MulScalar(graph.MatMulT(xc, xc, true, false), 1/float64(n))
	tr := graph.Sum(graph.Diagonal(graph.CholeskySolve(l, s)), nil, false)
	inner := graph.AddScalar(graph.Add(graph.LogDetChol(l), tr), float64(d)*math.Log(2*math.Pi))
	return graph.MulScalar(inner, -float64(n)/2)
}

// FitPPCAEM fits PPCA by the EM algorithm of Tipping and Bishop (1999,
// §3.2) in the covariance form, M = WᵀW + σ²I:
//
//	W' = S·W·(σ²I + M⁻¹WᵀSW)⁻¹,   σ²' = tr(S − S·W·M⁻¹·W'ᵀ)/d,
//
// from a random W and σ² = 1, recording the log-likelihood after each
// iteration in Trace. σ² is kept at or above FitPPCA's floor, which data
// lying in a q-dimensional subspace reach. Bad data or options return an
// error and no model. If it runs out of MaxIter it returns the model with
// a *tensor.NotConvergedError; if ctx is cancelled (checked every
// iteration) it returns promptly with the model so far and the error
// wrapping ctx.Err().
func FitPPCAEM(ctx context.Context, x *tensor.Tensor, opts PPCAOptions) (*PPCA, error) {
	const op = "pca.FitPPCAEM"
	if ctx == nil {
		ctx = context.Background()
	}
	xc, mean, err := centred(op, x)
	if err != nil {
		return nil, err
	}
	n, d := xc.Shape()[0], xc.Shape()[1]
	q := opts.Components
	if err := checkQ(op, q, d); err != nil {
		return nil, err
	}
	if opts.MaxIter < 0 || !(opts.Tol >= 0) {
		return nil, fmt.Errorf("%s: negative MaxIter %d or Tol %v", op, opts.MaxIter, opts.Tol)
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 500
	}
	if opts.Tol == 0 {
		opts.Tol = 1e-9
	}
	s := tensor.MulScalar(tensor.MatMulT(xc, xc, true, false), 1/float64(n))
	w := tensor.NewRNG(opts.Seed).Normal(tensor.Float64, 0, 1, d, q)
	sigma2 := 1.0
	eye := tensor.Eye(tensor.Float64, q)
	m := &PPCA{Mean: mean}
	change := math.Inf(1)
	for range opts.MaxIter {
		if err := ctx.Err(); err != nil {
			if m.W == nil {
				return nil, fmt.Errorf("%s: cancelled before the first iteration: %w", op, err)
			}
			return m, fmt.Errorf("%s: cancelled after %d iterations: %w", op, m.Iterations, err)
		}
		mm := tensor.Add(tensor.MatMulT(w, w, true, false), tensor.MulScalar(eye, sigma2))
		minv, err := tensor.Inverse(mm)
		if err != nil {
			return nil, fmt.Errorf("pca.FitPPCAEM: %w", err)
		}
		sw := tensor.MatMul(s, w)
		inner := tensor.Add(tensor.MulScalar(eye, sigma2), tensor.MatMul(minv, tensor.MatMulT(w, sw, true, false)))
		innerInv, err := tensor.Inverse(inner)
		if err != nil {
			return nil, fmt.Errorf("pca.FitPPCAEM: %w", err)
		}
		wNew := tensor.MatMul(sw, innerInv)
		prod := tensor.MatMul(tensor.MatMul(sw, minv), tensor.Transpose(wNew))
		tr, total := 0.0, 0.0
		for i := range d {
			tr += s.At(i, i) - prod.At(i, i)
			total += s.At(i, i)
		}
		w, sigma2 = wNew, max(tr/float64(d), sigma2Floor(total, d))
		m.W, m.Sigma2 = w, sigma2
		ll, err := m.LogLikelihood(x)
		if err != nil {
			return nil, fmt.Errorf("pca.FitPPCAEM: %w", err)
		}
		m.Trace = append(m.Trace, ll)
		m.Iterations++
		if k := len(m.Trace); k > 1 {
			if change = m.Trace[k-1] - m.Trace[k-2]; change < opts.Tol*float64(n) {
				return m, nil
			}
		}
	}
	return m, &tensor.NotConvergedError{Op: op, Iterations: m.Iterations, Change: change, Tol: opts.Tol * float64(n)}
}

// FitPPCAGradient fits PPCA by maximising LogLikelihood with L-BFGS over W
// and log σ², from a random W (seeded) and σ² = 1: the gradient route to the
// closed form, for models that extend PPCA's likelihood. Bad data or
// options return an error and no model. If L-BFGS runs out of MaxIter it
// returns the model with a *tensor.NotConvergedError; if ctx is cancelled
// (checked at every evaluation) it returns promptly with the model at the
// current iterate and the error wrapping ctx.Err().
func FitPPCAGradient(ctx context.Context, x *tensor.Tensor, opts PPCAOptions) (*PPCA, error) {
	const op = "pca.FitPPCAGradient"
	if ctx == nil {
		ctx = context.Background()
	}
	xc, mean, err := centred(op, x)
	if err != nil {
		return nil, err
	}
	d := xc.Shape()[1]
	q := opts.Components
	if err := checkQ(op, q, d); err != nil {
		return nil, err
	}
	if opts.MaxIter < 0 || !(opts.Tol >= 0) {
		return nil, fmt.Errorf("%s: negative MaxIter %d or Tol %v", op, opts.MaxIter, opts.Tol)
	}
	maxIter, tol := opts.MaxIter, opts.Tol
	if maxIter == 0 {
		maxIter = 500
	}
	if tol == 0 {
		tol = 1e-8
	}
	w := tensor.NewRNG(opts.Seed).Normal(tensor.Float64, 0, 1, d, q)
	logS2 := tensor.Zeros(tensor.Float64)
	g := graph.New()
	f := func(p, grad []*tensor.Tensor) (v float64, err error) {
		defer tensor.Recover(&err)
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		g.Reset()
		wn, sn := g.Var(p[0]), g.Var(p[1])
		nll := graph.Neg(LogLikelihood(g.Const(xc), wn, sn))
		gr := autodiff.Grad(nll, wn, sn)
		tensor.CopyInto(grad[0], gr[0].Value())
		tensor.CopyInto(grad[1], gr[1].Value())
		return nll.Item(), nil
	}
	res, err := optim.Minimize(f, []*tensor.Tensor{w, logS2}, optim.LBFGSOptions{MaxIter: maxIter, GradTol: tol})
	m := &PPCA{Mean: mean, W: w, Sigma2: math.Exp(logS2.Item()), Iterations: res.Iterations}
	switch {
	case ctx.Err() != nil:
		return m, fmt.Errorf("%s: cancelled after %d iterations: %w", op, res.Iterations, ctx.Err())
	case err != nil:
		return nil, fmt.Errorf("%s: %w", op, err)
	case !res.Converged:
		return m, &tensor.NotConvergedError{Op: op, Iterations: res.Iterations, Change: res.GradNorm, Tol: tol}
	}
	return m, nil
}
