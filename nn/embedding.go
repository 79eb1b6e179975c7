package nn

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Embedding is a lookup table of Num vectors of size Dim (PyTorch's
// nn.Embedding), its weight shaped (Num, Dim).
type Embedding struct {
	Weight *Param // (Num, Dim)
	Num    int    // number of embeddings (the vocabulary size)
	Dim    int    // size of each embedding vector
}

// NewEmbedding returns a table of num vectors of size dim drawn from
// N(0, 1), as PyTorch initialises it.
func NewEmbedding(rng *tensor.RNG, num, dim int, dt tensor.DType) *Embedding {
	if num <= 0 || dim <= 0 {
		tensor.Fail("nn.NewEmbedding", "sizes must be positive, got num=%d dim=%d", num, dim)
	}
	return &Embedding{Weight: NewParam(Normal(rng, tensor.Zeros(dt, num, dim), 0, 1)), Num: num, Dim: dim}
}

// String names the layer as its errors do, e.g. "Embedding(1000, 64)".
func (e *Embedding) String() string { return fmt.Sprintf("Embedding(%d, %d)", e.Num, e.Dim) }

// Params returns "weight".
func (e *Embedding) Params() []NamedParam { return []NamedParam{{"weight", e.Weight}} }

// SetTraining does nothing: a lookup behaves the same in both modes.
func (e *Embedding) SetTraining(bool) {}

// Forward returns the rows idx of the table in g, shaped (len(idx), Dim),
// or (shape..., Dim) when a shape is given (for example (B, T) for a batch
// of sequences; its size must be len(idx)). Gradients flow to the rows
// used, summed over repeats. It panics, naming the layer, if an index is
// out of range or the shape does not fit.
func (e *Embedding) Forward(g *graph.Graph, idx []int, shape ...int) *graph.Node {
	for i, k := range idx {
		if k < 0 || k >= e.Num {
			tensor.Fail(e.String(), "index %d (position %d) is out of range [0, %d)", k, i, e.Num)
		}
	}
	y := graph.IndexSelect(e.Weight.Node(g), 0, idx)
	if len(shape) == 0 {
		return y
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n != len(idx) {
		tensor.Fail(e.String(), "shape %s does not fit %d indices", tensor.FormatShape(shape), len(idx))
	}
	return graph.Reshape(y, append(append([]int(nil), shape...), e.Dim)...)
}
