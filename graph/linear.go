package graph

import (
	"github.com/gradus-ml/gradus/tensor"
)

// The linear op is x·wᵀ + b for x (..., in), w (out, in) and b (out): the
// affine map of a dense layer, fused so that the bias lands in the
// product's output as the GEMM writes it instead of in a second pass over
// it. Its rules are matmuls and a sum.

func init() { Register(linearOp{}) }

type linearOp struct{}

func (linearOp) Name() string { return "linear" }

func (linearOp) Arity() int { return 3 }

func (linearOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x, w, b := in[0], in[1], in[2]
	sx := x.Shape()
	shape := g.AllocInts(len(sx))
	copy(shape, sx)
	shape[len(sx)-1] = w.Shape()[0]
	return kern.MatMulBiasT(g.AllocUninit(x.DType(), shape...), x, w, b, false, true)
}

// check validates x of at least two dimensions, w (out, in) and b (out) of
// one dtype.
func (linearOp) check(in []*Node) {
	x, w, b := in[0], in[1], in[2]
	if x.DType() != w.DType() || x.DType() != b.DType() {
		tensor.Fail("linear", "mixed dtypes: %s", Describe(x, w, b))
	}
	if x.Dim() < 2 || w.Dim() != 2 || b.Dim() != 1 || x.Shape()[x.Dim()-1] != w.Shape()[1] || b.Shape()[0] != w.Shape()[0] {
		tensor.Fail("linear", "operands %s do not fit: want x (..., in), w (out, in), b (out)", Describe(x, w, b))
	}
}

// For y = x·wᵀ + b: dx = ct·w, dw = ctᵀ·x summed over every row of the
// batch (one GEMM over the flattened rows), db = ct summed over the rows.
func (linearOp) VJP(out, ct *Node, needs []bool) []*Node {
	x, w := out.inputs[0], out.inputs[1]
	nOut, nIn := w.Shape()[0], w.Shape()[1]
	var dx, dw, db *Node
	if needs[0] {
		dx = matmulT(ct, w, false, false)
	}
	if needs[1] {
		dw = matmulT(Reshape(ct, -1, nOut), Reshape(x, -1, nIn), true, false)
	}
	if needs[2] {
		db = SumTo(ct, nOut)
	}
	return cotangents(out, dx, dw, db)
}

func (linearOp) JVP(out *Node, t []*Node) *Node {
	x, w := out.inputs[0], out.inputs[1]
	var sum *Node
	add := func(term *Node) {
		if sum == nil {
			sum = term
		} else {
			sum = Add(sum, term)
		}
	}
	if t[0] != nil {
		add(matmulT(t[0], w, false, true))
	}
	if t[1] != nil {
		add(matmulT(x, t[1], false, true))
	}
	if t[2] != nil {
		add(t[2])
	}
	if sum != nil && sum.Dim() != out.Dim() {
		sum = BroadcastTo(sum, out.Shape()...)
	}
	return sum
}

// With shared weights the examples are more rows of x: one GEMM. Per-example weights make it a batched matmul plus a bias.
func (o linearOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	x, ax := in[0], axes[0]
	if axes[1] == NotBatched && axes[2] == NotBatched {
		if ax == x.Dim()-1 {
			x, ax = b.toFront(x, ax), 0
		}
		return Apply(o, x, in[1], in[2]), ax
	}
	y, ay := matmulOp{false, true}.Batch(b, in[:2], axes[:2]) // unbatched when only the bias is
	return addOp{}.Batch(b, []*Node{y, in[2]}, []int{ay, axes[2]})
}

// Linear returns x·wᵀ + b for x (..., in) (or a vector (in)), w (out, in)
// and b (out): PyTorch's F.linear. It computes the product and the bias in
// one pass over the output. It panics for mixed dtypes or shapes that do
// not fit.
func Linear(x, w, b *Node) *Node {
	checkNodes("linear", x, w, b)
	if x.Dim() == 0 {
		tensor.Fail("linear", "scalar input: %s", Describe(x, w, b))
	}
	vec := x.Dim() == 1
	if vec {
		x = Reshape(x, 1, x.Shape()[0])
	}
	linearOp{}.check([]*Node{x, w, b})
	y := apply(linearOp{}, x, w, b)
	if vec {
		return Reshape(y, w.Shape()[0])
	}
	return y
}
