package onnx_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// heldOutLoss is the mean cross-entropy of m's logits on (x, y).
func heldOutLoss(t *testing.T, m *onnx.Model, x *tensor.Tensor, y []int) float64 {
	t.Helper()
	g := graph.New()
	out, err := m.Call(g, g.Const(x))
	if err != nil {
		t.Fatal(err)
	}
	return losses.CrossEntropy(out[0], y, losses.CrossEntropyOptions{}).Item()
}

// The MNIST CNN that testdata/zoo.py trained briefly in PyTorch (2,000
// digits, one epoch of SGD), imported and trained further with train and
// Adam on 2,000 other digits, improves its loss on 1,000 held-out test
// digits; its weights written as safetensors through TorchStateDict carry
// PyTorch's names, so that `make test-onnx-import` loads them into the
// PyTorch model with strict names (set GRADUS_ONNX_FINETUNED to keep the
// file).
func TestFineTune(t *testing.T) {
	t.Parallel()
	m, err := onnx.Open("testdata/digits.onnx")
	if err != nil {
		t.Fatal(err)
	}
	x, y, err := data.MNIST("train")
	if err != nil {
		t.Fatal(err)
	}
	xt, yt, err := data.MNIST("test")
	if err != nil {
		t.Fatal(err)
	}
	xt, yt = tensor.Slice(xt, 0, 0, 1000, 1).Contiguous(), yt[:1000]
	before := heldOutLoss(t, m, xt, yt)
	ds := data.TensorDataset{X: tensor.Slice(x, 0, 2000, 4000, 1).Contiguous(), Labels: y[2000:4000]}
	loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: 50, Seed: 1})
	opt := optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: 2e-3})
	loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
		return losses.CrossEntropy(m.Forward(g.Const(b.X)), b.Labels, losses.CrossEntropyOptions{})
	}
	if _, err := train.New(m, opt, loss, loader, train.Options{Epochs: 1}).Fit(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.SetTraining(false)
	after := heldOutLoss(t, m, xt, yt)
	t.Logf("held-out cross-entropy: %.4f imported, %.4f fine-tuned", before, after)
	if !(after < before-0.05) {
		t.Errorf("fine-tuning left the held-out loss at %.4f (from %.4f)", after, before)
	}
	path := os.Getenv("GRADUS_ONNX_FINETUNED")
	if path == "" {
		path = t.TempDir() + "/digits.safetensors"
	}
	meta := map[string]string{"heldout_loss": fmt.Sprintf("%.6f", after)}
	b, err := os.ReadFile("testdata/digits.json")
	if err != nil {
		t.Fatal(err)
	}
	var sources map[string]string
	if err := json.Unmarshal(b, &sources); err != nil {
		t.Fatal(err)
	}
	sd, err := onnx.TorchStateDict(m, sources)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.WriteFile(path, sd, meta); err != nil {
		t.Fatal(err)
	}
	back, _, err := checkpoint.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"conv.bias", "conv.weight", "fc.bias", "fc.weight"}
	if len(back) != len(want) {
		t.Errorf("safetensors holds %d tensors, want %v", len(back), want)
	}
	for _, name := range want {
		if back[name] == nil {
			t.Errorf("safetensors lacks %q", name)
		}
	}
}
