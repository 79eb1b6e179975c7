package gp

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// MultiClassifier is multi-class Gaussian-process classification with the
// softmax likelihood and the Laplace approximation (Rasmussen and
// Williams 2006, Gaussian Processes for Machine Learning, §3.5): C
// independent latent functions that share one kernel,
// p(y = c | f) = softmax(f)_c. FitMultiClassifier finds the mode by R&W
// Algorithm 3.3, which works with C systems of size n instead of one of
// size nC; the hyperparameters are held at the kernel's values (set them,
// or fit a binary Classifier per class for a first guess).
type MultiClassifier struct {
	kernel  kernel.Kernel
	x       *tensor.Tensor
	labels  []int
	classes int
	// the mode f̂ (n×C, row-major by point), the class probabilities π̂
	// there, the Laplace log marginal likelihood and the Newton iterations
	mode, probs []float64
	lml         float64
	iterations  int
	k           *tensor.Tensor
}

// MultiClassifierOptions configures FitMultiClassifier. The zero value,
// with a Kernel, means the defaults stated on each field.
type MultiClassifierOptions struct {
	// Kernel is the covariance function of every latent function; it is
	// required. Its hyperparameters are not fitted.
	Kernel kernel.Kernel
	// Classes is the number of classes C; zero means the largest label
	// plus one.
	Classes int
	// MaxNewton bounds the Newton iterations; zero means 100.
	MaxNewton int
	// Tol stops Newton when the objective changes by less; zero means
	// 1e-10.
	Tol float64
}

// FitMultiClassifier returns a classifier of the labels 0…C−1 on the
// inputs x (n, d) at the Laplace mode, found by R&W Algorithm 3.3, and
// the approximate log marginal likelihood there
//
//	log q(y | X) = −½aᵀf̂ + yᵀf̂ − Σᵢ log Σ_c exp f̂ᵢc − Σ_c Σᵢ log L_c,ii − Σᵢ log M_ii.
//
// It returns an error and no model for a nil kernel, bad shapes,
// non-finite inputs, labels out of range or fewer than two classes
// present. If Newton runs out of iterations it returns the model at the
// last iterate with a *tensor.NotConvergedError; if ctx is cancelled, the
// model at the last iterate with the error wrapping ctx.Err().
func FitMultiClassifier(ctx context.Context, x *tensor.Tensor, labels []int, opts MultiClassifierOptions) (m *MultiClassifier, err error) {
	const op = "gp.FitMultiClassifier"
	classes := opts.Classes
	if classes == 0 {
		for _, l := range labels {
			classes = max(classes, l+1)
		}
	}
	switch {
	case opts.Kernel == nil || x == nil:
		return nil, fmt.Errorf("%s: nil Kernel or x", op)
	case x.Dim() != 2 || x.Shape()[0] != len(labels) || len(labels) == 0 || x.Shape()[1] == 0:
		return nil, fmt.Errorf("%s: want x (n, d) with n = %d labels and d ≥ 1, got shape %v", op, len(labels), x.Shape())
	case opts.MaxNewton < 0 || opts.Tol < 0 || math.IsNaN(opts.Tol):
		return nil, fmt.Errorf("%s: negative MaxNewton %d or Tol %g", op, opts.MaxNewton, opts.Tol)
	}
	if i := nonFiniteAt(x.Values()); i >= 0 {
		return nil, fmt.Errorf("%s: x holds a non-finite value at row %d", op, i/x.Shape()[1])
	}
	present := map[int]bool{}
	for i, l := range labels {
		if l < 0 || (opts.Classes > 0 && l >= classes) {
			return nil, fmt.Errorf("%s: label %d is %d, outside 0…%d", op, i, l, classes-1)
		}
		present[l] = true
	}
	if len(present) < 2 {
		return nil, fmt.Errorf("%s: only %d class among the labels; classification needs two or more", op, len(present))
	}
	for _, p := range opts.Kernel.Hyperparams() {
		p.SetDType(tensor.Float64)
	}
	m = &MultiClassifier{kernel: opts.Kernel, x: x.Cast(tensor.Float64), labels: append([]int(nil), labels...), classes: classes}
	maxNewton, tol := opts.MaxNewton, opts.Tol
	if maxNewton == 0 {
		maxNewton = 100
	}
	if tol == 0 {
		tol = 1e-10
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := m.newton(ctx, maxNewton, tol); err != nil {
		if m.mode == nil {
			return nil, err
		}
		return m, err
	}
	return m, nil
}

// Classes returns the number of classes C.
func (m *MultiClassifier) Classes() int { return m.classes }

// Mode returns the mode f̂ of the latent functions at the training inputs
// (n×C, row-major by point).
func (m *MultiClassifier) Mode() []float64 { return m.mode }

// Probs returns the class probabilities π̂ = softmax(f̂) at the training
// inputs (n×C, row-major by point).
func (m *MultiClassifier) Probs() []float64 { return m.probs }

// LogMarginalLikelihood returns the Laplace approximation of the log
// marginal likelihood at the mode.
func (m *MultiClassifier) LogMarginalLikelihood() float64 { return m.lml }

// Iterations returns the Newton iterations run.
func (m *MultiClassifier) Iterations() int { return m.iterations }

// softmaxRows returns π (n×C) for the latent values f (n×C).
func softmaxRows(f []float64, n, c int) []float64 {
	pi := make([]float64, n*c)
	for i := range n {
		row := f[i*c : (i+1)*c]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		s := 0.0
		for j, v := range row {
			pi[i*c+j] = math.Exp(v - m)
			s += pi[i*c+j]
		}
		for j := range row {
			pi[i*c+j] /= s
		}
	}
	return pi
}

// newton runs R&W Algorithm 3.3 to the mode and records the mode, the
// probabilities and the approximate log marginal likelihood.
func (m *MultiClassifier) newton(ctx context.Context, maxNewton int, tol float64) (err error) {
	defer tensor.Recover(&err)
	n, C := len(m.labels), m.classes
	m.k = kernelMatrix(m.kernel, m.x, nil)

	y := make([]float64, n*C)
	for i, l := range m.labels {
		y[i*C+l] = 1
	}
	f := make([]float64, n*C)
	col := func(v []float64, c int) []float64 { // class c's column of an n×C array
		out := make([]float64, n)
		for i := range n {
			out[i] = v[i*C+c]
		}
		return out
	}
	prev := math.Inf(-1)
	var logZ, obj float64
	converged := false
	change := math.Inf(1)
	for it := 1; it <= maxNewton; it++ {
		if err := ctx.Err(); err != nil {
			if it > 1 {
				m.mode, m.probs, m.lml = f, softmaxRows(f, n, C), obj-logZ
			}
			return fmt.Errorf("gp.FitMultiClassifier: cancelled after %d Newton iterations: %w", it-1, err)
		}
		pi := softmaxRows(f, n, C)
		// E_c = D_c^½ (I + D_c^½ K D_c^½)⁻¹ D_c^½ through L_c, and Σ_c E_c.
		es := make([]*tensor.Tensor, C)
		sumE := tensor.Zeros(tensor.Float64, n, n)
		zsum := 0.0
		for c := range C {
			sd := col(pi, c)
			for i := range sd {
				sd[i] = math.Sqrt(sd[i])
			}
			l, err := factorB(m.k, sd)
			if err != nil {
				return fmt.Errorf("gp.MultiClassifier: iteration %d, class %d: %w", it, c, err)
			}
			dm := tensor.Zeros(tensor.Float64, n, n)
			for i := range n {
				dm.Float64s()[i*n+i] = sd[i]
			}
			inner := tensor.TriSolve(l, tensor.TriSolve(l, dm, true, false), true, true) // L⁻ᵀL⁻¹D^½
			es[c] = tensor.MatMul(dm, inner)
			sumE = tensor.Add(sumE, es[c])
			for i := range n {
				zsum += math.Log(l.At(i, i))
			}
		}
		mchol, err := tensor.Cholesky(sumE)
		if err != nil {
			return fmt.Errorf("gp.MultiClassifier: iteration %d: Σ_c E_c: %w", it, err)
		}
		// b = (D − ΠΠᵀ)f + y − π, point by point: (D − ππᵀ) within a point.
		b := make([]float64, n*C)
		for i := range n {
			pf := 0.0
			for c := range C {
				pf += pi[i*C+c] * f[i*C+c]
			}
			for c := range C {
				b[i*C+c] = pi[i*C+c]*f[i*C+c] - pi[i*C+c]*pf + y[i*C+c] - pi[i*C+c]
			}
		}
		// c = E K b blockwise; a = b − c + E R M⁻ᵀM⁻¹ Rᵀc.
		cv := make([][]float64, C)
		rsum := make([]float64, n)
		for c := range C {
			kb := matVec(m.k, col(b, c))
			cv[c] = matVec(es[c], kb)
			for i := range n {
				rsum[i] += cv[c][i]
			}
		}
		sol := tensor.CholeskySolve(mchol, tensor.FromFloat64s(rsum, n, 1)).Values()
		a := make([]float64, n*C)
		for c := range C {
			ec := matVec(es[c], sol)
			for i := range n {
				a[i*C+c] = b[i*C+c] - cv[c][i] + ec[i]
			}
		}
		for c := range C {
			fc := matVec(m.k, col(a, c))
			for i := range n {
				f[i*C+c] = fc[i]
			}
		}
		// The objective Ψ = −½aᵀf + yᵀf − Σᵢ log Σ_c exp fᵢc.
		obj = 0
		for i := range n * C {
			obj += -0.5*a[i]*f[i] + y[i]*f[i]
		}
		for i := range n {
			mx := math.Inf(-1)
			for c := range C {
				mx = math.Max(mx, f[i*C+c])
			}
			s := 0.0
			for c := range C {
				s += math.Exp(f[i*C+c] - mx)
			}
			obj -= mx + math.Log(s)
		}
		logZ = zsum
		for i := range n {
			logZ += math.Log(mchol.At(i, i))
		}
		m.iterations = it
		change = math.Abs(obj - prev)
		if change < tol {
			converged = true
			break
		}
		prev = obj
	}
	m.mode, m.probs = f, softmaxRows(f, n, C)
	m.lml = obj - logZ
	if !converged {
		return &tensor.NotConvergedError{Op: "gp.FitMultiClassifier", Iterations: m.iterations, Change: change, Tol: tol}
	}
	return nil
}

// LatentMean returns the predictive means of the latent functions at the
// rows of xs (m, d): E[f*_c] = k*ᵀ(y_c − π̂_c) (R&W Algorithm 3.4), as an
// (m, C) tensor. It panics with a *tensor.Error if xs is not a matrix with
// the training inputs' columns.
func (m *MultiClassifier) LatentMean(xs *tensor.Tensor) *tensor.Tensor {
	if xs == nil || xs.Dim() != 2 || xs.Shape()[1] != m.x.Shape()[1] {
		var shape []int
		if xs != nil {
			shape = xs.Shape()
		}
		tensor.Fail("gp.MultiClassifier.LatentMean", "want xs (m, %d), got shape %v", m.x.Shape()[1], shape)
	}
	ks := kernelMatrix(m.kernel, xs.Cast(tensor.Float64), m.x) // (m, n)
	n, C := len(m.labels), m.classes
	r := make([]float64, n*C)
	for i, l := range m.labels {
		for c := range C {
			r[i*C+c] = -m.probs[i*C+c]
		}
		r[i*C+l]++
	}
	return tensor.MatMul(ks, tensor.FromFloat64s(r, n, C))
}

// Predict returns the class of the largest predictive latent mean at each
// row of xs. It panics with a *tensor.Error as LatentMean does.
func (m *MultiClassifier) Predict(xs *tensor.Tensor) []int {
	mu := m.LatentMean(xs).Values()
	rows := xs.Shape()[0]
	out := make([]int, rows)
	for i := range rows {
		for c := 1; c < m.classes; c++ {
			if mu[i*m.classes+c] > mu[i*m.classes+out[i]] {
				out[i] = c
			}
		}
	}
	return out
}
