package autodiff

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Jacobian returns the full Jacobian ∂y/∂x as a tensor of shape
// y.Shape() followed by x.Shape(), in y's dtype. It is reverse mode: one
// VJP per element of y with a one-hot cotangent, so it suits outputs
// smaller than inputs (see JacobianFwd for the opposite). The nodes it
// builds stay in the graph until Reset.
//
// Jacobian panics with a *tensor.Error if x is nil or from another graph.
func Jacobian(y, x *graph.Node) *tensor.Tensor {
	checkNode("Jacobian", "y", y)
	checkXs("Jacobian", y.Graph(), []*graph.Node{x})
	g := y.Graph()
	m, n := y.Size(), x.Size()
	jac := tensor.New(y.DType(), concatShapes(y.Shape(), x.Shape())...)
	row := make([]float64, 0, n)
	for k := 0; k < m; k++ {
		ct := g.Alloc(y.DType(), y.Shape()...)
		setFlat(ct, k, 1)
		gx := backward("Jacobian", []*graph.Node{y}, []*graph.Node{g.Const(ct)}, []*graph.Node{x})[0]
		row = appendValues(row[:0], gx.Value())
		for j, v := range row {
			setFlat(jac, k*n+j, v)
		}
	}
	return jac
}

// JacobianFwd returns the same tensor as Jacobian using forward mode: one
// JVP per element of x with a one-hot tangent, which suits inputs smaller
// than outputs.
//
// JacobianFwd panics with a *tensor.Error if x is nil or from another graph.
func JacobianFwd(y, x *graph.Node) *tensor.Tensor {
	checkNode("JacobianFwd", "y", y)
	checkXs("JacobianFwd", y.Graph(), []*graph.Node{x})
	return forwardJacobian("JacobianFwd", y, x)
}

// Hessian returns the matrix of second derivatives ∂²y/∂x∂x of the scalar
// y, with shape x.Shape() followed by x.Shape(). It is forward-over-reverse:
// one JVP of Grad(y, x) per element of x.
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

// forwardJacobian builds ∂y/∂x column by column with one-hot tangents.
func forwardJacobian(op string, y, x *graph.Node) *tensor.Tensor {
	g := y.Graph()
	m, n := y.Size(), x.Size()
	jac := tensor.New(y.DType(), concatShapes(y.Shape(), x.Shape())...)
	col := make([]float64, 0, m)
	for j := 0; j < n; j++ {
		t := g.Alloc(x.DType(), x.Shape()...)
		setFlat(t, j, 1)
		ty := forward(op, []*graph.Node{y}, []*graph.Node{x}, []*graph.Node{g.Const(t)})[0]
		col = appendValues(col[:0], ty.Value())
		for k, v := range col {
			setFlat(jac, k*n+j, v)
		}
	}
	return jac
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

// appendValues appends t's elements in row-major order as float64.
func appendValues(dst []float64, t *tensor.Tensor) []float64 {
	c := t.Contiguous()
	if c.DType() == tensor.Float32 {
		for _, v := range c.Float32s() {
			dst = append(dst, float64(v))
		}
		return dst
	}
	return append(dst, c.Float64s()...)
}
