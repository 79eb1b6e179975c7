package logreg

import (
	"bufio"
	"context"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ctx is the context of the fits that are not about cancellation.
var ctx = context.Background()

// Logistic regression is float64-only by design, so these tests run in
// float64; LogNdtr, the one op defined here, is checked in both dtypes.

// toyData returns a small overlapping (non-separable) binary problem.
func toyData(n, d int, seed uint64) (*tensor.Tensor, []int) {
	rng := tensor.NewRNG(seed)
	x := rng.Normal(tensor.Float64, 0, 1, n, d)
	xv := x.Float64s()
	y := make([]int, n)
	for i := range n {
		s := 0.3
		for j := range d {
			s += float64(j+1) * 0.5 * xv[i*d+j]
		}
		if rng.Float64() < 1/(1+math.Exp(-s)) {
			y[i] = 1
		}
	}
	return x, y
}

func TestHandWorkedOptimum(t *testing.T) {
	// Points x = +1 (label 1) and x = −1 (label 0), no intercept, λ = 1:
	// E(w) = 2·log(1 + e^−w) + w²/2, E'(w) = w − 2σ(−w) = 0. Bisection of
	// w − 2/(1 + eʷ) on [0, 1] (200 halvings, in a Python one-liner) gives
	// w* = 0.6748316143423994, and E''(w*) = 2σ(w*)σ(−w*) + 1 = 1.4471327604844149.
	const want, wantH = 0.6748316143423994, 1.4471327604844149
	x := tensor.FromFloat64s([]float64{1, -1}, 2, 1)
	y := []int{1, 0}
	for _, solver := range []string{LBFGS, Newton, IRLS} {
		t.Run(solver, func(t *testing.T) {
			m, err := FitRegression(ctx, x, y, RegressionOptions{L2: 1, Solver: solver, NoIntercept: true, GradTol: 1e-12})
			require.NoError(t, err)
			assert.InDelta(t, want, m.Coef[0][0], 1e-10)
			assert.Equal(t, 0.0, m.Intercept[0])
		})
	}
	post, err := FitLaplace(ctx, x, y, LaplaceOptions{Alpha: 1, Solver: Newton, GradTol: 1e-12, NoIntercept: true})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 1}, post.Hessian.Shape())
	assert.InDelta(t, wantH, post.Hessian.At(0, 0), 1e-10)
	assert.InDelta(t, 1/wantH, post.Cov().At(0, 0), 1e-10)
}

func TestHessianMatchesClosedForm(t *testing.T) {
	// The autodiff Hessian of E at any θ equals X̃ᵀ diag(p(1−p)) X̃ + diag(λ, …, λ, 0)
	// with X̃ = [X 1] and p = σ(X̃θ).
	const n, d, lambda = 25, 3, 0.7
	x, y := toyData(n, d, 3)
	p, err := setup("test", x, y, RegressionOptions{L2: lambda})
	require.NoError(t, err)
	theta := []float64{0.4, -0.3, 0.8, 0.2}
	_, _, h := p.hessian(theta)
	xv := x.Float64s()
	c := d + 1
	want := make([]float64, c*c)
	for i := range n {
		row := append(append([]float64(nil), xv[i*d:(i+1)*d]...), 1)
		var eta float64
		for j := range c {
			eta += row[j] * theta[j]
		}
		pi := 1 / (1 + math.Exp(-eta))
		for a := range c {
			for b := range c {
				want[a*c+b] += pi * (1 - pi) * row[a] * row[b]
			}
		}
	}
	for j := range d {
		want[j*c+j] += lambda
	}
	assert.InDeltaSlice(t, want, h, 1e-12)
}

func TestIRLSEqualsNewton(t *testing.T) {
	x, y := toyData(40, 3, 5)
	y3 := make([]int, len(y))
	for i := range y {
		y3[i] = (y[i] + i) % 3
	}
	cases := []struct {
		name   string
		link   Link
		y      []int
		lambda float64
		icept  float64 // intercept precision (softmax needs one for a unique step)
	}{
		{"logit", Logit, y, 0.5, 0},
		{"logit-ml", Logit, y, 0, 0},
		{"probit", Probit, y, 0.5, 0},
		{"softmax", Softmax, y3, 0.5, 0.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var its [2][][]float64
			for k, irls := range []bool{false, true} {
				p, err := setup("test", x, c.y, RegressionOptions{L2: c.lambda, Link: c.link})
				require.NoError(t, err)
				p.setPrecision(c.lambda, c.icept)
				theta := make([]float64, p.size())
				_, err = p.newton(context.Background(), theta, 4, 0, irls, func(th []float64) { its[k] = append(its[k], th) })
				require.NoError(t, err)
			}
			require.Len(t, its[0], 5)
			require.Len(t, its[1], 5)
			for k := 1; k < 5; k++ {
				for j := range its[0][k] {
					assert.InDelta(t, its[0][k][j], its[1][k][j], 1e-10, "iterate %d, θ[%d]", k, j)
				}
			}
			// The iterates move: the comparison is not of zeros.
			assert.Greater(t, maxAbs(its[0][4]), 0.1)
		})
	}
}

func TestSolversAgree(t *testing.T) {
	x, y := toyData(60, 4, 7)
	for _, link := range []Link{Logit, Probit} {
		t.Run(link.String(), func(t *testing.T) {
			var thetas [][]float64
			for _, s := range []string{LBFGS, Newton, IRLS} {
				m, err := FitRegression(ctx, x, y, RegressionOptions{L2: 0.3, Link: link, Solver: s, GradTol: 1e-9})
				require.NoError(t, err, s)
				assert.True(t, m.Converged)
				thetas = append(thetas, m.Theta())
			}
			assert.InDeltaSlice(t, thetas[1], thetas[0], 1e-7)
			assert.InDeltaSlice(t, thetas[1], thetas[2], 1e-10)
		})
	}
}

// readIris reads the embedded iris CSV from the data package's files.
func readIris(t *testing.T) (*tensor.Tensor, []int) {
	f, err := os.Open("../../data/files/sklearn/iris.csv")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	var xs []float64
	var y []int
	for sc.Scan() {
		parts := strings.Split(strings.TrimSpace(sc.Text()), ",")
		for _, s := range parts[:4] {
			v, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			xs = append(xs, v)
		}
		lab, err := strconv.Atoi(parts[4])
		require.NoError(t, err)
		y = append(y, lab)
	}
	n := len(y)
	// Standardise by the population mean and standard deviation.
	for j := range 4 {
		var m, v float64
		for i := range n {
			m += xs[i*4+j]
		}
		m /= float64(n)
		for i := range n {
			v += (xs[i*4+j] - m) * (xs[i*4+j] - m)
		}
		s := math.Sqrt(v / float64(n))
		for i := range n {
			xs[i*4+j] = (xs[i*4+j] - m) / s
		}
	}
	return tensor.FromFloat64s(xs, n, 4), y
}

func TestIrisMulticlass(t *testing.T) {
	// scikit-learn's LogisticRegression(C=1) (multinomial, λ = 1 on the
	// summed loss) fits standardised iris with a training accuracy of
	// about 0.97; 0.95 leaves room for solver differences.
	x, y := readIris(t)
	m, err := FitRegression(ctx, x, y, RegressionOptions{L2: 1, Link: Softmax, Solver: Newton})
	require.NoError(t, err)
	assert.Equal(t, 3, m.Classes)
	p := m.PredictProba(x)
	assert.Equal(t, []int{150, 3}, p.Shape())
	acc, err := metrics.Accuracy(m.Predict(x), y)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, acc, 0.95)
	// The unpenalised intercepts are only defined up to a constant;
	// the minimum-norm Newton steps from zero keep their sum at 0.
	assert.InDelta(t, 0, m.Intercept[0]+m.Intercept[1]+m.Intercept[2], 1e-8)
	ml, err := FitRegression(ctx, x, y, RegressionOptions{L2: 1, Link: Softmax, Solver: LBFGS, GradTol: 1e-7})
	require.NoError(t, err)
	l1, err := metrics.LogLoss(p, y)
	require.NoError(t, err)
	l2, err := metrics.LogLoss(ml.PredictProba(x), y)
	require.NoError(t, err)
	assert.InDelta(t, l1, l2, 1e-8)
}

func TestLaplaceEvidenceMatchesQuadrature(t *testing.T) {
	// One weight, no intercept, prior N(0, 1/α). The exact evidence
	// ∫ Πᵢ σ(sᵢxᵢw)·N(w|0, 1/α) dw is integrated by the trapezoid rule
	// on [−30, 30] with 60,001 points (error far below 1e-8). The Laplace
	// approximation is exact only for a Gaussian posterior; with 30
	// observations its error is O(1/n): we accept 0.02 nats.
	const alpha = 2.0
	xs := make([]float64, 30)
	y := make([]int, 30)
	for i := range xs {
		xs[i] = -1.5 + 3*float64(i)/29
		if (i*7)%10 < 3 == (xs[i] < 0) { // 30% label noise against the sign
			y[i] = 1
		}
	}
	x := tensor.FromFloat64s(xs, 30, 1)
	post, err := FitLaplace(ctx, x, y, LaplaceOptions{Alpha: alpha, Solver: Newton, NoIntercept: true})
	require.NoError(t, err)

	logLik := func(w float64) float64 {
		var s float64
		for i, xi := range xs {
			sg := float64(2*y[i] - 1)
			s -= math.Log1p(math.Exp(-sg * xi * w))
		}
		return s
	}
	const lo, hi, pts = -30.0, 30.0, 60001
	h := (hi - lo) / (pts - 1)
	var z float64
	for k := range pts {
		w := lo + float64(k)*h
		v := math.Exp(logLik(w)) * math.Sqrt(alpha/(2*math.Pi)) * math.Exp(-0.5*alpha*w*w)
		if k == 0 || k == pts-1 {
			v /= 2
		}
		z += v * h
	}
	exact := math.Log(z)
	t.Logf("exact %.6f laplace %.6f", exact, post.LogEvidence)
	assert.InDelta(t, exact, post.LogEvidence, 0.02)
	assert.NotEqual(t, exact, post.LogEvidence) // an approximation, not the integral itself
}

func TestFitAlphaMaximisesEvidence(t *testing.T) {
	x, y := toyData(80, 3, 11)
	post, err := FitLaplace(ctx, x, y, LaplaceOptions{Solver: Newton})
	require.NoError(t, err)
	for _, f := range []float64{0.7, 1.4} {
		q, err := FitLaplace(ctx, x, y, LaplaceOptions{Alpha: post.Alpha * f, Solver: Newton})
		require.NoError(t, err)
		assert.Less(t, q.LogEvidence, post.LogEvidence, "α×%g", f)
	}
	// Cov is the inverse of the Hessian: H·Σ = I.
	np := len(post.theta)
	hs := tensor.MatMul(post.Hessian, post.Cov())
	assert.InDeltaSlice(t, tensor.Eye(tensor.Float64, np).Values(), hs.Values(), 1e-10)
}

// gaussExpect returns ∫ f(a) N(a | mu, s2) da by the trapezoid rule over ±12 sd.
func gaussExpect(f func(float64) float64, mu, s2 float64) float64 {
	s := math.Sqrt(s2)
	const pts = 4001
	lo, hi := mu-12*s, mu+12*s
	h := (hi - lo) / (pts - 1)
	var z float64
	for k := range pts {
		a := lo + float64(k)*h
		v := f(a) * math.Exp(-0.5*(a-mu)*(a-mu)/s2) / math.Sqrt(2*math.Pi*s2)
		if k == 0 || k == pts-1 {
			v /= 2
		}
		z += v * h
	}
	return z
}

func TestPredictive(t *testing.T) {
	x, y := toyData(30, 2, 13) // few points: a wide posterior
	xt := tensor.FromFloat64s([]float64{0, 0, 2, -1, -3, 3, 1.5, 1.5}, 4, 2)
	for _, link := range []Link{Logit, Probit} {
		t.Run(link.String(), func(t *testing.T) {
			post, err := FitLaplace(ctx, x, y, LaplaceOptions{Alpha: 0.5, Link: link, Solver: Newton})
			require.NoError(t, err)
			mu, s2 := post.PredictiveMoments(xt)
			cdf := func(a float64) float64 { return 0.5 * math.Erfc(-a/math.Sqrt2) }
			lik := func(a float64) float64 { return 1 / (1 + math.Exp(-a)) }
			if link == Probit {
				lik = cdf
			}
			pp := post.PredictProba(xt)
			mc := post.PredictMC(xt, 20000, 1)
			for i := range mu.Shape()[0] {
				require.Greater(t, s2.At(i, 0), 0.01)
				exact := gaussExpect(lik, mu.At(i, 0), s2.At(i, 0))
				tolApprox := 0.02 // MacKay's approximation
				if link == Probit {
					tolApprox = 1e-6 // Φ(μ/√(1+s²)) is exact
				}
				assert.InDelta(t, exact, pp.At(i, 1), tolApprox, "probit approximation, point %d", i)
				assert.InDelta(t, 1, pp.At(i, 0)+pp.At(i, 1), 1e-12)
				assert.InDelta(t, exact, mc.At(i, 1), 0.01, "Monte Carlo, point %d", i) // sd ≤ 0.5/√20000
			}
			// Same seed, same numbers; Predict is PredictProba's argmax.
			assert.Equal(t, mc.Values(), post.PredictMC(xt, 20000, 1).Values())
			assert.Equal(t, tensor.ArgMax(pp, 1), post.Predict(xt))
		})
	}
}

func TestBadInput(t *testing.T) {
	x, y := toyData(10, 2, 1)
	nan := x.Clone()
	nan.SetAt(math.NaN(), 3, 1)
	inf := x.Clone()
	inf.SetAt(math.Inf(-1), 0, 0)
	sep := tensor.FromFloat64s([]float64{-2, -1, 1, 2}, 4, 1)
	cases := []struct {
		name string
		x    *tensor.Tensor
		y    []int
		opts RegressionOptions
		msg  string
	}{
		{"label-2-binary", x, []int{0, 1, 2, 0, 1, 0, 1, 0, 1, 0}, RegressionOptions{}, "label 2 at position 2: binary labels must be 0 or 1"},
		{"label-negative-softmax", x, []int{0, 1, -1, 0, 1, 0, 1, 0, 1, 0}, RegressionOptions{Link: Softmax}, "label -1 at position 2 is outside [0, 2)"},
		{"label-out-of-range-softmax", x, []int{0, 1, 3, 0, 1, 0, 1, 0, 1, 0}, RegressionOptions{Link: Softmax, Classes: 3}, "outside [0, 3)"},
		{"one-class", x, make([]int, 10), RegressionOptions{}, "every label is 0: need at least two classes"},
		{"one-class-softmax", x, []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, RegressionOptions{Link: Softmax}, "every label is 2"},
		{"length", x, y[:9], RegressionOptions{}, "x has 10 rows but there are 9 labels"},
		{"nan", nan, y, RegressionOptions{}, "x[3, 1] is NaN: values must be finite"},
		{"inf", inf, y, RegressionOptions{}, "x[0, 0] is -Inf: values must be finite"},
		{"zero-columns", tensor.Zeros(tensor.Float64, 10, 0), y, RegressionOptions{}, "x has zero columns"},
		{"no-rows", tensor.Zeros(tensor.Float64, 0, 2), nil, RegressionOptions{}, "x has no rows"},
		{"nil", nil, y, RegressionOptions{}, "x is nil"},
		{"solver", x, y, RegressionOptions{Solver: "sgd"}, "unknown solver"},
		{"link", x, y, RegressionOptions{Link: Link(7)}, "unknown link Link(7)"},
		{"l2", x, y, RegressionOptions{L2: -1}, "L2 = -1 must be finite and ≥ 0"},
		{"l2-nan", x, y, RegressionOptions{L2: math.NaN()}, "L2 = NaN must be finite"},
		{"init", x, y, RegressionOptions{Init: []float64{1}}, "Init has 1 values, the model has 3 parameters"},
		{"not-2d", tensor.Zeros(tensor.Float64, 10), y, RegressionOptions{}, "must be an (n, d) matrix, got shape [10]"},
		{"separable-newton", sep, []int{0, 0, 1, 1}, RegressionOptions{Solver: Newton}, "separable"},
		{"separable-lbfgs", sep, []int{0, 0, 1, 1}, RegressionOptions{}, "separable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := FitRegression(ctx, c.x, c.y, c.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "logreg.FitRegression: ")
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	_, err := FitRegression(ctx, sep, []int{0, 0, 1, 1}, RegressionOptions{Solver: IRLS})
	assert.ErrorIs(t, err, ErrSeparable)

	// FitLaplace validates the same data and its own options, naming itself.
	for _, c := range []struct {
		name string
		x    *tensor.Tensor
		y    []int
		opts LaplaceOptions
		msg  string
	}{
		{"nan", nan, y, LaplaceOptions{Alpha: 1}, "x[3, 1] is NaN: values must be finite"},
		{"nan-search", nan, y, LaplaceOptions{}, "x[3, 1] is NaN: values must be finite"},
		{"one-class", x, make([]int, 10), LaplaceOptions{Alpha: 1}, "every label is 0"},
		{"zero-columns", tensor.Zeros(tensor.Float64, 10, 0), y, LaplaceOptions{}, "x has zero columns"},
		{"alpha", x, y, LaplaceOptions{Alpha: -2}, "Alpha = -2 must be finite and > 0"},
		{"alpha-range", x, y, LaplaceOptions{AlphaMin: 10, AlphaMax: 1}, "the α range [10, 1]"},
	} {
		t.Run("laplace/"+c.name, func(t *testing.T) {
			_, err := FitLaplace(ctx, c.x, c.y, c.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "logreg.FitLaplace: ")
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// A solver out of iterations returns its last iterate with a
// *tensor.NotConvergedError; one more iteration's budget changes the
// iterate, so it is not the optimum.
func TestNotConverged(t *testing.T) {
	x, y := toyData(40, 3, 5)
	for _, solver := range []string{LBFGS, Newton} {
		t.Run(solver, func(t *testing.T) {
			m, err := FitRegression(ctx, x, y, RegressionOptions{L2: 0.5, Solver: solver, MaxIter: 1})
			require.ErrorIs(t, err, tensor.ErrNotConverged)
			var nc *tensor.NotConvergedError
			require.True(t, errors.As(err, &nc))
			assert.Equal(t, 1, nc.Iterations)
			assert.Contains(t, nc.Op, "logreg.FitRegression")
			require.NotNil(t, m)
			assert.False(t, m.Converged)
			full, err := FitRegression(ctx, x, y, RegressionOptions{L2: 0.5, Solver: solver})
			require.NoError(t, err)
			assert.Greater(t, m.Objective, full.Objective)
		})
	}
}

// A cancelled context stops every fit before its first iteration with
// the context's error wrapped.
func TestCancelled(t *testing.T) {
	x, y := toyData(40, 3, 5)
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, solver := range []string{LBFGS, Newton} {
		_, err := FitRegression(cctx, x, y, RegressionOptions{L2: 0.5, Solver: solver})
		assert.ErrorIs(t, err, context.Canceled, solver)
		assert.Contains(t, err.Error(), "logreg.FitRegression")
	}
	for _, alpha := range []float64{0, 1} {
		_, err := FitLaplace(cctx, x, y, LaplaceOptions{Alpha: alpha})
		assert.ErrorIs(t, err, context.Canceled, "α = %g", alpha)
		assert.Contains(t, err.Error(), "logreg.FitLaplace")
	}
	// Cancelled between iterations, the solvers return the iterate they
	// have: the objective is below its value at θ = 0, n·log 2.
	for _, solver := range []string{LBFGS, Newton} {
		t.Run(solver, func(t *testing.T) {
			m, err := FitRegression(&countdown{Context: ctx, n: 4}, x, y, RegressionOptions{L2: 0.5, Solver: solver, GradTol: 1e-14})
			require.ErrorIs(t, err, context.Canceled)
			require.NotNil(t, m)
			assert.False(t, m.Converged)
			assert.Equal(t, "cancelled", m.Reason)
			assert.Less(t, m.Objective, 40*math.Ln2)
			assert.Less(t, m.Iterations, 4)
		})
	}
	// Cancelled during the α search, FitLaplace returns the best
	// approximation so far.
	post, err := FitLaplace(&countdown{Context: ctx, n: 40}, x, y, LaplaceOptions{Solver: Newton})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, post)
	assert.NotEmpty(t, post.Evaluations)
	assert.Less(t, len(post.Evaluations), 13)
}

// countdown is a context whose Err reports cancellation from its (n+1)th
// call on: a cancellation in the middle of a fit without timing.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

func TestLogNdtr(t *testing.T) {
	// Reference values of log Φ(x): log(½·erfc(−x/√2)) with Python's
	// math.erfc (log1p(−½·erfc(x/√2)) at x = 8), and at x = −40, where erfc
	// underflows, log φ(40) + log R(40) with the Mills ratio R from its
	// continued fraction 1/(t + 1/(t + 2/(t + …))) to 200 terms.
	cases := []struct{ x, want float64 }{
		{0, -0.6931471805599453},
		{1, -0.17275377902344988},
		{-1, -1.8410216450092636},
		{-10, -53.23128515051246},
		{-40, -804.6084420137538},
		{8, -6.220960574271821e-16},
	}
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			for _, c := range cases {
				got := LogNdtr(g.Const(tensor.FromValues(dt, []float64{c.x}))).Value().Values()[0]
				tol := 1e-12 * math.Max(1, math.Abs(c.want))
				if dt == tensor.Float32 {
					tol = 1e-5 * math.Max(1, math.Abs(c.want))
				}
				assert.InDelta(t, c.want, got, tol, "x = %g", c.x)
			}
			xs := tensor.FromValues(dt, []float64{-20, -3, -0.5, 0.7, 4}, 5)
			rep, err := autodiff.GradCheck(func(in []*graph.Node) *graph.Node { return LogNdtr(in[0]) },
				[]*tensor.Tensor{xs}, autodiff.GradCheckOptions{Seed: 1})
			require.NoError(t, err)
			assert.True(t, rep.Passed)
		})
	}
}
