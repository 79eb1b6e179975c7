package nn

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// PositionEmbedding adds to step p of a sequence the row p of a table of
// MaxLen vectors of size Dim: a learned table (GPT's position embedding,
// NewPositionEmbedding) or the fixed sinusoidal encodings of Vaswani et
// al. (NewSinusoidalEmbedding). A sequence longer than the table is an
// error, never a silent wrap-around.
type PositionEmbedding struct {
	Weight  *Param // (MaxLen, Dim); trained only if Learned
	MaxLen  int    // positions in the table
	Dim     int    // size of each vector
	Learned bool   // the table is a parameter (else a constant)
}

// NewPositionEmbedding returns a learned table of maxLen positions of size
// dim drawn from N(0, 1), as PyTorch's nn.Embedding(maxLen, dim) that
// models use for it.
func NewPositionEmbedding(rng *tensor.RNG, maxLen, dim int, dt tensor.DType) *PositionEmbedding {
	if maxLen <= 0 || dim <= 0 {
		tensor.Fail("nn.NewPositionEmbedding", "sizes must be positive, got maxLen=%d dim=%d", maxLen, dim)
	}
	w := Normal(rng, tensor.Zeros(dt, maxLen, dim), 0, 1)
	return &PositionEmbedding{Weight: NewParam(w), MaxLen: maxLen, Dim: dim, Learned: true}
}

// NewSinusoidalEmbedding returns the fixed table SinusoidalPositions(dt,
// maxLen, dim); it has no parameters.
func NewSinusoidalEmbedding(maxLen, dim int, dt tensor.DType) *PositionEmbedding {
	if maxLen <= 0 || dim <= 0 {
		tensor.Fail("nn.NewSinusoidalEmbedding", "sizes must be positive, got maxLen=%d dim=%d", maxLen, dim)
	}
	return &PositionEmbedding{Weight: NewParam(SinusoidalPositions(dt, maxLen, dim)), MaxLen: maxLen, Dim: dim}
}

// String names the layer as its errors do, e.g. "PositionEmbedding(256, 64)".
func (p *PositionEmbedding) String() string {
	kind := "PositionEmbedding"
	if !p.Learned {
		kind = "SinusoidalEmbedding"
	}
	return fmt.Sprintf("%s(%d, %d)", kind, p.MaxLen, p.Dim)
}

// Params returns "weight" for a learned table and nil for a fixed one.
func (p *PositionEmbedding) Params() []NamedParam {
	if !p.Learned {
		return nil
	}
	return []NamedParam{{"weight", p.Weight}}
}

// SetTraining does nothing: the layer is the same in both modes.
func (p *PositionEmbedding) SetTraining(bool) {}

// Table returns the first n rows of the table in g, shaped (n, Dim). It
// panics, naming the layer, if n exceeds MaxLen.
func (p *PositionEmbedding) Table(g *graph.Graph, n int) *graph.Node {
	if n <= 0 || n > p.MaxLen {
		tensor.Fail(p.String(), "a sequence of %d steps does not fit the position table of %d positions", n, p.MaxLen)
	}
	var w *graph.Node
	if p.Learned {
		w = p.Weight.Node(g)
	} else {
		w = g.Const(p.Weight.Value)
	}
	if n == p.MaxLen {
		return w
	}
	return graph.Slice(w, 0, 0, n, 1)
}

// Forward returns x (..., L, Dim) plus the first L rows of the table,
// broadcast over the leading axes. It panics, naming the layer and the
// shapes, if x does not end in Dim or L exceeds MaxLen.
func (p *PositionEmbedding) Forward(x *graph.Node) *graph.Node {
	checkInput(p, x, p.Weight.Value.DType())
	s := x.Shape()
	if len(s) < 2 || s[len(s)-1] != p.Dim {
		tensor.Fail(p.String(), "input shape %s does not fit: want (..., L, %d)", tensor.FormatShape(s), p.Dim)
	}
	return graph.Add(x, p.Table(x.Graph(), s[len(s)-2]))
}
