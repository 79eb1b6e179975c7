package gp

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// MultiClassifier is multi-class Gaussian-process classification with the
// softmax likelihood and the Laplace approximation (Rasmussen and
// Williams 2006, §3.5; seed 001 §5.2.1): C independent latent functions
// that share one kernel, p(y = c | f) = softmax(f)_c. Fit finds the mode
// by R&W Algorithm 3.3, which works with C systems of size n instead of
// one of size nC; the hyperparameters are held fixed (set them, or fit a
// binary Classifier per class for a first guess).
type MultiClassifier struct {
	kernel    kernel.Kernel
	x         *tensor.Tensor
	labels    []int
	C         int
	MaxNewton int     // Newton iterations (default 100)
	Tol       float64 // stop when the objective changes by less (default 1e-10)
	// After Fit: the mode f̂ (n×C, row-major by point), the class
	// probabilities π̂ there and the Laplace log marginal likelihood.
	Mode, Probs []float64
	LogMarginal float64
	Iterations  int
	k           *tensor.Tensor
}

// NewMultiClassifier returns a classifier of the labels 0…C−1 on the
// inputs x (n, d). It returns an error for bad shapes, labels out of range
// or fewer than two classes.
func NewMultiClassifier(k kernel.Kernel, x *tensor.Tensor, labels []int, classes int) (*MultiClassifier, error) {
	switch {
	case k == nil || x == nil:
		return nil, errors.New("gp.NewMultiClassifier: nil kernel or inputs")
	case x.Dim() != 2 || x.Shape()[0] != len(labels) || len(labels) == 0:
		return nil, fmt.Errorf("gp.NewMultiClassifier: want x (n, d) with n = %d labels, got shape %v", len(labels), x.Shape())
	case classes < 2:
		return nil, fmt.Errorf("gp.NewMultiClassifier: %d classes; use Classifier for two and more than one for any", classes)
	}
	for i, l := range labels {
		if l < 0 || l >= classes {
			return nil, fmt.Errorf("gp.NewMultiClassifier: label %d is %d, outside 0…%d", i, l, classes-1)
		}
	}
	for _, p := range k.Hyperparams() {
		p.SetDType(tensor.Float64)
	}
	return &MultiClassifier{kernel: k, x: x.Cast(tensor.Float64), labels: append([]int(nil), labels...), C: classes, MaxNewton: 100, Tol: 1e-10}, nil
}

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

// Fit runs R&W Algorithm 3.3 to the mode and records the mode, the
// probabilities and the approximate log marginal likelihood
//
//	log q(y | X) = −½aᵀf̂ + yᵀf̂ − Σᵢ log Σ_c exp f̂ᵢc − Σ_c Σᵢ log L_c,ii − Σᵢ log M_ii.
func (m *MultiClassifier) Fit() (err error) {
	defer tensor.Recover(&err)
	n, C := len(m.labels), m.C
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
	for it := 1; it <= m.MaxNewton; it++ {
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
		m.Iterations = it
		if math.Abs(obj-prev) < m.Tol {
			break
		}
		prev = obj
	}
	m.Mode, m.Probs = f, softmaxRows(f, n, C)
	m.LogMarginal = obj - logZ
	return nil
}

// LatentMean returns the predictive means of the latent functions at the
// rows of xs (m, d): E[f*_c] = k*ᵀ(y_c − π̂_c) (R&W Algorithm 3.4), m×C
// row-major.
func (m *MultiClassifier) LatentMean(xs *tensor.Tensor) ([]float64, error) {
	if m.Mode == nil {
		return nil, errors.New("gp.MultiClassifier: call Fit first")
	}
	ks := kernelMatrix(m.kernel, xs.Cast(tensor.Float64), m.x) // (m, n)
	n, C := len(m.labels), m.C
	r := make([]float64, n*C)
	for i, l := range m.labels {
		for c := range C {
			r[i*C+c] = -m.Probs[i*C+c]
		}
		r[i*C+l]++
	}
	return tensor.MatMul(ks, tensor.FromFloat64s(r, n, C)).Values(), nil
}

// Predict returns the class of the largest predictive latent mean at each
// row of xs.
func (m *MultiClassifier) Predict(xs *tensor.Tensor) ([]int, error) {
	mu, err := m.LatentMean(xs)
	if err != nil {
		return nil, err
	}
	rows := xs.Shape()[0]
	out := make([]int, rows)
	for i := range rows {
		for c := 1; c < m.C; c++ {
			if mu[i*m.C+c] > mu[i*m.C+out[i]] {
				out[i] = c
			}
		}
	}
	return out, nil
}
