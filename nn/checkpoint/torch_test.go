package checkpoint_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/tensor"
)

// torchOutputs is testdata/torch_outputs.json, written by make_torch.py
// with torch 1.13 next to the two safetensors files.
type torchOutputs struct {
	CNN struct {
		XShape []int     `json:"x_shape"`
		X      []float64 `json:"x"`
		YShape []int     `json:"y_shape"`
		Y      []float64 `json:"y"`
	} `json:"cnn"`
	LSTM struct {
		XShape []int     `json:"x_shape"`
		X      []float64 `json:"x"`
		Out    []float64 `json:"out"`
		H      []float64 `json:"h"`
		C      []float64 `json:"c"`
	} `json:"lstm"`
}

func readTorchOutputs(t *testing.T) torchOutputs {
	b, err := os.ReadFile("testdata/torch_outputs.json")
	require.NoError(t, err)
	var o torchOutputs
	require.NoError(t, json.Unmarshal(b, &o))
	return o
}

// A PyTorch Sequential(Conv2d, BatchNorm2d, ReLU, MaxPool2d, Flatten,
// Linear) after three training steps, saved with its int64
// num_batches_tracked, loads into the same Gradus layers by the same
// dotted names, and in eval mode gives PyTorch's outputs to 1e-5.
func TestTorchCNNWithBatchNorm(t *testing.T) {
	o := readTorchOutputs(t)
	rng := tensor.NewRNG(1)
	bn := nn.NewBatchNorm2D(4, tensor.Float32)
	m := nn.NewSequential(
		nn.NewConv2D(rng, 2, 4, [2]int{3, 3}, nn.Conv2DOptions{Padding: [2]int{1, 1}}),
		bn,
		nn.ReLU{},
		nn.NewMaxPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}}),
		nn.NewFlatten(),
		nn.NewLinear(rng, 36, 3, true, tensor.Float32),
	)
	meta, err := checkpoint.LoadInto("testdata/torch_cnn.safetensors", m, checkpoint.LoadOptions{})
	require.NoError(t, err)
	assert.Equal(t, "pt", meta["format"], "the metadata PyTorch's writer stores")
	assert.Equal(t, 3.0, bn.NumBatchesTracked.Value.Item(), "num_batches_tracked (I64 in the file)")
	assert.Equal(t, tensor.Float32, bn.NumBatchesTracked.Value.DType())

	m.SetTraining(false)
	g := graph.New()
	y := m.Forward(g.Const(tensor.FromValues(tensor.Float32, o.CNN.X, o.CNN.XShape...)))
	require.Equal(t, o.CNN.YShape, y.Shape())
	assert.InDeltaSlice(t, o.CNN.Y, y.Value().Values(), 1e-5)
}

// A PyTorch LSTM(3, 4, num_layers=2, batch_first=True) loads into
// nn.LSTM by weight_ih_l0 … bias_hh_l1 (gates i, f, g, o in both) and
// gives PyTorch's outputs and final states to 1e-5.
func TestTorchLSTM(t *testing.T) {
	o := readTorchOutputs(t)
	m := nn.NewLSTM(tensor.NewRNG(1), 3, 4, nn.RNNOptions{Layers: 2, BatchFirst: true})
	_, err := checkpoint.LoadInto("testdata/torch_lstm.safetensors", m, checkpoint.LoadOptions{})
	require.NoError(t, err)
	g := graph.New()
	out, h, c := m.Forward(g.Const(tensor.FromValues(tensor.Float32, o.LSTM.X, o.LSTM.XShape...)), nil, nil)
	assert.Equal(t, []int{2, 5, 4}, out.Shape())
	assert.InDeltaSlice(t, o.LSTM.Out, out.Value().Values(), 1e-5)
	assert.InDeltaSlice(t, o.LSTM.H, h.Value().Values(), 1e-5)
	assert.InDeltaSlice(t, o.LSTM.C, c.Value().Values(), 1e-5)
}

// The CNN's checkpoint refused by a model of another architecture (one
// channel fewer) leaves every parameter as it was.
func TestTorchCNNOtherArchitectureUntouched(t *testing.T) {
	rng := tensor.NewRNG(1)
	m := nn.NewSequential(
		nn.NewConv2D(rng, 2, 3, [2]int{3, 3}, nn.Conv2DOptions{Padding: [2]int{1, 1}}),
		nn.NewBatchNorm2D(3, tensor.Float32),
	)
	st := nn.State(m)
	before := map[string][]float64{}
	for k, v := range st {
		before[k] = v.Values()
	}
	_, err := checkpoint.LoadInto("testdata/torch_cnn.safetensors", m, checkpoint.LoadOptions{})
	require.ErrorIs(t, err, checkpoint.ErrMismatch)
	assert.Contains(t, err.Error(), "0.weight")
	for k, v := range st {
		assert.Equal(t, before[k], v.Values(), k)
	}
}

var updateGradus = flag.Bool("update", false, "rewrite testdata/gradus_cnn.safetensors and gradus_cnn.json")

// gradusCNN is the fixture CNN's architecture with Gradus's own seeded
// initialisation and running statistics from two training-mode batches.
func gradusCNN(t *testing.T) (*nn.Sequential, *tensor.Tensor) {
	rng := tensor.NewRNG(7)
	m := nn.NewSequential(
		nn.NewConv2D(rng, 2, 4, [2]int{3, 3}, nn.Conv2DOptions{Padding: [2]int{1, 1}}),
		nn.NewBatchNorm2D(4, tensor.Float32),
		nn.ReLU{},
		nn.NewMaxPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}}),
		nn.NewFlatten(),
		nn.NewLinear(rng, 36, 3, true, tensor.Float32),
	)
	for range 2 {
		m.Forward(graph.New().Const(rng.Normal(tensor.Float32, 0, 1, 8, 2, 6, 6)))
	}
	m.SetTraining(false)
	return m, rng.Normal(tensor.Float32, 0, 1, 2, 2, 6, 6)
}

// The reverse direction: a Gradus checkpoint of the CNN, with its input and
// eval output in gradus_cnn.json, which testdata/check_gradus.py loads into
// torch 1.13's Sequential (by the same names) and compares (run by hand:
// tests cannot call Python). Here the committed file's tensors and output
// must equal what Gradus computes now (to 1e-5), so the file PyTorch
// checked is the one Gradus makes.
func TestGradusCNNForTorch(t *testing.T) {
	m, x := gradusCNN(t)
	y := m.Forward(graph.New().Const(x)).Value()
	var buf bytes.Buffer
	require.NoError(t, checkpoint.Write(&buf, nn.State(m), map[string]string{"format": "pt"}))
	js, err := json.Marshal(map[string]any{"x_shape": x.Shape(), "x": x.Values(), "y_shape": y.Shape(), "y": y.Values()})
	require.NoError(t, err)
	if *updateGradus {
		require.NoError(t, os.WriteFile("testdata/gradus_cnn.safetensors", buf.Bytes(), 0o644))
		require.NoError(t, os.WriteFile("testdata/gradus_cnn.json", js, 0o644))
	}
	// Values, not bytes: float32 kernels may round differently on another
	// CPU, so the check allows 1e-5.
	want, _, err := checkpoint.ReadFile("testdata/gradus_cnn.safetensors")
	require.NoError(t, err)
	got := nn.State(m)
	require.Len(t, want, len(got))
	for k, v := range got {
		require.Contains(t, want, k)
		assert.InDeltaSlice(t, want[k].Values(), v.Values(), 1e-5, k)
	}
	var fx struct {
		Y []float64 `json:"y"`
	}
	b, err := os.ReadFile("testdata/gradus_cnn.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &fx))
	assert.InDeltaSlice(t, fx.Y, y.Values(), 1e-5)
}
