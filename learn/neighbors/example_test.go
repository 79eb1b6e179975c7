package neighbors_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/neighbors"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/tensor"
)

// Five nearest neighbours on the 8×8 digits: fitted on the first 1200
// images, tested on the remaining 597.
func ExampleFitClassifier() {
	x, labels, err := data.Classes("sklearn/digits.csv", "target")
	if err != nil {
		panic(err)
	}
	m, err := neighbors.FitClassifier(tensor.Slice(x, 0, 0, 1200, 1), labels[:1200], neighbors.ClassifierOptions{K: 5})
	if err != nil {
		panic(err)
	}
	test := tensor.Slice(x, 0, 1200, len(labels), 1)
	acc, _ := metrics.Accuracy(m.Predict(test), labels[1200:])
	fmt.Printf("test accuracy %.3f\n", acc)
	fmt.Printf("first test image: class %d, votes %.1f\n", m.Predict(tensor.Slice(test, 0, 0, 1, 1))[0], m.PredictProba(tensor.Slice(test, 0, 0, 1, 1)).Values())
	// Output:
	// test accuracy 0.965
	// first test image: class 7, votes [0.0 0.0 0.0 0.0 0.0 0.0 0.0 1.0 0.0 0.0]
}

// Seven nearest neighbours, weighted by inverse distance, predicting the
// diabetes progression of the last 92 patients from the first 350.
func ExampleFitRegressor() {
	tab, err := data.LoadCSV("sklearn/diabetes.csv")
	if err != nil {
		panic(err)
	}
	x, _ := tab.Select("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")
	y, _ := tab.Select("target")
	y = tensor.Reshape(y, 442)
	m, err := neighbors.FitRegressor(tensor.Slice(x, 0, 0, 350, 1), tensor.Slice(y, 0, 0, 350, 1), neighbors.RegressorOptions{K: 7, Weights: neighbors.Distance})
	if err != nil {
		panic(err)
	}
	pred := m.Predict(tensor.Slice(x, 0, 350, 442, 1)).Values()
	r2, _ := metrics.R2(pred, tensor.Slice(y, 0, 350, 442, 1).Values())
	fmt.Printf("first prediction %.1f, test R² %.3f\n", pred[0], r2)
	// Output:
	// first prediction 270.2, test R² 0.455
}
