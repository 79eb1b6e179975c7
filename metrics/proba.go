package metrics

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// LogLossProba returns the mean negative log-probability of the labels,
// −(1/n)Σ log p[i, label i], with probabilities clipped to [1e-15, 1] as
// scikit-learn's log_loss does, for p an (n, classes) tensor of class
// probabilities such as a classifier's PredictProba returns. It returns an
// error if p is not 2-D, its rows and the labels differ in number, or a
// label is out of range.
func LogLossProba(p *tensor.Tensor, labels []int) (float64, error) {
	const op = "metrics.LogLossProba"
	if p == nil || p.Dim() != 2 {
		return 0, fmt.Errorf("%s: probabilities must be an (n, classes) tensor, got %v", op, shapeOf(p))
	}
	n, c := p.Shape()[0], p.Shape()[1]
	if err := sameLen(op, n, len(labels)); err != nil {
		return 0, err
	}
	v := p.Values()
	s := 0.0
	for i, l := range labels {
		if l < 0 || l >= c {
			return 0, fmt.Errorf("%s: label %d of row %d is out of range [0, %d)", op, l, i, c)
		}
		s -= math.Log(math.Max(v[i*c+l], 1e-15))
	}
	return s / float64(n), nil
}

// shapeOf describes a possibly nil tensor's shape for an error message.
func shapeOf(t *tensor.Tensor) string {
	if t == nil {
		return "nil"
	}
	return fmt.Sprint(t.Shape())
}
