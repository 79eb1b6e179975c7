package anomaly_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/learn/anomaly"
	"github.com/gradus-ml/gradus/tensor"
)

// Fit a density model of normal rows, choose the threshold by F₁ on a
// labelled validation split, and flag new rows.
func Example() {
	rng := tensor.NewRNG(1)
	d, err := anomaly.FitDetector(context.Background(), blobs(rng, 200, false), anomaly.Options{Components: 2, K: 2, Seed: 1})
	if err != nil {
		panic(err)
	}
	val := tensor.Concat(0, blobs(rng, 20, false), blobs(rng, 4, true))
	truth := make([]int, 24)
	for i := 20; i < 24; i++ {
		truth[i] = 1
	}
	f1, err := d.Calibrate(val, truth)
	if err != nil {
		panic(err)
	}
	flags := d.Predict(tensor.Concat(0, blobs(rng, 2, false), blobs(rng, 2, true)))
	fmt.Println(f1, flags)
	// Output: 1 [0 0 1 1]
}

func ExampleBestThreshold() {
	t, f1, _ := anomaly.BestThreshold([]float64{-1, -2, -10, -11, -3}, []int{0, 0, 1, 1, 0})
	fmt.Println(t, f1)
	// Output: -6.5 1
}
