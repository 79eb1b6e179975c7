package losses

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// bceSumOp is Σ (softplus(x) − x·t) over all elements in one pass: what
// BCEWithLogits and BernoulliNLL compute for the Sum reduction (the
// Bernoulli reconstruction loss of a VAE), without the four full-size
// intermediate tensors of the composite softplus(x) − x·t.
type bceSumOp struct{}

const bceSumName = "losses.bce_with_logits_sum"

func init() { graph.Register(bceSumOp{}) }

func (bceSumOp) Name() string { return bceSumName }

func (bceSumOp) Arity() int { return 2 }

func (bceSumOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	x, t := in[0].Contiguous(), in[1].Contiguous()
	out := g.AllocUninit(x.DType())
	if x.Device() != tensor.CPU {
		// On a GPU, the composite with the device's kernels, in buffers
		// the graph recycles; the sum adds in the tensor's dtype.
		sp := tensor.SoftplusTo(g.AllocUninit(x.DType(), x.Shape()...), x)
		xt := tensor.MulTo(g.AllocUninit(x.DType(), x.Shape()...), x, t)
		return tensor.SumInto(out, tensor.SubTo(sp, sp, xt), nil, false)
	}
	if x.DType() == tensor.Float64 {
		var s float64
		tv := t.Float64s()
		for i, v := range x.Float64s() {
			s += math.Max(v, 0) - v*tv[i] + math.Log1p(math.Exp(-math.Abs(v)))
		}
		out.Float64s()[0] = s
		return out
	}
	// softplus(x) comes from tensor's vectorised float32 kernel into a
	// scratch buffer the graph recycles on Reset. Accumulate float32 terms
	// in float64: 10⁵ terms per batch would otherwise lose about three
	// digits of the sum.
	sp := tensor.SoftplusTo(g.AllocUninit(tensor.Float32, x.Shape()...), x).Float32s()
	var s float64
	tv := t.Float32s()
	for i, v := range x.Float32s() {
		s += float64(sp[i] - v*tv[i])
	}
	out.Float32s()[0] = float32(s)
	return out
}

// ∂/∂x = σ(x) − t, ∂/∂t = −x.
func (bceSumOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	x, t := out.Inputs()[0], out.Inputs()[1]
	var gx, gt *graph.Node
	if needs[0] {
		gx = graph.Mul(graph.Sub(graph.Sigmoid(x), t), ct)
	}
	if needs[1] {
		gt = graph.Mul(graph.Neg(x), ct)
	}
	return []*graph.Node{gx, gt}
}

func (bceSumOp) JVP(out *graph.Node, tangents []*graph.Node) *graph.Node {
	x, t := out.Inputs()[0], out.Inputs()[1]
	var d *graph.Node
	if tangents[0] != nil {
		d = graph.Sum(graph.Mul(graph.Sub(graph.Sigmoid(x), t), tangents[0]), nil, false)
	}
	if tangents[1] != nil {
		dt := graph.Neg(graph.Sum(graph.Mul(x, tangents[1]), nil, false))
		if d == nil {
			return dt
		}
		d = graph.Add(d, dt)
	}
	return d
}

// Batch loops over the examples (vmap): the fused sum has no per-example form.
func (o bceSumOp) Batch(b *graph.Batching, in []*graph.Node, axes []int) (*graph.Node, int) {
	return graph.BatchLoop(b, o, in, axes)
}
