package autodiff

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Jacobian returns the full Jacobian ∂y/∂x as a tensor of shape
// y.Shape() followed by x.Shape(), in y's dtype. It is reverse mode: the
// VJP of y along every one-hot cotangent at once, as Vmap of VJP over the
// rows of the identity, so it suits outputs smaller than inputs (see
// JacobianFwd for the opposite). The nodes it builds stay in the graph
// until Reset.
//
// Jacobian panics with a *tensor.Error if x is nil or from another graph.
func Jacobian(y, x *graph.Node) *tensor.Tensor {
	checkNode("Jacobian", "y", y)
	checkXs("Jacobian", y.Graph(), []*graph.Node{x})
	rows := func(cts []*graph.Node) []*graph.Node {
		return backward("Jacobian", []*graph.Node{y}, cts, []*graph.Node{x})
	}
	return jacobianOf(y, x, y, rows, 0)
}

// JacobianFwd returns the same tensor as Jacobian using forward mode: the
// JVP of y along every one-hot tangent at once (Vmap of JVP), which suits
// inputs smaller than outputs.
//
// JacobianFwd panics with a *tensor.Error if x is nil or from another graph.
func JacobianFwd(y, x *graph.Node) *tensor.Tensor {
	checkNode("JacobianFwd", "y", y)
	checkXs("JacobianFwd", y.Graph(), []*graph.Node{x})
	return forwardJacobian("JacobianFwd", y, x)
}

// Hessian returns the matrix of second derivatives ∂²y/∂x∂x of the scalar
// y, with shape x.Shape() followed by x.Shape(). It is forward-over-reverse:
// the JVP of Grad(y, x) along every one-hot tangent at once.
//
// Hessian panics with a *tensor.Error if y does not have size 1, or if x is
// nil or from another graph.
func Hessian(y, x *graph.Node) *tensor.Tensor {
	checkNode("Hessian", "y", y)
	if y.Size() != 1 {
		tensor.Fail("Hessian", "y must have size 1, got shape %v %v", y.Shape(), y.DType())
	}
	checkXs("Hessian", y.Graph(), []*graph.Node{x})
	grad := Grad(y, x)[0]
	return forwardJacobian("Hessian", grad, x)
}

// forwardJacobian builds ∂y/∂x from the JVPs along the columns of the
// identity, the examples of the batch landing on y's last axis.
func forwardJacobian(op string, y, x *graph.Node) *tensor.Tensor {
	cols := func(ts []*graph.Node) []*graph.Node {
		return forward(op, []*graph.Node{y}, []*graph.Node{x}, ts)
	}
	return jacobianOf(y, x, x, cols, -1)
}

// jacobianOf vmaps f over the one-hot tensors shaped like seed (the
// identity's rows), the examples going to axis out of f's result, and
// returns the result as a (y.Shape(), x.Shape()) tensor in y's dtype.
func jacobianOf(y, x, seed *graph.Node, f func([]*graph.Node) []*graph.Node, out int) *tensor.Tensor {
	shape := concatShapes(y.Shape(), x.Shape())
	m := seed.Size()
	if m == 0 || y.Size() == 0 || x.Size() == 0 {
		return tensor.New(y.DType(), shape...)
	}
	g := y.Graph()
	eye := g.AllocHost(seed.DType(), append([]int{m}, seed.Shape()...)...)
	for k := range m {
		setFlat(eye, k*m+k, 1)
	}
	j := Vmap(f, VmapOptions{OutAxes: []int{out}})([]*graph.Node{g.Const(eye)})[0]
	return tensor.Reshape(j.Value().Cast(y.DType()).Contiguous(), shape...).Clone()
}

func concatShapes(a, b []int) []int {
	return append(append(make([]int, 0, len(a)+len(b)), a...), b...)
}

// setFlat sets the k-th element in row-major order of a contiguous tensor.
func setFlat(t *tensor.Tensor, k int, v float64) {
	if t.DType() == tensor.Float32 {
		t.Float32s()[k] = float32(v)
	} else {
		t.Float64s()[k] = v
	}
}
