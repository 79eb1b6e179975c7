package svm

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// fitProbability fits a Platt sigmoid to each machine's decision values on
// the rows it was trained on. A sigmoid out of iterations is kept, and the
// first such *tensor.NotConvergedError returned after all are fitted.
func (m *SVC) fitProbability(op string, x *tensor.Tensor, labels []int) error {
	var notConv error
	m.platt = make([]Platt, len(m.Machines))
	for j, b := range m.Machines {
		var rows []int
		for i, l := range labels {
			if m.OneVsRest || l == b.Positive || l == b.Negative {
				rows = append(rows, i)
			}
		}
		sub := tensor.IndexSelect(x, 0, rows)
		target := make([]int, len(rows))
		for t, r := range rows {
			if labels[r] == b.Positive {
				target[t] = 1
			}
		}
		p, err := FitPlatt(b.Decision(sub), target, PlattOptions{})
		var nc *tensor.NotConvergedError
		switch {
		case errors.As(err, &nc):
			if notConv == nil {
				notConv = fmt.Errorf("%s: probability of machine %d: %w", op, j, err)
			}
		case err != nil:
			return fmt.Errorf("%s: probability of machine %d: %w", op, j, err)
		}
		m.platt[j] = p
	}
	return notConv
}

// PredictProba returns the class probabilities of the rows of x (m, d) as
// an (m, classes) tensor, columns in the order of Classes, rows summing to
// one: each machine's decision value through its Platt sigmoid, combined
// for one-vs-one machines by the pairwise coupling of Wu, Lin and Weng
// (2004, Probability estimates for multi-class classification by pairwise
// coupling, method 2, as LIBSVM) and for one-vs-rest machines by
// normalising. The sigmoids are fitted on the training rows' decision
// values, which makes them somewhat overconfident (LIBSVM fits them by
// cross-validation). It panics with a *tensor.Error unless the model was
// fitted with Probability set and x is a matrix with the training columns.
func (m *SVC) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	if m.platt == nil {
		tensor.Fail("svm.SVC.PredictProba", "the model was fitted without Probability in its options")
	}
	dec := m.Decision(x)
	rows, k := x.Shape()[0], len(m.Classes)
	out := make([]float64, rows*k)
	pr := func(j, i int) float64 {
		return m.platt[j].PredictProba(tensor.FromFloat64s([]float64{dec.At(i, j)}, 1)).At(0, 1)
	}
	index := make(map[int]int, k)
	for c, l := range m.Classes {
		index[l] = c
	}
	r := make([][]float64, k)
	for c := range r {
		r[c] = make([]float64, k)
	}
	for i := range rows {
		p := out[i*k : (i+1)*k]
		switch {
		case m.OneVsRest:
			s := 0.0
			for j := range m.Machines {
				p[j] = pr(j, i)
				s += p[j]
			}
			for j := range p {
				p[j] /= s
			}
		case k == 2:
			b := m.Machines[0]
			q := pr(0, i)
			p[index[b.Positive]], p[index[b.Negative]] = q, 1-q
		default:
			const floor = 1e-7 // LIBSVM's bound on pairwise probabilities
			for j, b := range m.Machines {
				q := math.Min(math.Max(pr(j, i), floor), 1-floor)
				a, c := index[b.Positive], index[b.Negative]
				r[a][c], r[c][a] = q, 1-q
			}
			couple(r, p)
		}
	}
	return tensor.FromFloat64s(out, rows, k)
}

// couple solves Wu, Lin and Weng's (2004) method 2 for the class
// probabilities p from the pairwise ones r[i][j] = P(i | i or j), by
// LIBSVM's fixed-point iteration (multiclass_probability).
func couple(r [][]float64, p []float64) {
	k := len(p)
	q := make([][]float64, k)
	for t := range q {
		q[t] = make([]float64, k)
		p[t] = 1 / float64(k)
		for j := range k {
			if j != t {
				q[t][t] += r[j][t] * r[j][t]
				q[t][j] = -r[j][t] * r[t][j]
			}
		}
	}
	qp := make([]float64, k)
	eps := 0.005 / float64(k)
	for range max(100, k) {
		pqp := 0.0
		for t := range k {
			qp[t] = 0
			for j := range k {
				qp[t] += q[t][j] * p[j]
			}
			pqp += p[t] * qp[t]
		}
		worst := 0.0
		for t := range k {
			worst = math.Max(worst, math.Abs(qp[t]-pqp))
		}
		if worst < eps {
			return
		}
		for t := range k {
			diff := (-qp[t] + pqp) / q[t][t]
			p[t] += diff
			pqp = (pqp + diff*(diff*q[t][t]+2*qp[t])) / (1 + diff) / (1 + diff)
			for j := range k {
				qp[j] = (qp[j] + diff*q[t][j]) / (1 + diff)
				p[j] /= 1 + diff
			}
		}
	}
}
