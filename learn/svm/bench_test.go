package svm_test

import (
	"context"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// The SMO solver on the two problems of examples/svm/peers/bench.py, which
// times scikit-learn's SVC (LIBSVM) on the same data and settings: an RBF
// kernel with γ = 1/(n_features·Var(X)), C = 1, tolerance 1e-3 and a 100 MB
// kernel cache, shrinking on. Run both alternately and compare medians;
// -cpu 1 keeps the kernel columns on one core, as LIBSVM's.
func BenchmarkFitSVC(b *testing.B) {
	b.Run("breast-cancer", func(b *testing.B) {
		x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
		if err != nil {
			b.Fatal(err)
		}
		data.Standardise(x)
		benchFit(b, x, labels)
	})
	b.Run("mnist-0-vs-1", func(b *testing.B) {
		all, digits, err := data.MNIST("train")
		if err != nil {
			b.Fatal(err)
		}
		var rows, labels []int
		for i, d := range digits {
			if d <= 1 {
				rows, labels = append(rows, i), append(labels, d)
			}
		}
		benchFit(b, tensor.IndexSelect(all, 0, rows).Cast(tensor.Float64), labels)
	})
}

func benchFit(b *testing.B, x *tensor.Tensor, labels []int) {
	gamma := svm.ScaleGamma(x)
	k := kernel.NewRBF(math.Sqrt(1 / (2 * gamma)))
	b.ResetTimer()
	for range b.N {
		m, err := svm.FitSVC(context.Background(), x, labels, svm.SVCOptions{Kernel: k})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(m.Machines[0].Support)), "SVs")
	}
}
