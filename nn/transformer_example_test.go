package nn_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

func ExampleTransformerLM() {
	// A GPT-style character model: 3 sequences of 8 tokens in, one logit
	// per vocabulary entry and step out; step t sees tokens 0…t only.
	m := nn.NewTransformerLM(tensor.NewRNG(1), nn.TransformerLMOptions{
		Vocab: 20, Context: 16, Width: 32, Heads: 4, Layers: 2}, tensor.Float32)
	tokens := make([]int, 3*8)
	for i := range tokens {
		tokens[i] = i % 20
	}
	g := graph.New()
	logits := m.Forward(g, tokens, 3)
	// Parameters: 20·32 + 16·32 embeddings, 2 blocks of 12,704, the final
	// norm's 64 and the head's 32·20 + 20.
	fmt.Println(logits.Shape(), nn.NumParams(m))
	next := m.Sample(tensor.NewRNG(2), []int{1, 2, 3}, 5, 0.8) // five more tokens at temperature 0.8
	fmt.Println(len(next))
	// Output:
	// [3 8 20] 27284
	// 5
}

func ExampleTransformerDecoderLayer() {
	// A decoder block reading a memory of 4 steps by cross-attention;
	// PyTorch's state_dict names.
	l := nn.NewTransformerDecoderLayer(tensor.NewRNG(1), 8, 2, 16, true, tensor.Float64)
	g := graph.New()
	x := g.Const(tensor.Zeros(tensor.Float64, 2, 5, 8))
	memory := g.Const(tensor.Ones(tensor.Float64, 2, 4, 8))
	fmt.Println(l.Forward(x, memory, nil, nil, true).Shape())
	fmt.Println(l.Params()[4].Name)
	// Output:
	// [2 5 8]
	// multihead_attn.in_proj_weight
}

func ExamplePositionEmbedding() {
	p := nn.NewSinusoidalEmbedding(4, 2, tensor.Float64)
	g := graph.New()
	y := p.Forward(g.Const(tensor.Zeros(tensor.Float64, 2, 2))) // (L=2, D=2)
	fmt.Printf("%.4f\n", y.Value().Values())
	defer func() { fmt.Println(recover().(*tensor.Error).Msg) }()
	p.Forward(g.Const(tensor.Zeros(tensor.Float64, 5, 2)))
	// Output:
	// [0.0000 1.0000 0.8415 0.5403]
	// a sequence of 5 steps does not fit the position table of 4 positions
}
