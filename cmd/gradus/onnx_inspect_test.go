package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/tensor"
)

func TestONNXInspect(t *testing.T) {
	rng := tensor.NewRNG(1)
	m := nn.NewSequential(nn.NewLinear(rng, 4, 8, true, tensor.Float64), nn.Tanh{}, nn.NewLinear(rng, 8, 2, false, tensor.Float64))
	path := filepath.Join(t.TempDir(), "m.onnx")
	require.NoError(t, onnx.Save(path, m, []*tensor.Tensor{tensor.Zeros(tensor.Float64, 3, 4)}, onnx.ExportOptions{}))
	var out bytes.Buffer
	require.NoError(t, run([]string{"onnx", "inspect", path}, &out))
	assert.Equal(t, "ONNX IR 8, opset ai.onnx 17, producer gradus, graph \"gradus\"\n"+
		"input   input   float64  (batch, 4)\n"+
		"output  output  float64  (batch, 2)\n"+
		"4 nodes: Gemm 2, Identity 1, Tanh 1\n"+
		"56 parameters in 3 initializers\n", out.String())
	assert.ErrorContains(t, run([]string{"onnx", "inspect"}, &out), "usage")
	bad := filepath.Join(t.TempDir(), "bad.onnx")
	require.NoError(t, os.WriteFile(bad, []byte{0xff, 0xff}, 0o644))
	assert.ErrorContains(t, run([]string{"onnx", "inspect", bad}, &out), "not an ONNX model")
}
