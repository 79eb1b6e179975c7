package data_test

import (
	"fmt"
	"strings"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/tensor"
)

func ExampleMNIST() {
	x, labels, err := data.MNIST("train")
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Shape(), len(labels), "first label:", labels[0])
	// Output: [8000 784] 8000 first label: 9
}

func ExampleBatcher() {
	b := data.NewBatcher(5, 2, data.BatchOptions{NoShuffle: true})
	for idx := range b.Epoch() {
		fmt.Print(idx)
	}
	fmt.Println()
	b = data.NewBatcher(5, 2, data.BatchOptions{Seed: 1, DropLast: true})
	n := 0
	for idx := range b.Epoch() {
		n += len(idx)
	}
	fmt.Println(b.NumBatches(), "batches,", n, "indices")
	// Output:
	// [0 1][2 3][4]
	// 2 batches, 4 indices
}

func ExampleStandardise() {
	x, _, err := data.MNIST("test")
	if err != nil {
		panic(err)
	}
	st := data.Standardise(x) // pixel statistics; the always-blank corners stay 0
	fmt.Printf("corner pixel: mean %.0f, std %.0f\n", st.Mean[0], st.Std[0])
	// Output: corner pixel: mean 0, std 0
}

func ExampleLoader() {
	// Rows (i, i²) labelled i, in batches of 3, reshuffled every epoch from
	// the seed, built ahead on two goroutines. Each batch is handed back
	// once used, so the loader builds later batches in its memory.
	x := tensor.FromFloat64s([]float64{0, 0, 1, 1, 2, 4, 3, 9, 4, 16}, 5, 2)
	ds := data.TensorDataset{X: x, Labels: []int{0, 1, 2, 3, 4}}
	l := data.NewLoader(ds, data.LoaderOptions{BatchSize: 3, Sampler: data.Sequential{N: 5}, Workers: 2})
	for b := range l.Epoch(0) {
		fmt.Println(b.X.Shape(), b.Labels)
		l.Release(b)
	}
	// Output:
	// [3 2] [0 1 2]
	// [2 2] [3 4]
}

// ReadCSV reads a header and numeric rows; Select picks columns by name.
// A field that is not a number is reported with its file, line and column.
func ExampleReadCSV() {
	tab, err := data.ReadCSV(strings.NewReader("x,y,label\n1.5,2,0\n3,4.5,1\n"), "points.csv")
	if err != nil {
		panic(err)
	}
	x, _ := tab.Select("y", "x")
	fmt.Println(x.Shape(), x.Float64s())

	_, err = data.ReadCSV(strings.NewReader("x,y\n1,2\n3,oops\n"), "bad.csv")
	fmt.Println(err)
	// Output:
	// [2 2] [2 1.5 4.5 3]
	// data: bad.csv:3: column 2 ("y"): "oops" is not a number
}
