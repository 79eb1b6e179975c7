package main

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/tensor"
)

// gradus onnx run reproduces the PyTorch output of the transformer
// encoder fixture (a float input and a boolean mask) from .npy files.
func TestONNXRun(t *testing.T) {
	dir := t.TempDir()
	fx, err := data.LoadNPZ("../../nn/onnx/testdata/encoder17.npz")
	require.NoError(t, err)
	x, mask, y := filepath.Join(dir, "x.npy"), filepath.Join(dir, "mask.npy"), filepath.Join(dir, "y.npy")
	require.NoError(t, writeNPY(x, fx["in0"]))
	require.NoError(t, writeNPY(mask, fx["in1"])) // booleans as float64 0/1
	var out bytes.Buffer
	require.NoError(t, run([]string{"onnx", "run", "../../nn/onnx/testdata/encoder17.onnx", x, mask, "-o", y}, &out))
	assert.Contains(t, out.String(), "out float32 (2, 5, 16)")
	got, err := data.LoadNPY(y)
	require.NoError(t, err)
	assert.Equal(t, tensor.Float32, got.DType())
	want := fx["out"].Values()
	for i, v := range got.Values() {
		if math.Abs(v-want[i]) > 1e-5 {
			t.Fatalf("output %d: %g, PyTorch %g", i, v, want[i])
		}
	}
	assert.ErrorContains(t, run([]string{"onnx", "run", "../../nn/onnx/testdata/encoder17.onnx", x, "-o", y}, &out), "takes 2 inputs (in0, in1), got 1")
	assert.ErrorContains(t, run([]string{"onnx", "run", "../../nn/onnx/testdata/encoder17.onnx", x, mask}, &out), "usage")
	assert.ErrorContains(t, run([]string{"onnx", "run", x, "-o", y}, &out), "not an ONNX model")
}

// writeNPY's files read back with their shapes and values, 0-D to 3-D.
func TestWriteNPY(t *testing.T) {
	for _, x := range []*tensor.Tensor{tensor.Scalar(tensor.Float64, 2.5), tensor.FromFloat32s([]float32{1, 2, 3}, 3),
		tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 3, 1, 2)} {
		path := filepath.Join(t.TempDir(), "t.npy")
		require.NoError(t, writeNPY(path, x))
		back, err := data.LoadNPY(path)
		require.NoError(t, err)
		assert.Equal(t, x.Shape(), back.Shape())
		assert.Equal(t, x.DType(), back.DType())
		assert.Equal(t, x.Values(), back.Values())
	}
}
