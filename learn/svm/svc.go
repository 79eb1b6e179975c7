// Package svm holds kernel machines trained through their dual problems:
// C- and ν-support-vector classification (SVC, binary and multiclass by
// one-vs-one voting or one-vs-rest) and ε- and ν-support-vector regression
// (SVR), all solved by SMO with second-order working-set selection (Fan,
// Chen and Lin 2005), LIBSVM's shrinking and a kernel cache of bounded
// size (Chang and Lin 2011, LIBSVM: a library for support vector
// machines), on the kernels of probabilistic/kernel; Crammer–Singer
// multiclass machines (Crammer and Singer 2001); and structured output
// SVMs (FitStructured: a user's joint feature map and loss-augmented
// argmax, trained by the 1-slack cutting-plane method of Joachims, Finley
// and Yu 2009; Chain for sequence labelling by Viterbi). Every fit reports the
// primal and dual objectives and their gap, so a user can certify the
// solution (Schölkopf and Smola 2002, Learning with Kernels, chapters 7
// and 9).
//
// Fits that iterate (SMO, the sequential dual method, the primal linear
// SVM) take a context first and stop promptly when it is cancelled;
// a solver that runs out of MaxIter returns its model with a
// *tensor.NotConvergedError.
//
//	m, err := svm.FitSVC(ctx, x, labels, svm.SVCOptions{C: 1, Kernel: kernel.NewRBF(1)})
//	fmt.Println(m.Primal, m.Dual, m.Gap) // gap ≈ 0 at the optimum
//	scores := m.Decision(xNew)           // (m, machines)
//	pred := m.Predict(xNew)              // []int
//	p := m.PredictProba(xNew)            // (m, classes), with SVCOptions{Probability: true}
package svm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// solverOptions is every knob of the kernel solvers; each fit fills it
// from its own options struct and withDefaults supplies LIBSVM's defaults.
type solverOptions struct {
	C            float64
	Epsilon      float64
	Tol          float64
	MaxIter      int
	CacheBytes   int
	ClassWeights map[int]float64
	OneVsRest    bool
	Nu           float64
	NoShrinking  bool
	Probability  bool
	// float32Q rounds Q's entries to float32 as LIBSVM stores them, so a
	// test can check that the solver takes LIBSVM's steps exactly.
	float32Q bool
}

func (o solverOptions) withDefaults() solverOptions {
	if o.C == 0 {
		o.C = 1
	}
	if o.Epsilon == 0 {
		o.Epsilon = 0.1
	}
	if o.Nu == 0 {
		o.Nu = 0.5
	}
	if o.Tol == 0 {
		o.Tol = 1e-3
	}
	if o.MaxIter == 0 {
		o.MaxIter = 10_000_000
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 100 << 20
	}
	return o
}

// Binary is one two-class machine f(x) = Σᵢ coefᵢ K(svᵢ, x) + Bias; it
// predicts the positive class where f(x) > 0.
type Binary struct {
	Kernel         kernel.Kernel
	SupportVectors *tensor.Tensor // (s, d) rows of the training data with αᵢ > 0
	Support        []int          // their indices in the training rows
	DualCoef       []float64      // yᵢαᵢ for each support vector
	Bias           float64        // −ρ
	// C is the box constraint solved for: Options.C (each class's box is
	// C times its weight), or for ν-SVC 1/r, the C of the equivalent C-SVC.
	C        float64
	Positive int // the label of the positive class (yᵢ = +1)
	Negative int
	// Primal is ½‖w‖² + Σᵢ Cᵢ·max(0, 1 − yᵢf(xᵢ)), Dual is Σαᵢ − ½‖w‖², and
	// Gap = Primal − Dual ≥ 0, which is 0 exactly at the optimum. A ν-SVC
	// machine is the optimum of the C-SVC with C = 1/r, and these are that
	// problem's objectives; its gap is the ν problem's gap divided by r².
	Primal, Dual, Gap float64
	Iterations        int
	Converged         bool

	violation float64 // the maximal KKT violation when SMO stopped
}

// SVC is a C-support-vector classifier: one Binary machine for two classes,
// or one per pair of classes, combined by LIBSVM's one-vs-one vote, or
// (Options.OneVsRest) one per class against the rest.
type SVC struct {
	Classes  []int     // sorted labels
	Machines []*Binary // pairs (0,1), (0,2), …, (1,2), …; or class k against the rest
	// OneVsRest says Machines[k] separates Classes[k] (positive) from all
	// other classes (Negative is Rest).
	OneVsRest bool
	// Primal, Dual and Gap are summed over the machines.
	Primal, Dual, Gap float64

	platt []Platt // one per machine when fitted with Probability
}

// FitSVC trains a C-SVC on the rows of x (n, d) with integer labels (at
// least two classes): one machine for two classes, one per pair of
// classes (or per class against the rest) for more, each solved by SMO.
//
// Bad data (NaN or ±Inf, zero rows or columns, one class) or options
// (negative C or Tol) return an error and no model. A machine that runs out
// of MaxIter returns the model with a *tensor.NotConvergedError. ctx is
// checked every 1000 SMO steps; when it is cancelled FitSVC returns
// promptly with the error wrapping ctx.Err(), and with the model at the
// current iterate when there are two classes (nil for more, whose
// remaining machines are missing).
func FitSVC(ctx context.Context, x *tensor.Tensor, labels []int, opts SVCOptions) (*SVC, error) {
	return fitSVC(orBackground(ctx), "svm.FitSVC", x, labels, opts.Kernel, solverOptions{
		C: opts.C, ClassWeights: opts.ClassWeights, OneVsRest: opts.OneVsRest, Tol: opts.Tol, MaxIter: opts.MaxIter,
		CacheBytes: opts.CacheBytes, NoShrinking: opts.NoShrinking, Probability: opts.Probability, float32Q: opts.float32Q}, false)
}

func fitSVC(ctx context.Context, op string, x *tensor.Tensor, labels []int, k kernel.Kernel, opts solverOptions, nu bool) (*SVC, error) {
	x64, err := checkData(op, x, len(labels))
	if err != nil {
		return nil, err
	}
	k = defaultKernel(k, x64)
	opts = opts.withDefaults()
	if err := checkOptions(op, opts); err != nil {
		return nil, err
	}
	for c, w := range opts.ClassWeights {
		if !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("%s: ClassWeights[%d] = %v must be positive and finite", op, c, w)
		}
	}
	if nu {
		if err := checkNu(op, opts.Nu); err != nil {
			return nil, err
		}
	}
	classes := slices.Sorted(slices.Values(unique(labels)))
	if len(classes) < 2 {
		return nil, fmt.Errorf("%s: need at least two classes, got only %v", op, classes)
	}
	m := &SVC{Classes: classes}
	var notConv error
	// add keeps a machine (fitBinary returns one with a cancellation
	// error too) and returns the error that ends the fit, if any.
	add := func(bin *Binary, err error, what string) error {
		if bin == nil {
			return fmt.Errorf("%s: %s: %w", op, what, err)
		}
		m.Machines = append(m.Machines, bin)
		m.Primal += bin.Primal
		m.Dual += bin.Dual
		m.Gap += bin.Gap
		if err != nil {
			return fmt.Errorf("%s: %s: %w", op, what, err)
		}
		if !bin.Converged && notConv == nil {
			notConv = notConverged(op+" ("+what+")", bin.Iterations, bin.violation, opts.Tol)
		}
		return nil
	}
	finish := func(err error) (*SVC, error) {
		switch {
		case err == nil:
			if opts.Probability {
				err := m.fitProbability(op, x64, labels)
				if !errors.Is(err, tensor.ErrNotConverged) && err != nil {
					return nil, err
				}
				if notConv == nil {
					notConv = err
				}
			}
			return m, notConv
		case len(classes) == 2 && len(m.Machines) == 1:
			return m, err // cancelled, with the machine at its current iterate
		}
		return nil, err
	}
	if opts.OneVsRest && len(classes) > 2 {
		m.OneVsRest = true
		all := make([]int, len(labels))
		for i := range all {
			all[i] = i
		}
		for _, c := range classes {
			what := fmt.Sprintf("class %d against the rest", c)
			bin, err := fitBinary(ctx, x64, labels, all, c, Rest, k, opts, nu)
			if err := add(bin, err, what); err != nil {
				return finish(err)
			}
		}
		return finish(nil)
	}
	for a := 0; a < len(classes); a++ {
		for b := a + 1; b < len(classes); b++ {
			var rows []int
			for i, l := range labels {
				if l == classes[a] || l == classes[b] {
					rows = append(rows, i)
				}
			}
			what := fmt.Sprintf("classes %d and %d", classes[a], classes[b])
			bin, err := fitBinary(ctx, x64, labels, rows, classes[a], classes[b], k, opts, nu)
			if err := add(bin, err, what); err != nil {
				return finish(err)
			}
		}
	}
	return finish(nil)
}

// fitBinary trains the machine separating pos (y = +1) from neg on rows:
// C-SVC, or ν-SVC in LIBSVM's scaling (box [0, 1], Σα = νn, α₀ filling
// each class's half of νn in row order), rescaled by 1/r at the end into
// the C-SVC solution with C = 1/r.
//
// It returns the machine (nil on bad options) and, when SMO stopped for
// ctx, the cancellation error (the machine then holds the current iterate).
func fitBinary(ctx context.Context, x *tensor.Tensor, labels, rows []int, pos, neg int, k kernel.Kernel, opts solverOptions, nu bool) (*Binary, error) {
	n := len(rows)
	sub := x
	if n != x.Shape()[0] { // one pair of classes: copy their rows
		sub = tensor.IndexSelect(x, 0, rows)
	}
	y, c, p, alpha0 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	nPos := 0
	for t, r := range rows {
		y[t], c[t], p[t] = -1, opts.C*weight(opts.ClassWeights, neg), -1
		if labels[r] == pos {
			y[t], c[t] = 1, opts.C*weight(opts.ClassWeights, pos)
			nPos++
		}
	}
	if nu {
		if small := min(nPos, n-nPos); opts.Nu*float64(n)/2 > float64(small) { // LIBSVM's test
			return nil, fmt.Errorf("ν = %v is infeasible: the classes have %d and %d rows, so ν ≤ 2·min/n = %.6g", opts.Nu, nPos, n-nPos, 2*float64(small)/float64(n))
		}
		half := [2]float64{opts.Nu * float64(n) / 2, opts.Nu * float64(n) / 2}
		for t := range n {
			s := 0
			if y[t] < 0 {
				s = 1
			}
			c[t], p[t] = 1, 0
			alpha0[t] = min(1, half[s])
			half[s] -= alpha0[t]
		}
	}
	q, err := newSVCQ(k, sub, y, opts.CacheBytes, opts.float32Q)
	if err != nil {
		return nil, err
	}
	sol := solve(q, p, y, c, alpha0, solveOptions{ctx: ctx, eps: opts.Tol, maxIter: opts.MaxIter, nu: nu, shrink: !opts.NoShrinking})
	// Qα = G − p; f(xᵢ) = yᵢ(Qα)ᵢ − ρ.
	qa := make([]float64, n)
	for t := range n {
		qa[t] = sol.grad[t] - p[t]
	}
	alpha, rho, cBox := sol.alpha, sol.rho, opts.C
	if nu {
		r := sol.r
		if !(r > 0) {
			return nil, fmt.Errorf("ν-SVC found no positive margin (r = %v) for ν = %v", r, opts.Nu)
		}
		for t := range n {
			alpha[t] /= r
			qa[t] /= r
			c[t] = 1 / r
		}
		rho /= r
		cBox = 1 / r
	}
	b := &Binary{Kernel: k, Positive: pos, Negative: neg, Bias: -rho, C: cBox, Iterations: sol.iterations, Converged: sol.converged,
		violation: sol.violation}
	ww, sumA, hinge := 0.0, 0.0, 0.0
	for t := range n {
		ww += alpha[t] * qa[t]
		sumA += alpha[t]
		f := y[t]*qa[t] - rho
		hinge += c[t] * math.Max(0, 1-y[t]*f)
		if alpha[t] > 0 {
			b.Support = append(b.Support, rows[t])
			b.DualCoef = append(b.DualCoef, y[t]*alpha[t])
		}
	}
	b.Primal = ww/2 + hinge
	b.Dual = sumA - ww/2
	b.Gap = b.Primal - b.Dual
	b.SupportVectors = supportRows(x, b.Support)
	if sol.cancelled != nil {
		return b, cancelled("SMO", sol.iterations, sol.cancelled)
	}
	return b, nil
}

// Decision returns f(x) for the rows of x (m, d), shaped (m). It panics
// with a *tensor.Error unless x is a matrix with the training columns.
func (b *Binary) Decision(x *tensor.Tensor) *tensor.Tensor {
	checkRows("svm.Binary.Decision", x, b.SupportVectors)
	return tensor.FromFloat64s(b.decision(x), x.Shape()[0])
}

// decision returns f(x) for the rows of x (m, d).
func (b *Binary) decision(x *tensor.Tensor) []float64 {
	m := x.Shape()[0]
	out := make([]float64, m)
	if len(b.Support) == 0 {
		for i := range out {
			out[i] = b.Bias
		}
		return out
	}
	kv, err := kernelRows(b.Kernel, x.Cast(tensor.Float64), b.SupportVectors)
	if err != nil {
		tensor.Fail("svm.Decision", "%v", err)
	}
	s := len(b.Support)
	for i := range out {
		f := b.Bias
		for j, a := range b.DualCoef {
			f += a * kv[i*s+j]
		}
		out[i] = f
	}
	return out
}

// Decision returns one column per machine (m, machines): each machine's
// f(x), positive for the first class of its pair, as LIBSVM's
// decision_function with one-vs-one shape.
func (m *SVC) Decision(x *tensor.Tensor) *tensor.Tensor {
	checkRows("svm.SVC.Decision", x, m.Machines[0].SupportVectors)
	rows := x.Shape()[0]
	out := make([]float64, rows*len(m.Machines))
	for j, b := range m.Machines {
		for i, v := range b.decision(x) {
			out[i*len(m.Machines)+j] = v
		}
	}
	return tensor.FromFloat64s(out, rows, len(m.Machines))
}

// Rest is the Negative label of a one-vs-rest machine: every other class.
const Rest = math.MinInt

// Predict returns each row's class: with two classes the sign of f, with
// more the one-vs-one vote (ties to the smaller label, as LIBSVM) or, one
// against the rest, the class of the largest decision value.
func (m *SVC) Predict(x *tensor.Tensor) []int {
	dec := m.Decision(x)
	rows := x.Shape()[0]
	out := make([]int, rows)
	if m.OneVsRest {
		for i := range out {
			best := 0
			for j := range m.Machines {
				if dec.At(i, j) > dec.At(i, best) {
					best = j
				}
			}
			out[i] = m.Classes[best]
		}
		return out
	}
	votes := make(map[int]int, len(m.Classes))
	for i := range out {
		clear(votes)
		for j, b := range m.Machines {
			if dec.At(i, j) > 0 {
				votes[b.Positive]++
			} else {
				votes[b.Negative]++
			}
		}
		best := m.Classes[0]
		for _, c := range m.Classes {
			if votes[c] > votes[best] {
				best = c
			}
		}
		out[i] = best
	}
	return out
}

func weight(w map[int]float64, class int) float64 {
	if v, ok := w[class]; ok {
		return v
	}
	return 1
}

func unique(labels []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, l := range labels {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// checkData validates x (validate.Matrix) against n labels or targets
// and returns it in float64.
func checkData(op string, x *tensor.Tensor, n int) (*tensor.Tensor, error) {
	v, rows, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, err
	}
	if rows != n {
		return nil, fmt.Errorf("%s: %d rows but %d labels or targets", op, rows, n)
	}
	return tensor.FromFloat64s(v, rows, d), nil
}

func checkRows(op string, x, sv *tensor.Tensor) {
	if x == nil || x.Dim() != 2 || x.Shape()[1] != sv.Shape()[1] {
		tensor.Fail(op, "want an (m, %d) matrix, got %v", sv.Shape()[1], x)
	}
}

// supportRows returns the rows of x at idx, (0, d) when there are none.
func supportRows(x *tensor.Tensor, idx []int) *tensor.Tensor {
	if len(idx) == 0 {
		return tensor.Zeros(tensor.Float64, 0, x.Shape()[1])
	}
	return tensor.IndexSelect(x, 0, idx)
}

// ScaleGamma returns scikit-learn's default RBF γ, "scale":
// 1/(d·Var(X)) over all entries of x (n, d). Use it as
// kernel.NewRBF(math.Sqrt(1/(2γ))), since the RBF's exp(−r²/(2ℓ²)) is
// exp(−γr²) for ℓ = 1/√(2γ).
func ScaleGamma(x *tensor.Tensor) float64 {
	v := x.Values()
	mean, sq := 0.0, 0.0
	for _, e := range v {
		mean += e
	}
	mean /= float64(len(v))
	for _, e := range v {
		sq += (e - mean) * (e - mean)
	}
	return 1 / (float64(x.Shape()[1]) * sq / float64(len(v)))
}
