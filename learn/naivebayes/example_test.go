package naivebayes_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/naivebayes"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/tensor"
)

// Gaussian naive Bayes on the iris flowers: training accuracy and the
// class probabilities of a versicolor (row 70) that looks like a virginica.
func ExampleFitGaussian() {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		panic(err)
	}
	m, err := naivebayes.FitGaussian(x, labels, naivebayes.GaussianOptions{})
	if err != nil {
		panic(err)
	}
	acc, _ := metrics.Accuracy(m.Predict(x), labels)
	fmt.Printf("training accuracy %.3f\n", acc)
	fmt.Printf("row 70: %.3f\n", m.PredictProba(tensor.Slice(x, 0, 70, 71, 1)).Values())
	// Output:
	// training accuracy 0.960
	// row 70: [0.000 0.154 0.846]
}

// Multinomial naive Bayes on the 8×8 digits, whose pixels are ink counts
// 0 … 16: trained on the first 1000 images, tested on the rest.
func ExampleFitMultinomial() {
	x, labels, err := data.Classes("sklearn/digits.csv", "target")
	if err != nil {
		panic(err)
	}
	m, err := naivebayes.FitMultinomial(tensor.Slice(x, 0, 0, 1000, 1), labels[:1000], naivebayes.MultinomialOptions{})
	if err != nil {
		panic(err)
	}
	acc, _ := metrics.Accuracy(m.Predict(tensor.Slice(x, 0, 1000, len(labels), 1)), labels[1000:])
	fmt.Printf("test accuracy %.3f\n", acc)
	// Output:
	// test accuracy 0.871
}
