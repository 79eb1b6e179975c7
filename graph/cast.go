package graph

import "github.com/gradus-ml/gradus/tensor"

func init() { Register(castOp{}) }

// castOp converts its input to dtype dt. It is linear, so the VJP casts the
// cotangent back to the input's dtype and the JVP casts the tangent to dt.
type castOp struct{ dt tensor.DType }

func (castOp) Name() string { return "cast" }

func (castOp) Arity() int { return 1 }

func (o castOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x := in[0]
	if x.DType() == o.dt {
		return x // graph values are never modified, so sharing is safe
	}
	out := g.AllocUninit(o.dt, x.Shape()...)
	if x.Device() != tensor.CPU {
		return tensor.CastTo(out, x) // the device's cast kernel
	}
	c := x.Contiguous()
	if o.dt == tensor.Float64 {
		dst := out.Float64s()
		for i, v := range c.Float32s() {
			dst[i] = float64(v)
		}
	} else {
		dst := out.Float32s()
		for i, v := range c.Float64s() {
			dst[i] = float32(v)
		}
	}
	return out
}

func (castOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, Cast(ct, out.inputs[0].DType()))
}

func (o castOp) JVP(out *Node, t []*Node) *Node { return Cast(t[0], o.dt) }

func (o castOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Cast returns x converted to dtype dt (float64 → float32 rounds to
// nearest), so one graph can mix dtypes: a float32 model feeding a float64
// loss, or float32 features into a float64 Cholesky. Gradients flow back
// in x's dtype. Casting to x's own dtype gives an identity node sharing
// x's value. It panics for an unknown dtype.
func Cast(x *Node, dt tensor.DType) *Node {
	checkNodes("cast", x)
	if dt != tensor.Float32 && dt != tensor.Float64 {
		tensor.Fail("cast", "unknown dtype %v (operand %s)", dt, Describe(x))
	}
	return Apply(castOp{dt}, x)
}
