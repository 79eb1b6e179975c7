package autodiff

import (
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// JVP returns the Jacobian-vector products Σᵢ ∂y/∂xᵢ·tᵢ for each y: how
// each y moves when every xᵢ is perturbed along tangents[i]. It is forward
// mode: one sweep over the nodes in creation order, calling each op's JVP
// rule, with cost proportional to one evaluation of the graph whatever the
// number of outputs.
//
// tangents[i] must have the shape and dtype of xs[i] and belong to the same
// graph; a nil tangent is a zero, and so is the tangent of a Const (as in
// Grad, constants are never differentiated). When an x is itself computed
// from another x, its tangent is added to the one propagated to it, so JVP
// and VJP agree: ⟨u, JVP⟩ = Σᵢ ⟨VJPᵢ(u), tᵢ⟩. A y that does not depend on
// any x gets a zero tensor of its shape, never nil. The results are nodes
// and can be differentiated again.
//
// JVP panics with a *tensor.Error if the lengths of xs and tangents differ,
// or if a node is nil, mismatched or from another graph.
func JVP(ys, xs, tangents []*graph.Node) []*graph.Node {
	if len(ys) == 0 {
		tensor.Fail("JVP", "no outputs")
	}
	if len(xs) != len(tangents) {
		tensor.Fail("JVP", "%d inputs but %d tangents", len(xs), len(tangents))
	}
	for i, y := range ys {
		if y == nil {
			tensor.Fail("JVP", "y %d is nil", i)
		}
	}
	g := ys[0].Graph()
	for i, y := range ys {
		if y.Graph() != g {
			tensor.Fail("JVP", "y %d (%v) belongs to another graph than y 0 (%v)", i, y, ys[0])
		}
	}
	checkXs("JVP", g, xs)
	for i, t := range tangents {
		if t == nil {
			continue
		}
		x := xs[i]
		if t.Graph() != g {
			tensor.Fail("JVP", "tangent %d (%v) belongs to another graph than its x (%v)", i, t, x)
		}
		if !slices.Equal(t.Shape(), x.Shape()) || t.DType() != x.DType() {
			tensor.Fail("JVP", "tangent %d is %v %v but x %d is %v %v", i, t.Shape(), t.DType(), i, x.Shape(), x.DType())
		}
	}
	return forward("JVP", ys, xs, tangents)
}

// forward is the forward sweep over the nodes between the xs and the ys,
// in creation order. Nodes that the rules create get IDs above every y, so
// the sweep never visits them.
func forward(op string, ys, xs, tangents []*graph.Node) []*graph.Node {
	g := ys[0].Graph()
	lo, hi := g.Len(), -1
	for i, x := range xs {
		if tangents[i] != nil && !x.IsConst() {
			lo = min(lo, x.ID())
		}
	}
	for _, y := range ys {
		hi = max(hi, y.ID())
	}
	out := make([]*graph.Node, len(ys))
	if lo <= hi {
		tans := make([]*graph.Node, hi-lo+1)
		given := make([]*graph.Node, hi-lo+1)
		// Skip the nodes no y depends on: their tangents would be wasted.
		needed := make([]bool, hi-lo+1)
		for _, y := range ys {
			if y.ID() >= lo {
				needed[y.ID()-lo] = true
			}
		}
		for i := hi; i >= lo; i-- {
			if needed[i-lo] {
				for _, in := range g.Nodes()[i].Inputs() {
					if in.ID() >= lo {
						needed[in.ID()-lo] = true
					}
				}
			}
		}
		for i, x := range xs {
			if tangents[i] != nil && x.ID() <= hi && !x.IsConst() {
				given[x.ID()-lo] = accumulate(given[x.ID()-lo], tangents[i])
			}
		}
		var in []*graph.Node // reused: rules must not keep the slice
		for i := lo; i <= hi; i++ {
			if !needed[i-lo] {
				continue
			}
			n := g.Nodes()[i]
			var t *graph.Node
			if n.Op() != nil {
				ins := n.Inputs()
				in = in[:0]
				some := false
				for _, x := range ins {
					var tx *graph.Node
					if x.ID() >= lo {
						tx = tans[x.ID()-lo]
					}
					some = some || tx != nil
					in = append(in, tx)
				}
				if some {
					t = n.Op().JVP(n, in)
					if t != nil && (!slices.Equal(t.Shape(), n.Shape()) || t.DType() != n.DType()) {
						tensor.Fail(op, "JVP of %s returned a tangent %v %v for an output of shape %v %v",
							n.Op().Name(), t.Shape(), t.DType(), n.Shape(), n.DType())
					}
				}
			}
			if gv := given[i-lo]; gv != nil {
				t = accumulate(t, gv)
			}
			tans[i-lo] = t
		}
		for k, y := range ys {
			if y.ID() >= lo {
				out[k] = tans[y.ID()-lo]
			}
		}
	}
	for k, y := range ys {
		if out[k] == nil {
			out[k] = zerosLike(y)
		}
	}
	return out
}

// HVP returns the Hessian-vector products of the scalar y: for each xᵢ,
// Σⱼ ∂²y/∂xᵢ∂xⱼ·vⱼ. It is forward-over-reverse: the JVP of Grad(y, xs...)
// along vs, which costs a small constant times one gradient evaluation,
// without forming the Hessian. vs[j] must be shaped like xs[j] (nil means
// zero). The results are nodes shaped like the xs.
//
// HVP panics like Grad and JVP.
func HVP(y *graph.Node, xs, vs []*graph.Node) []*graph.Node {
	if len(xs) != len(vs) {
		tensor.Fail("HVP", "%d inputs but %d vectors", len(xs), len(vs))
	}
	grads := Grad(y, xs...)
	return JVP(grads, xs, vs)
}
