package cluster_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/learn/cluster"
	"github.com/gradus-ml/gradus/tensor"
)

func ExampleFitKMeans() {
	// Two groups on a line: {0, 2} and {10, 12}.
	x := tensor.FromFloat64s([]float64{0, 10, 2, 12}, 4, 1)
	res, err := cluster.FitKMeans(context.Background(), x, cluster.KMeansOptions{K: 2, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println("inertia", res.Inertia)
	fmt.Println("same cluster:", res.Labels[0] == res.Labels[2], res.Labels[1] == res.Labels[3])
	fmt.Println("new point 11 joins 10:", res.Predict(tensor.FromFloat64s([]float64{11}, 1, 1))[0] == res.Labels[1])
	// Output:
	// inertia 4
	// same cluster: true true
	// new point 11 joins 10: true
}

func ExampleFitDPMeans() {
	x := tensor.FromFloat64s([]float64{0, 1, 10, 11}, 4, 1)
	res, err := cluster.FitDPMeans(context.Background(), x, cluster.DPMeansOptions{Lambda: 4})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.K, "clusters, objective", res.Objective)
	// Output: 2 clusters, objective 9
}

// Mini-batch k-means on two groups far apart: each batch step pulls a
// centre towards its group, and the final assignment separates them.
func ExampleFitMiniBatchKMeans() {
	x := tensor.FromFloat64s([]float64{0, 10, 1, 11, 0.5, 10.5}, 6, 1)
	km, err := cluster.FitMiniBatchKMeans(context.Background(), x, cluster.MiniBatchKMeansOptions{K: 2, BatchSize: 4, Steps: 20, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(km.Labels[0] == km.Labels[2], km.Labels[1] == km.Labels[3], km.Labels[0] != km.Labels[1])
	// Output: true true true
}
