package checkpoint_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

func Example() {
	var buf bytes.Buffer
	err := checkpoint.Write(&buf, map[string]*tensor.Tensor{
		"a": tensor.FromFloat32s([]float32{1, 2}, 2),
	}, nil)
	if err != nil {
		panic(err)
	}
	b := buf.Bytes()
	fmt.Printf("%d-byte header |%s|\n", b[0], b[8:8+b[0]]) // padded with spaces
	fmt.Printf("data % x\n", b[8+b[0]:])

	ts, _, err := checkpoint.Read(&buf)
	if err != nil {
		panic(err)
	}
	fmt.Println(ts["a"].Values())
	// Output:
	// 56-byte header |{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}  |
	// data 00 00 80 3f 00 00 00 40
	// [1 2]
}

// Save stores a model with its optimiser; LoadInto restores both in one
// call, or neither.
func ExampleLoadInto() {
	dir, err := os.MkdirTemp("", "checkpoint-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	trained := nn.NewLinear(tensor.NewRNG(1), 2, 2, false, tensor.Float64)
	tensor.CopyInto(trained.Weight.Value, tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2))
	adam := optim.NewAdam(nn.Values(trained.Params()), optim.AdamOptions{})
	if err := adam.Step([]*tensor.Tensor{tensor.Ones(tensor.Float64, 2, 2)}); err != nil {
		panic(err)
	}
	err = checkpoint.Save(path, trained, checkpoint.SaveOptions{Optimizer: adam, Metadata: map[string]string{"epoch": "7"}})
	if err != nil {
		panic(err)
	}

	fresh := nn.NewLinear(tensor.NewRNG(2), 2, 2, false, tensor.Float64)
	freshAdam := optim.NewAdam(nn.Values(fresh.Params()), optim.AdamOptions{})
	meta, err := checkpoint.LoadInto(path, fresh, checkpoint.LoadOptions{Optimizer: freshAdam})
	if err != nil {
		panic(err)
	}
	fmt.Println(slices.Equal(fresh.Weight.Value.Values(), trained.Weight.Value.Values()), freshAdam.Steps(), meta["epoch"])

	// A model of another shape is refused, and it and its optimiser are
	// left untouched.
	wrong := nn.NewLinear(tensor.NewRNG(3), 2, 3, false, tensor.Float64)
	before := wrong.Weight.Value.Values()
	_, err = checkpoint.LoadInto(path, wrong, checkpoint.LoadOptions{})
	fmt.Println(errors.Is(err, checkpoint.ErrMismatch), slices.Equal(before, wrong.Weight.Value.Values()))
	// Output:
	// true 1 7
	// true true
}
