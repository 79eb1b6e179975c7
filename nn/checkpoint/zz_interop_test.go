package checkpoint

import (
	"fmt"
	"os"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

func TestZZInterop(t *testing.T) {
	if os.Getenv("INTEROP") == "" {
		t.Skip()
	}
	ts := map[string]*tensor.Tensor{
		"enc.w": tensor.FromValues(tensor.Float32, []float64{1, 2, 3, 4, 5, 6}, 2, 3),
		"b":     tensor.FromValues(tensor.Float64, []float64{0.5, -1.25}, 2),
		"s":     tensor.Scalar(tensor.Float32, 3),
	}
	if err := WriteFile("/tmp/interop/go.safetensors", ts, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	got, meta, err := ReadFile("/tmp/interop/py.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("meta", meta)
	for k, v := range got {
		fmt.Println(k, v.DType(), v.Shape(), v.Values())
	}
}
