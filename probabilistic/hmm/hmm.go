// Package hmm computes with hidden Markov models whose discrete states are
// summed out in log space by graph ops, so the log-likelihood and the state
// marginals are differentiable in the initial, transition and emission
// log-probabilities (Rabiner 1989, "A tutorial on hidden Markov models and
// selected applications in speech recognition"; Bishop 2006, "Pattern
// Recognition and Machine Learning", §13.2).
//
// A model with K states is given by three nodes: logInit (K), the log
// initial probabilities; logTrans (K, K), with logTrans[i][j] = log
// P(zₜ = j | zₜ₋₁ = i); and logEmit (..., T, K), the log-likelihood of each
// observation under each state, with any leading batch axes for several
// sequences of equal length. The emissions are arbitrary: GaussianEmissions
// builds them for normal observations, and any per-state log-density works.
//
//	logInit := graph.LogSoftmax(a, -1)          // unconstrained a (K)
//	logTrans := graph.LogSoftmax(b, -1)         // unconstrained b (K, K), rows on the simplex
//	emit := hmm.GaussianEmissions(x, mu, sigma) // (T, K)
//	ll := hmm.LogLikelihood(logInit, logTrans, emit)
//	grads := autodiff.Grad(ll, a, b, mu, sigma)
//	path, _ := hmm.Viterbi(logInit, logTrans, emit)
//
// The rows need not be normalised: with unnormalised log-potentials the
// same recursions return the log of the sum over paths (a linear-chain
// conditional random field's partition function).
package hmm

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// check validates the shapes and returns T and K.
func check(op string, logInit, logTrans, logEmit *graph.Node) (t, k int) {
	for _, n := range []*graph.Node{logInit, logTrans, logEmit} {
		if n == nil {
			tensor.Fail(op, "nil operand (logInit, logTrans, logEmit %s)", graph.Describe(logInit, logTrans, logEmit))
		}
	}
	for _, n := range []*graph.Node{logTrans, logEmit} {
		if n.Graph() != logInit.Graph() || n.DType() != logInit.DType() {
			tensor.Fail(op, "operands %s are in different graphs or dtypes", graph.Describe(logInit, logTrans, logEmit))
		}
	}
	is, ts, es := logInit.Shape(), logTrans.Shape(), logEmit.Shape()
	if len(is) != 1 || len(ts) != 2 || len(es) < 2 {
		tensor.Fail(op, "shapes %s: want logInit (K), logTrans (K, K), logEmit (..., T, K)", graph.Describe(logInit, logTrans, logEmit))
	}
	k = is[0]
	if k < 1 || ts[0] != k || ts[1] != k || es[len(es)-1] != k || es[len(es)-2] < 1 {
		tensor.Fail(op, "shapes %s do not agree on K states: want (K), (K, K), (..., T, K) with T ≥ 1", graph.Describe(logInit, logTrans, logEmit))
	}
	return es[len(es)-2], k
}

// steps returns the T emission slices (..., K).
func steps(logEmit *graph.Node, t int) []*graph.Node {
	sizes := make([]int, t)
	for i := range sizes {
		sizes[i] = 1
	}
	out := graph.Split(logEmit, -2, sizes...)
	for i, s := range out {
		out[i] = graph.Squeeze(s, -2)
	}
	return out
}

// forward returns the log forward variables log αₜ(j) = log p(x₁…xₜ, zₜ = j),
// each (..., K).
func forward(logInit, logTrans *graph.Node, emit []*graph.Node) []*graph.Node {
	alpha := make([]*graph.Node, len(emit))
	alpha[0] = graph.Add(logInit, emit[0])
	for t := 1; t < len(emit); t++ {
		// αₜ(j) = eₜ(j) + log Σᵢ exp(αₜ₋₁(i) + A(i, j)).
		s := graph.LogSumExp(graph.Add(graph.Unsqueeze(alpha[t-1], -1), logTrans), []int{-2}, false)
		alpha[t] = graph.Add(emit[t], s)
	}
	return alpha
}

// LogLikelihood returns log p(x₁, …, x_T) = log Σ_z p(z, x) by the forward
// algorithm in log space, shaped like logEmit without its last two axes
// (one value per sequence). It costs O(T·K²) and is differentiable in all
// three operands. It panics with a *tensor.Error if the shapes do not fit.
func LogLikelihood(logInit, logTrans, logEmit *graph.Node) *graph.Node {
	t, _ := check("hmm.LogLikelihood", logInit, logTrans, logEmit)
	alpha := forward(logInit, logTrans, steps(logEmit, t))
	return graph.LogSumExp(alpha[t-1], []int{-1}, false)
}

// Marginals returns the posterior state probabilities p(zₜ = k | x),
// shaped like logEmit (..., T, K), by the forward-backward algorithm in log
// space: log αₜ + log βₜ − log p(x). They are differentiable in the
// operands. It panics as LogLikelihood does.
func Marginals(logInit, logTrans, logEmit *graph.Node) *graph.Node {
	t, _ := check("hmm.Marginals", logInit, logTrans, logEmit)
	emit := steps(logEmit, t)
	alpha := forward(logInit, logTrans, emit)
	logZ := graph.LogSumExp(alpha[t-1], []int{-1}, true)
	beta := make([]*graph.Node, t)
	beta[t-1] = graph.MulScalar(alpha[t-1], 0)
	for s := t - 2; s >= 0; s-- {
		// βₛ(i) = log Σⱼ exp(A(i, j) + eₛ₊₁(j) + βₛ₊₁(j)).
		next := graph.Unsqueeze(graph.Add(emit[s+1], beta[s+1]), -2)
		beta[s] = graph.LogSumExp(graph.Add(logTrans, next), []int{-1}, false)
	}
	post := make([]*graph.Node, t)
	for s := range post {
		post[s] = graph.Exp(graph.Sub(graph.Add(alpha[s], beta[s]), logZ))
	}
	return graph.Stack(-2, post...)
}

// Viterbi returns the most probable state path argmax_z p(z | x) of one
// sequence (logEmit (T, K)) and its log joint probability log p(z, x), by
// dynamic programming on the operands' values (Viterbi 1967, "Error bounds
// for convolutional codes and an asymptotically optimum decoding
// algorithm"). It is not differentiable. Ties go to the lower state. It
// panics if the shapes do not fit or logEmit has batch axes.
func Viterbi(logInit, logTrans, logEmit *graph.Node) ([]int, float64) {
	const op = "hmm.Viterbi"
	t, k := check(op, logInit, logTrans, logEmit)
	if logEmit.Dim() != 2 {
		tensor.Fail(op, "logEmit %s: want one sequence (T, K); loop over a batch", graph.Describe(logEmit))
	}
	pi, a, e := logInit.Value().Values(), logTrans.Value().Values(), logEmit.Value().Values()
	delta := make([]float64, k)
	for j := range delta {
		delta[j] = pi[j] + e[j]
	}
	back := make([]int, t*k)
	next := make([]float64, k)
	for s := 1; s < t; s++ {
		for j := 0; j < k; j++ {
			best, arg := math.Inf(-1), 0
			for i := 0; i < k; i++ {
				if v := delta[i] + a[i*k+j]; v > best {
					best, arg = v, i
				}
			}
			next[j] = best + e[s*k+j]
			back[s*k+j] = arg
		}
		delta, next = next, delta
	}
	path := make([]int, t)
	best := math.Inf(-1)
	for j, v := range delta {
		if v > best {
			best, path[t-1] = v, j
		}
	}
	for s := t - 1; s > 0; s-- {
		path[s-1] = back[s*k+path[s]]
	}
	return path, best
}

// GaussianEmissions returns log N(xₜ; μₖ, σₖ²) shaped (..., T, K) for
// observations x (..., T) and the K states' means and standard deviations
// (K), differentiable in all three. It panics if means and scales are not
// vectors of one length or the operands are in different graphs or dtypes.
func GaussianEmissions(x, means, scales *graph.Node) *graph.Node {
	const op = "hmm.GaussianEmissions"
	if x == nil || means == nil || scales == nil {
		tensor.Fail(op, "nil operand")
	}
	if means.Dim() != 1 || scales.Dim() != 1 || means.Shape()[0] != scales.Shape()[0] || x.Dim() < 1 {
		tensor.Fail(op, "shapes %s: want x (..., T), means (K) and scales (K)", graph.Describe(x, means, scales))
	}
	return probabilistic.NewNormal(means, scales).LogProb(graph.Unsqueeze(x, -1))
}
