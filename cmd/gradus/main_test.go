package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/tensor"
)

func TestInspect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	require.NoError(t, checkpoint.WriteFile(path, map[string]*tensor.Tensor{
		"fc.weight": tensor.Zeros(tensor.Float32, 2, 3),
		"fc.bias":   tensor.Zeros(tensor.Float64, 2),
	}, map[string]string{"epoch": "3"}))
	var out bytes.Buffer
	require.NoError(t, run([]string{"inspect", path}, &out))
	assert.Equal(t, "name       dtype  shape   bytes\n"+
		"fc.bias    F64    (2,)    16\n"+
		"fc.weight  F32    (2, 3)  24\n"+
		"2 tensors, 40 bytes\n"+
		"metadata epoch = 3\n", out.String())
	assert.ErrorContains(t, run([]string{"inspect"}, &out), "usage")
	assert.Error(t, run([]string{"inspect", filepath.Join(t.TempDir(), "missing")}, &out))
}
