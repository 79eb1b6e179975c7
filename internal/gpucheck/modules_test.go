//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// moduleCase builds a module from a seed and applies it to a graph's
// input; each case runs once with its parameters moved to the GPU and
// once on the CPU.
type moduleCase struct {
	name  string
	shape []int // the input's shape (float32, standard normal)
	build func(rng *tensor.RNG) (nn.Module, func(x *graph.Node) *graph.Node)
}

func layer(l nn.Layer) (nn.Module, func(*graph.Node) *graph.Node) { return l, l.Forward }

var moduleCases = []moduleCase{
	{"Conv2D (stride, padding, groups)", []int{2, 4, 9, 9}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewConv2D(r, 4, 6, [2]int{3, 3}, nn.Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, Groups: 2}))
	}},
	{"ConvTranspose2D", []int{2, 3, 5, 5}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewConvTranspose2D(r, 3, 4, [2]int{3, 3}, nn.Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, OutputPadding: [2]int{1, 1}}))
	}},
	{"Conv1D", []int{2, 3, 11}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewConv1D(r, 3, 5, 3, nn.Conv1DOptions{Padding: 1, Dilation: 2}))
	}},
	{"BatchNorm2D (training: batch statistics, running averages)", []int{4, 3, 5, 5}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewBatchNorm2D(3, tensor.Float32))
	}},
	{"BatchNorm1D", []int{8, 6}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewBatchNorm1D(6, tensor.Float32))
	}},
	{"GroupNorm", []int{2, 6, 4, 4}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewGroupNorm(3, 6, 1e-5, true, tensor.Float32))
	}},
	{"InstanceNorm", []int{2, 3, 4, 4}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewInstanceNorm(3, 1e-5, true, tensor.Float32))
	}},
	{"LayerNorm", []int{3, 5, 8}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewLayerNorm([]int{8}, 1e-5, true, tensor.Float32))
	}},
	{"RMSNorm", []int{3, 5, 8}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewRMSNorm([]int{8}, 1e-6, true, tensor.Float32))
	}},
	{"Dropout (mask drawn on the host)", []int{6, 10}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewDropout(r, 0.3))
	}},
	{"Sequential: conv, batch norm, ReLU, max pool, flatten, linear", []int{2, 3, 8, 8}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewSequential(nn.NewConv2D(r, 3, 4, [2]int{3, 3}, nn.Conv2DOptions{Padding: [2]int{1, 1}}),
			nn.NewBatchNorm2D(4, tensor.Float32), nn.ReLU{}, nn.NewMaxPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}}),
			nn.NewAvgPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}}), nn.NewFlatten(), nn.NewLinear(r, 16, 5, true, tensor.Float32)))
	}},
	{"Remat of a Sequential", []int{4, 6}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewRemat(nn.NewSequential(nn.NewLinear(r, 6, 7, true, tensor.Float32), nn.Tanh{}, nn.NewLinear(r, 7, 3, true, tensor.Float32))))
	}},
	{"PositionEmbedding", []int{2, 5, 8}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		return layer(nn.NewPositionEmbedding(r, 7, 8, tensor.Float32))
	}},
	{"MultiheadAttention (causal)", []int{2, 5, 8}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		m := nn.NewMultiheadAttention(r, 8, 2, tensor.Float32)
		return m, func(x *graph.Node) *graph.Node { return m.Forward(x, x, x, nil, true) }
	}},
	{"TransformerEncoderLayer", []int{2, 5, 8}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		m := nn.NewTransformerEncoderLayer(r, 8, 2, 16, tensor.Float32)
		return m, func(x *graph.Node) *graph.Node { return m.Forward(x, nil, false) }
	}},
	{"TransformerDecoderLayer (cross-attention)", []int{2, 5, 8}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		m := nn.NewTransformerDecoderLayer(r, 8, 2, 16, true, tensor.Float32)
		return m, func(x *graph.Node) *graph.Node { return m.Forward(x, graph.Tanh(x), nil, nil, true) }
	}},
	{"LSTM (two layers, bidirectional)", []int{4, 2, 3}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		m := nn.NewLSTM(r, 3, 5, nn.RNNOptions{Layers: 2, Bidirectional: true})
		return m, func(x *graph.Node) *graph.Node { out, _, _ := m.Forward(x, nil, nil); return out }
	}},
	{"GRU (batch first)", []int{2, 4, 3}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		m := nn.NewGRU(r, 3, 5, nn.RNNOptions{BatchFirst: true})
		return m, func(x *graph.Node) *graph.Node { out, _ := m.Forward(x, nil); return out }
	}},
	{"RNN (two layers, bidirectional)", []int{4, 2, 3}, func(r *tensor.RNG) (nn.Module, func(*graph.Node) *graph.Node) {
		m := nn.NewRNN(r, 3, 5, nn.RNNOptions{Layers: 2, Bidirectional: true})
		return m, func(x *graph.Node) *graph.Node { out, _ := m.Forward(x, nil); return out }
	}},
}

// TestModulesOnGPU applies every module case on the GPU and on the CPU,
// from the same parameters, in training mode: the outputs, the gradients
// of a weighted sum of them with respect to every parameter and the
// input, and the buffers (batch norm's running statistics) agree within
// float32 rounding (1e-4 relative to max(1, |x|)).
func TestModulesOnGPU(t *testing.T) {
	dev := device(t)
	for i, c := range moduleCases {
		t.Run(c.name, func(t *testing.T) {
			x := randn(tensor.Float32, uint64(60+i), c.shape...)
			type result struct {
				out, dx *tensor.Tensor
				grads   []*tensor.Tensor
				bufs    []nn.NamedParam
				params  []nn.NamedParam
			}
			run := func(d tensor.Device) result {
				m, f := c.build(tensor.NewRNG(uint64(10 + i)))
				nn.To(m, d)
				m.SetTraining(true)
				g := graph.New()
				xn := g.Var(x.To(d))
				out := f(xn)
				w := randn(tensor.Float32, 99, out.Shape()...)
				loss := graph.Sum(graph.Mul(out, g.Const(w)), nil, false)
				ps := m.Params()
				dx := autodiff.Grad(loss, xn)[0].Value()
				return result{out: out.Value(), dx: dx, grads: nn.Gradients(loss, ps), bufs: nn.Buffers(m), params: ps}
			}
			gr, cr := run(dev), run(tensor.CPU)
			near(t, "output", gr.out, cr.out, 1e-4)
			near(t, "input gradient", gr.dx, cr.dx, 1e-4)
			for j, p := range cr.params {
				near(t, p.Name+" gradient", gr.grads[j], cr.grads[j], 1e-4)
			}
			for j, b := range cr.bufs {
				near(t, fmt.Sprintf("buffer %s", b.Name), gr.bufs[j].Value, b.Value, 1e-4)
			}
		})
	}
}

// TestTokenModulesOnGPU: an Embedding and a small TransformerLM, whose
// inputs are token indices, give the same outputs and parameter
// gradients on the GPU as on the CPU.
func TestTokenModulesOnGPU(t *testing.T) {
	dev := device(t)
	tokens := []int{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}
	for _, c := range []struct {
		name  string
		build func(r *tensor.RNG) (nn.Module, func(g *graph.Graph) *graph.Node)
	}{
		{"Embedding", func(r *tensor.RNG) (nn.Module, func(g *graph.Graph) *graph.Node) {
			e := nn.NewEmbedding(r, 10, 4, tensor.Float32)
			return e, func(g *graph.Graph) *graph.Node { return e.Forward(g, tokens, 2, 5) }
		}},
		{"TransformerLM", func(r *tensor.RNG) (nn.Module, func(g *graph.Graph) *graph.Node) {
			m := nn.NewTransformerLM(r, nn.TransformerLMOptions{Vocab: 10, Context: 8, Width: 8, Heads: 2, Layers: 1}, tensor.Float32)
			return m, func(g *graph.Graph) *graph.Node { return m.Forward(g, tokens, 2) }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(d tensor.Device) (*tensor.Tensor, []*tensor.Tensor, []nn.NamedParam) {
				m, f := c.build(tensor.NewRNG(21))
				nn.To(m, d)
				g := graph.New()
				out := f(g)
				w := randn(tensor.Float32, 98, out.Shape()...)
				loss := graph.Sum(graph.Mul(out, g.Const(w)), nil, false)
				return out.Value(), nn.Gradients(loss, m.Params()), m.Params()
			}
			go_, gg, _ := run(dev)
			co, cg, ps := run(tensor.CPU)
			near(t, "output", go_, co, 1e-4)
			for j, p := range ps {
				near(t, p.Name+" gradient", gg[j], cg[j], 1e-4)
			}
		})
	}
}

// TestTransformerLMSampleOnGPU: sampling from a TransformerLM on the GPU
// (its logits read back each step) draws the tokens the CPU model draws
// from the same seed.
func TestTransformerLMSampleOnGPU(t *testing.T) {
	dev := device(t)
	sample := func(d tensor.Device) []int {
		m := nn.NewTransformerLM(tensor.NewRNG(23), nn.TransformerLMOptions{Vocab: 12, Context: 8, Width: 8, Heads: 2, Layers: 1}, tensor.Float32)
		nn.To(m, d)
		return m.Sample(tensor.NewRNG(4), []int{1, 2, 3}, 6, 0.8)
	}
	if g, c := sample(dev), sample(tensor.CPU); !slices.Equal(g, c) {
		t.Fatalf("sampled %v on the GPU, %v on the CPU", g, c)
	}
}
