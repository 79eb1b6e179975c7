package anomaly_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/learn/anomaly"
	"github.com/gradus-ml/gradus/tensor"
)

// Fit a density model of normal rows, choose the threshold by F₁ on a
// labelled validation split, and flag new rows.
func Example() {
	rng := tensor.NewRNG(1)
	d, err := anomaly.Fit(blobs(rng, 200, false), anomaly.Options{Components: 2, K: 2, Seed: 1})
	if err != nil {
		panic(err)
	}
	val := tensor.Concat(0, blobs(rng, 20, false), blobs(rng, 4, true))
	truth := make([]bool, 24)
	for i := 20; i < 24; i++ {
		truth[i] = true
	}
	f1, err := d.Calibrate(val, truth)
	if err != nil {
		panic(err)
	}
	flags, _ := d.Predict(tensor.Concat(0, blobs(rng, 2, false), blobs(rng, 2, true)))
	fmt.Println(f1, flags)
	// Output: 1 [false false true true]
}

func ExampleBestThreshold() {
	t, f1, _ := anomaly.BestThreshold([]float64{-1, -2, -10, -11, -3}, []bool{false, false, true, true, false})
	fmt.Println(t, f1)
	// Output: -6.5 1
}
