package metrics_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/metrics"
)

func ExamplePrecisionRecallF1() {
	pred := []int{0, 1, 1, 2, 2, 0}
	labels := []int{0, 1, 2, 2, 1, 1}
	acc, _ := metrics.Accuracy(pred, labels)
	_, macro, _, _ := metrics.PrecisionRecallF1(pred, labels, 3)
	auc, _ := metrics.ROCAUC([]float64{0.8, 0.4, 0.3, 0.4, 0.1}, []int{1, 1, 0, 0, 0})
	fmt.Printf("accuracy %.3f, macro F1 %.3f, AUC %.3f\n", acc, macro.F1, auc)
	// Output: accuracy 0.500, macro F1 0.522, AUC 0.917
}
