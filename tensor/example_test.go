package tensor_test

// Runnable forms of the package doc's example (broadcasting, a reduction)
// and of the error policy (Recover).

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

func Example() {
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	b := tensor.FromFloat64s([]float64{10, 20, 30}, 3)
	y := tensor.Add(x, b) // broadcasts b over the rows
	fmt.Println(y)
	fmt.Println(tensor.Sum(y, []int{1}, false))
	// Output:
	// [[11, 22, 33], [14, 25, 36]]
	// [66, 75]
}

func ExampleRecover() {
	mismatched := func() (err error) {
		defer tensor.Recover(&err)
		tensor.Add(tensor.New(tensor.Float32, 2, 3), tensor.New(tensor.Float32, 4))
		return nil
	}
	err := mismatched()
	var te *tensor.Error
	fmt.Println(errors.As(err, &te), te.Op)
	// The message names both shapes.
	fmt.Println(strings.Contains(te.Msg, "(2, 3)"), strings.Contains(te.Msg, "(4,)"))
	// Output:
	// true Add
	// true true
}
