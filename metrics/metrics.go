// Package metrics scores predictions: classification (accuracy, top-k
// accuracy, the confusion matrix, per-class and macro/micro precision,
// recall and F₁, ROC AUC, log loss, expected calibration error) and
// regression (MSE, MAE, R²), and clusterings (the adjusted Rand index).
// Labels and predicted classes are []int and class scores or
// probabilities an (n, classes) tensor, the forms every classifier and
// train.Predict return, so they pass straight in; regression values are
// []float64. The functions return an error for inputs of different
// lengths, scores that are not (n, classes), or labels out of range.
package metrics

import (
	"fmt"
	"math"
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// table returns the rows of an (n, classes) scores tensor as float64
// slices, or an error naming op unless it is 2-D with one row per label.
func table(op string, scores *tensor.Tensor, labels []int) ([][]float64, error) {
	if scores == nil || scores.Dim() != 2 {
		shape := "nil"
		if scores != nil {
			shape = tensor.FormatShape(scores.Shape())
		}
		return nil, fmt.Errorf("%s: scores must be an (n, classes) tensor, got %s", op, shape)
	}
	n, c := scores.Shape()[0], scores.Shape()[1]
	if err := sameLen(op, n, len(labels)); err != nil {
		return nil, err
	}
	vals := scores.Values()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = vals[i*c : (i+1)*c]
	}
	return rows, nil
}

// Accuracy returns the fraction of predictions equal to the labels.
func Accuracy(pred, labels []int) (float64, error) {
	if err := sameLen("metrics.Accuracy", len(pred), len(labels)); err != nil {
		return 0, err
	}
	right := 0
	for i, p := range pred {
		if p == labels[i] {
			right++
		}
	}
	return float64(right) / float64(len(pred)), nil
}

// TopK returns the fraction of rows of scores (n, classes) whose label is
// among the k highest scores (ties broken towards the lower class index).
func TopK(scoreTable *tensor.Tensor, labels []int, k int) (float64, error) {
	scores, err := table("metrics.TopK", scoreTable, labels)
	if err != nil {
		return 0, err
	}
	hit := 0
	for i, row := range scores {
		l := labels[i]
		if l < 0 || l >= len(row) {
			return 0, fmt.Errorf("metrics.TopK: label %d of row %d is out of range [0, %d)", l, i, len(row))
		}
		above := 0
		for c, s := range row {
			if s > row[l] || (s == row[l] && c < l) {
				above++
			}
		}
		if above < k {
			hit++
		}
	}
	return float64(hit) / float64(len(scores)), nil
}

// Confusion returns the classes×classes matrix whose entry [t][p] counts
// the rows of true class t predicted as p.
func Confusion(pred, labels []int, classes int) ([][]int, error) {
	if err := sameLen("metrics.Confusion", len(pred), len(labels)); err != nil {
		return nil, err
	}
	m := make([][]int, classes)
	for i := range m {
		m[i] = make([]int, classes)
	}
	for i, p := range pred {
		t := labels[i]
		if p < 0 || p >= classes || t < 0 || t >= classes {
			return nil, fmt.Errorf("metrics.Confusion: row %d has prediction %d and label %d, classes are [0, %d)", i, p, t, classes)
		}
		m[t][p]++
	}
	return m, nil
}

// PRF holds precision, recall and F₁.
type PRF struct{ Precision, Recall, F1 float64 }

// PrecisionRecallF1 returns the per-class scores and their macro (mean over
// classes) and micro (from the pooled counts; equal to accuracy for
// single-label data) averages. A class never predicted has precision 0, as
// scikit-learn's zero_division=0.
func PrecisionRecallF1(pred, labels []int, classes int) (perClass []PRF, macro, micro PRF, err error) {
	m, err := Confusion(pred, labels, classes)
	if err != nil {
		return nil, macro, micro, err
	}
	var tpAll, fpAll, fnAll int
	for c := range classes {
		tp, fp, fn := m[c][c], 0, 0
		for o := range classes {
			if o != c {
				fp += m[o][c]
				fn += m[c][o]
			}
		}
		s := prf(tp, fp, fn)
		perClass = append(perClass, s)
		macro.Precision += s.Precision / float64(classes)
		macro.Recall += s.Recall / float64(classes)
		macro.F1 += s.F1 / float64(classes)
		tpAll, fpAll, fnAll = tpAll+tp, fpAll+fp, fnAll+fn
	}
	return perClass, macro, prf(tpAll, fpAll, fnAll), nil
}

func prf(tp, fp, fn int) PRF {
	var s PRF
	if tp+fp > 0 {
		s.Precision = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		s.Recall = float64(tp) / float64(tp+fn)
	}
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	return s
}

// ROCAUC returns the area under the ROC curve of scores for the binary
// labels (1 positive, 0 negative): the probability that a random positive
// scores above a random negative, ties counting one half (the
// Mann-Whitney statistic). It needs both classes.
func ROCAUC(scores []float64, labels []int) (float64, error) {
	if err := sameLen("metrics.ROCAUC", len(scores), len(labels)); err != nil {
		return 0, err
	}
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	var pos, neg int
	rankSum := 0.0
	for lo := 0; lo < len(idx); {
		hi := lo
		for hi+1 < len(idx) && scores[idx[hi+1]] == scores[idx[lo]] {
			hi++
		}
		mid := float64(lo+hi)/2 + 1 // average rank of the tie group
		for k := lo; k <= hi; k++ {
			switch labels[idx[k]] {
			case 1:
				pos++
				rankSum += mid
			case 0:
				neg++
			default:
				return 0, fmt.Errorf("metrics.ROCAUC: label %d of row %d is not 0 or 1", labels[idx[k]], idx[k])
			}
		}
		lo = hi + 1
	}
	if pos == 0 || neg == 0 {
		return 0, fmt.Errorf("metrics.ROCAUC: need both classes, have %d positive and %d negative", pos, neg)
	}
	return (rankSum - float64(pos)*float64(pos+1)/2) / (float64(pos) * float64(neg)), nil
}

// LogLoss returns the mean negative log-probability of the labels under
// probs (n, classes), −(1/n)Σ log p[i][label i], with probabilities
// clipped to [1e-15, 1].
func LogLoss(probTable *tensor.Tensor, labels []int) (float64, error) {
	probs, err := table("metrics.LogLoss", probTable, labels)
	if err != nil {
		return 0, err
	}
	s := 0.0
	for i, row := range probs {
		l := labels[i]
		if l < 0 || l >= len(row) {
			return 0, fmt.Errorf("metrics.LogLoss: label %d of row %d is out of range [0, %d)", l, i, len(row))
		}
		s -= math.Log(math.Max(row[l], 1e-15))
	}
	return s / float64(len(probs)), nil
}

// ECE returns the expected calibration error with bins equal-width bins
// of confidence: Σ_b (n_b/n)·|accuracy_b − mean confidence_b|, where a
// row's confidence is its largest probability and it is right when that
// class is the label (Guo, Pleiss, Sun and Weinberger 2017, "On
// calibration of modern neural networks"). probs is (n, classes).
func ECE(probTable *tensor.Tensor, labels []int, bins int) (float64, error) {
	probs, err := table("metrics.ECE", probTable, labels)
	if err != nil {
		return 0, err
	}
	if bins < 1 {
		return 0, fmt.Errorf("metrics.ECE: %d bins", bins)
	}
	conf, acc := make([]float64, bins), make([]float64, bins)
	count := make([]int, bins)
	for i, row := range probs {
		best := 0
		for c, p := range row {
			if p > row[best] {
				best = c
			}
		}
		b := min(int(row[best]*float64(bins)), bins-1)
		conf[b] += row[best]
		if best == labels[i] {
			acc[b]++
		}
		count[b]++
	}
	e := 0.0
	for b := range bins {
		if count[b] > 0 {
			e += math.Abs(acc[b]-conf[b]) / float64(len(probs))
		}
	}
	return e, nil
}

// MSE returns the mean squared error.
func MSE(pred, target []float64) (float64, error) {
	if err := sameLen("metrics.MSE", len(pred), len(target)); err != nil {
		return 0, err
	}
	s := 0.0
	for i, p := range pred {
		s += (p - target[i]) * (p - target[i])
	}
	return s / float64(len(pred)), nil
}

// MAE returns the mean absolute error.
func MAE(pred, target []float64) (float64, error) {
	if err := sameLen("metrics.MAE", len(pred), len(target)); err != nil {
		return 0, err
	}
	s := 0.0
	for i, p := range pred {
		s += math.Abs(p - target[i])
	}
	return s / float64(len(pred)), nil
}

// R2 returns the coefficient of determination 1 − SS_res/SS_tot; it is
// an error when the targets are constant.
func R2(pred, target []float64) (float64, error) {
	if err := sameLen("metrics.R2", len(pred), len(target)); err != nil {
		return 0, err
	}
	mean := 0.0
	for _, t := range target {
		mean += t
	}
	mean /= float64(len(target))
	var res, tot float64
	for i, t := range target {
		res += (t - pred[i]) * (t - pred[i])
		tot += (t - mean) * (t - mean)
	}
	if tot == 0 {
		return 0, fmt.Errorf("metrics.R2: the targets are constant")
	}
	return 1 - res/tot, nil
}

func sameLen(op string, a, b int) error {
	if a != b {
		return fmt.Errorf("%s: %d predictions for %d labels", op, a, b)
	}
	if a == 0 {
		return fmt.Errorf("%s: no rows", op)
	}
	return nil
}
