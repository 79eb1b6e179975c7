package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/nn/checkpoint"
)

// A short fine-tuning of the imported PyTorch CNN on 1,000 digits beats
// the model as exported on 500 test digits; the safetensors and ONNX
// round trips are exact.
func TestRunSmall(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"imported_accuracy", "finetuned_accuracy", "operators", "roundtrip_max_abs_diff"},
		Pictures: []string{"training.png"}, Files: []string{"model.safetensors", "model.onnx", "torch.safetensors"}},
		"-train-n", "1000", "-test-n", "500", "-batch", "25")
	assert.Greater(t, res.ImportedAccuracy, 0.6)
	assert.Greater(t, res.FinetunedAccuracy, res.ImportedAccuracy+0.03)
	assert.Less(t, res.FinetunedLoss, res.ImportedLoss)
	assert.Equal(t, []string{"Constant", "Conv", "Flatten", "Gemm", "MaxPool", "Relu", "Reshape"}, res.Operators)
	assert.Equal(t, []string{"conv.weight", "conv.bias", "fc.weight", "fc.bias"}, res.Params)
	assert.Equal(t, 0.0, res.RoundtripMaxAbsDiff)
	assert.Equal(t, "onnx", res.Roundtrip)
	assert.Equal(t, 0.0, res.CheckpointMaxAbsDiff)
	assert.Len(t, res.StepLoss, 40)
	// The embedded model keeps PyTorch's names and layouts: the PyTorch
	// weights are the checkpoint's tensors.
	assert.Equal(t, []string{"conv.bias", "conv.weight", "fc.bias", "fc.weight"}, res.TorchTensors)
	torch, _, err := checkpoint.ReadFile(res.TorchWeights)
	require.NoError(t, err)
	gradus, _, err := checkpoint.ReadFile(res.Checkpoint)
	require.NoError(t, err)
	for _, name := range res.TorchTensors {
		assert.Equal(t, gradus[name].Values(), torch[name].Values(), name)
	}
}

// Bad flags exit with 2; a file that is not an ONNX model with 1.
func TestBadInput(t *testing.T) {
	clitest.Fails(t, program(), 2, "-epochs", "0")
	clitest.Fails(t, program(), 1, "-model", "main.go")
}
