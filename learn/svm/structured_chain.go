package svm

import (
	"fmt"
	"math"
)

// Chain is sequence labelling as a StructuredModel: an input is a
// sequence of T feature vectors of length Width ([][]float64) and an
// output a label per position (0 … States−1), with the joint feature map
// of a chain (the hidden Markov support vector machine of Altun,
// Tsochantaridis and Hofmann 2003, "Hidden Markov Support Vector
// Machines"):
//
//	ψ(x, y) = ( Σₜ xₜ ⊗ e_{yₜ},  Σₜ e_{yₜ₋₁} ⊗ e_{yₜ},  e_{y₁} )
//
// (emission weights States×Width, transition weights States×States,
// start weights States), the Hamming loss Δ(y, ŷ) = #{t : yₜ ≠ ŷₜ}, and
// both argmaxes by the Viterbi algorithm (Viterbi 1967), the loss added
// to each position's score for the loss-augmented one.
type Chain struct {
	States, Width int
}

// Dim returns States·Width + States² + States.
func (c Chain) Dim() int { return c.States*c.Width + c.States*c.States + c.States }

// Features returns ψ(x, y).
func (c Chain) Features(x [][]float64, y []int) []float64 {
	k, d := c.States, c.Width
	f := make([]float64, c.Dim())
	for t, xt := range x {
		for j, v := range xt {
			f[y[t]*d+j] += v
		}
		if t > 0 {
			f[k*d+y[t-1]*k+y[t]]++
		}
	}
	if len(y) > 0 {
		f[k*d+k*k+y[0]]++
	}
	return f
}

// Loss returns the Hamming distance of y and ŷ.
func (c Chain) Loss(y, yhat []int) float64 {
	l := 0.0
	for t := range y {
		if y[t] != yhat[t] {
			l++
		}
	}
	return l
}

// LossAugmented returns argmax_ŷ Δ(y, ŷ) + wᵀψ(x, ŷ) by Viterbi.
func (c Chain) LossAugmented(w []float64, x [][]float64, y []int) []int { return c.viterbi(w, x, y) }

// Predict returns argmax_y wᵀψ(x, y) by Viterbi.
func (c Chain) Predict(w []float64, x [][]float64) []int { return c.viterbi(w, x, nil) }

// viterbi returns the best label sequence under wᵀψ, plus a unit bonus
// for each position whose label differs from truth when truth is given.
func (c Chain) viterbi(w []float64, x [][]float64, truth []int) []int {
	k, d, tn := c.States, c.Width, len(x)
	if tn == 0 {
		return nil
	}
	trans, start := w[k*d:k*d+k*k], w[k*d+k*k:]
	node := func(t, s int) float64 {
		v := 0.0
		for j, xv := range x[t] {
			v += w[s*d+j] * xv
		}
		if truth != nil && truth[t] != s {
			v++
		}
		return v
	}
	score := make([]float64, k)
	back := make([][]int, tn)
	for s := range score {
		score[s] = start[s] + node(0, s)
	}
	next := make([]float64, k)
	for t := 1; t < tn; t++ {
		back[t] = make([]int, k)
		for s := 0; s < k; s++ {
			best, arg := math.Inf(-1), 0
			for p := 0; p < k; p++ {
				if v := score[p] + trans[p*k+s]; v > best {
					best, arg = v, p
				}
			}
			next[s], back[t][s] = best+node(t, s), arg
		}
		score, next = next, score
	}
	out := make([]int, tn)
	for s := range score {
		if score[s] > score[out[tn-1]] {
			out[tn-1] = s
		}
	}
	for t := tn - 1; t > 0; t-- {
		out[t-1] = back[t][out[t]]
	}
	return out
}

// Check rejects an empty sequence, lengths that differ, feature vectors
// of the wrong length or with non-finite values, labels outside
// 0 … States−1, and a Chain with fewer than two states or no features.
func (c Chain) Check(x [][]float64, y []int) error {
	if c.States < 2 || c.Width < 1 {
		return fmt.Errorf("svm.Chain: %d states and %d features; want at least 2 and 1", c.States, c.Width)
	}
	if len(x) == 0 || len(x) != len(y) {
		return fmt.Errorf("a sequence of %d positions with %d labels", len(x), len(y))
	}
	for t, xt := range x {
		if len(xt) != c.Width {
			return fmt.Errorf("position %d has %d features, want %d", t, len(xt), c.Width)
		}
		for j, v := range xt {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("position %d, feature %d is %g", t, j, v)
			}
		}
		if y[t] < 0 || y[t] >= c.States {
			return fmt.Errorf("label %d at position %d; want 0 to %d", y[t], t, c.States-1)
		}
	}
	return nil
}
