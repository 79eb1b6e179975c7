package ensemble

import (
	"fmt"
	"math"
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// AdaBoost is a weighted vote of classification trees, AdaBoost.M1 in its
// multiclass form SAMME (Zhu et al. 2009; Freund and Schapire 1997 for two
// classes): each round fits a tree to a sample drawn by the current
// weights, and its vote α = log((1 − ε)/ε) + log(K − 1) grows as its
// weighted error ε shrinks. For two classes this is forward stagewise
// minimisation of the exponential loss Σ exp(−yᵢF(xᵢ)).
type AdaBoost struct {
	Trees   []*ClassTree
	Alphas  []float64
	Classes int
	// TrainError is the ensemble's training error after each round.
	TrainError []float64
}

// FitAdaBoost runs rounds rounds of SAMME with trees of the given options
// (MaxDepth 1, stumps, by default), resampling by weight with seed. It
// stops early when a tree is perfect on the weighted sample (ε = 0) or no
// better than chance (ε ≥ 1 − 1/K).
func FitAdaBoost(x *tensor.Tensor, labels []int, classes, rounds int, opts ClassTreeOptions, seed uint64) (*AdaBoost, error) {
	rows, err := classRows("ensemble.FitAdaBoost", x, labels, classes)
	if err != nil {
		return nil, err
	}
	if rounds < 1 || classes < 2 {
		return nil, fmt.Errorf("ensemble.FitAdaBoost: %d rounds, %d classes", rounds, classes)
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = 1
	}
	n := len(rows)
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / float64(n)
	}
	rng := tensor.NewRNG(seed)
	a := &AdaBoost{Classes: classes}
	votes := make([][]float64, n)
	for i := range votes {
		votes[i] = make([]float64, classes)
	}
	cum := make([]float64, n)
	for range rounds {
		total := 0.0
		for i, v := range w {
			total += v
			cum[i] = total
		}
		idx := make([]int, n)
		for k := range idx {
			idx[k] = min(sort.SearchFloat64s(cum, rng.Float64()*total), n-1)
		}
		t := growClassTree(rows, labels, classes, idx, opts, rng)
		eps := 0.0
		wrong := make([]bool, n)
		for i, r := range rows {
			if argmax(t.Proba(r)) != labels[i] {
				wrong[i] = true
				eps += w[i]
			}
		}
		eps /= total
		if eps >= 1-1/float64(classes) {
			break
		}
		alpha := math.Log(float64(classes) - 1)
		if eps > 0 {
			alpha += math.Log((1 - eps) / eps)
		} else {
			alpha += 10 // a perfect tree: a large, finite vote
		}
		a.Trees, a.Alphas = append(a.Trees, t), append(a.Alphas, alpha)
		errs := 0
		for i, r := range rows {
			votes[i][argmax(t.Proba(r))] += alpha
			if wrong[i] {
				w[i] *= math.Exp(alpha)
			}
			if argmax(votes[i]) != labels[i] {
				errs++
			}
		}
		a.TrainError = append(a.TrainError, float64(errs)/float64(n))
		if eps == 0 {
			break
		}
	}
	if len(a.Trees) == 0 {
		return nil, fmt.Errorf("ensemble.FitAdaBoost: the first tree was no better than chance")
	}
	return a, nil
}

// Predict returns the class with the largest total vote for each row.
func (a *AdaBoost) Predict(x *tensor.Tensor) []int {
	if x == nil || x.Dim() != 2 {
		tensor.Fail("ensemble.AdaBoost.Predict", "want an (m, d) matrix, got %v", x)
	}
	m, d := x.Shape()[0], x.Shape()[1]
	v := x.Cast(tensor.Float64).Contiguous().Values()
	out := make([]int, m)
	votes := make([]float64, a.Classes)
	for i := range out {
		clear(votes)
		for k, t := range a.Trees {
			votes[argmax(t.Proba(v[i*d:(i+1)*d]))] += a.Alphas[k]
		}
		out[i] = argmax(votes)
	}
	return out
}
