package autodiff

import (
	"cmp"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Grad returns the gradient of the scalar y with respect to each x, as
// nodes of y's graph. Each gradient has its x's shape and dtype, and since
// it is an ordinary node it can be differentiated again (Grad of Grad, or
// JVP of Grad as in HVP).
//
// y must have exactly one element (any shape, e.g. () or (1, 1)). An x
// may be a Var or an intermediate result, in which case the gradient is the
// total derivative of y with respect to that node's value (paths through
// other xs included). Constants never receive gradients (ops skip them), so
// a Const among the xs gets zeros: make a value a Var to differentiate
// with respect to it. An x that y does not depend on also gets a zero
// tensor of its own shape, never nil. Use graph.StopGradient to cut a path
// on purpose.
//
// Grad panics with a *tensor.Error if y does not have size 1, or if an x is
// nil or belongs to another graph.
func Grad(y *graph.Node, xs ...*graph.Node) []*graph.Node {
	checkNode("Grad", "y", y)
	if y.Size() != 1 {
		tensor.Fail("Grad", "y must have size 1, got shape %v %v (use VJP for non-scalar outputs)", y.Shape(), y.DType())
	}
	checkXs("Grad", y.Graph(), xs)
	return backward("Grad", []*graph.Node{y}, []*graph.Node{onesLike(y)}, xs)
}

// GradEach is Grad that also hands each x's gradient to ready as soon as
// the reverse sweep has finished it, while the sweep goes on with the rest
// of the graph: the hook data-parallel training uses to all-reduce the
// last layers' gradients while the first layers' are still being computed.
// ready(k, g) is called exactly once per x, from the calling goroutine, in
// an order fixed by the graph (reverse creation order; xs no path reaches
// get zeros, constants and xs outside the swept range come last). g must not be modified: the sweep may
// still read the node's value. The gradients are also returned, as Grad's.
func GradEach(y *graph.Node, xs []*graph.Node, ready func(k int, g *graph.Node)) []*graph.Node {
	checkNode("GradEach", "y", y)
	if y.Size() != 1 {
		tensor.Fail("GradEach", "y must have size 1, got shape %v %v", y.Shape(), y.DType())
	}
	checkXs("GradEach", y.Graph(), xs)
	if ready == nil {
		tensor.Fail("GradEach", "nil ready function")
	}
	t := mark([]*graph.Node{y}, xs)
	if s := t.slot(y); s != nil {
		s.ct = accumulate(s.ct, onesLike(y))
	}
	t.ready, t.xAt = ready, map[int][]int{}
	for k, x := range xs {
		if t.slot(x) != nil && !x.IsConst() {
			t.xAt[x.ID()] = append(t.xAt[x.ID()], k)
		}
	}
	t.sweep("GradEach")
	out := t.collect(xs)
	done := map[int]bool{}
	for _, ks := range t.xAt {
		for _, k := range ks {
			done[k] = true
		}
	}
	for k := range xs {
		if !done[k] {
			ready(k, out[k])
		}
	}
	return out
}

// ValueAndGrad returns y's value and Grad(y, xs...).
func ValueAndGrad(y *graph.Node, xs ...*graph.Node) (float64, []*graph.Node) {
	grads := Grad(y, xs...)
	return y.Item(), grads
}

// VJP returns the vector-Jacobian products ctᵀ·∂y/∂x for each x: the
// gradient of ⟨ct, y⟩ with respect to x, for a y of any shape. ct must
// have y's shape and dtype and belong to y's graph (usually a Const). The
// results are nodes, shaped like the xs, and can be differentiated again;
// xs that y does not depend on get zeros.
//
// VJP panics with a *tensor.Error if ct does not match y, or if an x is nil
// or belongs to another graph.
func VJP(y, ct *graph.Node, xs ...*graph.Node) []*graph.Node {
	checkNode("VJP", "y", y)
	checkNode("VJP", "cotangent", ct)
	if ct.Graph() != y.Graph() {
		tensor.Fail("VJP", "cotangent %v belongs to another graph than y %v", ct, y)
	}
	if !slices.Equal(ct.Shape(), y.Shape()) || ct.DType() != y.DType() {
		tensor.Fail("VJP", "cotangent %v %v does not match y %v %v", ct.Shape(), ct.DType(), y.Shape(), y.DType())
	}
	checkXs("VJP", y.Graph(), xs)
	return backward("VJP", []*graph.Node{y}, []*graph.Node{ct}, xs)
}

// backward is the reverse sweep, micrograd's tape in three steps: mark
// the nodes between the xs and the ys that depend on some x, sweep them in
// reverse creation order (a topological order) calling each op's VJP and
// summing the cotangents that reach each input, and collect the xs'
// cotangents. Only marked nodes are visited; the rest would contribute
// nothing. It is a loop, not a recursion, so chains of any length fit on
// the stack. Two sums are deferred until a node's cotangent is final
// (settle), because summing them one contribution at a time costs a pass
// over the whole node per contribution: the cotangents of many slices of
// one node (a sequence's time steps) and a weight's cotangents from many
// products (a recurrent weight's).
func backward(op string, ys, seeds, xs []*graph.Node) []*graph.Node {
	t := mark(ys, xs)
	for k, y := range ys {
		if s := t.slot(y); s != nil {
			s.ct = accumulate(s.ct, seeds[k])
		}
	}
	t.sweep(op)
	return t.collect(xs)
}

// tape holds the nodes with IDs lo … lo+len(slots)−1 of one graph and, for
// each, whether it depends on some x and the cotangent summed so far (nil:
// none reached it yet).
type tape struct {
	nodes []*graph.Node
	lo    int
	slots []slot
	needs []bool   // scratch for each VJP call
	buf   [16]bool // needs' first backing array, inside the tape's allocation
	// GradEach's hook: xAt maps a node ID to the indices of the xs it is.
	ready func(k int, g *graph.Node)
	xAt   map[int][]int
}

type slot struct {
	fromX bool
	ct    *graph.Node
	// The cotangents of unit-step slices of the node, not yet summed:
	// settle assembles them in one Concat when the node's cotangent is
	// final (see sweep).
	pieces []piece
	// The (x, ct) pairs of products x·wᵀ of this node w, whose cotangent
	// ctᵀ·x settle sums as one product.
	outer []piece
}

// piece is the cotangent ct of the window of a node starting at start
// along axis.
type piece struct {
	ct          *graph.Node
	axis, start int
	x           *graph.Node // outer pieces: the product's left factor
}

// slot returns n's slot when n is on the tape and depends on some x.
func (t *tape) slot(n *graph.Node) *slot {
	i := n.ID() - t.lo
	if i < 0 || i >= len(t.slots) || !t.slots[i].fromX {
		return nil
	}
	return &t.slots[i]
}

// mark builds the tape from the first x (constants excluded: they never
// get gradients) to the last y, marking every node that is an x or has a
// marked input. Inputs precede their nodes, so one forward pass suffices.
func mark(ys, xs []*graph.Node) *tape {
	nodes := ys[0].Graph().Nodes()
	lo, hi := len(nodes), -1
	for _, x := range xs {
		if !x.IsConst() {
			lo = min(lo, x.ID())
		}
	}
	for _, y := range ys {
		hi = max(hi, y.ID())
	}
	t := &tape{lo: lo}
	t.needs = t.buf[:0]
	if lo > hi {
		return t
	}
	t.nodes, t.slots = nodes[lo:hi+1], make([]slot, hi-lo+1)
	for _, x := range xs {
		if !x.IsConst() && x.ID() <= hi {
			t.slots[x.ID()-lo].fromX = true
		}
	}
	for i, n := range t.nodes {
		for _, in := range n.Inputs() {
			if t.slots[i].fromX {
				break
			}
			t.slots[i].fromX = t.slot(in) != nil
		}
	}
	return t
}

// sweep calls the VJP of every marked node that a cotangent reached, last
// node first, telling the rule which inputs need a cotangent, and adds the
// returned cotangents to the inputs' slots.
func (t *tape) sweep(op string) {
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := t.nodes[i]
		ct := t.settle(n, &t.slots[i])
		if ks, ok := t.xAt[n.ID()]; ok {
			// Every consumer of n came later and has been swept: n's
			// cotangent is final.
			g := ct
			if g == nil {
				g = zerosLike(n)
			}
			for _, k := range ks {
				t.ready(k, g)
			}
		}
		if ct == nil || n.Op() == nil {
			continue
		}
		ins := n.Inputs()
		t.needs = t.needs[:0]
		anyNeeded := false
		for _, in := range ins {
			need := t.slot(in) != nil
			t.needs = append(t.needs, need)
			anyNeeded = anyNeeded || need
		}
		if !anyNeeded {
			continue // an x computed from no other x
		}
		if axis, start, ok := graph.SliceWindow(n); ok {
			// A slice's VJP would scatter ct into zeros of the whole
			// input and add that to the input's cotangent: per slice, two
			// passes over the whole input (quadratic in the number of
			// slices, a sequence's time steps or a packed tensor's
			// parts). The piece waits in the input's slot instead.
			s := t.slot(ins[0])
			s.pieces = append(s.pieces, piece{ct: ct, axis: axis, start: start})
			continue
		}
		if x, w, ok := graph.WeightFactor(n); ok && t.needs[1] && w != x {
			// w's cotangent ctᵀ·x waits in its slot: the products of a
			// weight used at every step of a sequence become one GEMM
			// over all the steps' rows instead of one small GEMM and one
			// addition of w's size per step.
			s := t.slot(w)
			s.outer = append(s.outer, piece{ct: ct, x: x})
			t.needs[1] = false
		}
		cts := n.Op().VJP(n, ct, t.needs)
		if len(cts) != len(ins) {
			tensor.Fail(op, "VJP of %s returned %d cotangents for %d inputs", n.Op().Name(), len(cts), len(ins))
		}
		for j, in := range ins {
			c, s := cts[j], t.slot(in)
			if c == nil || s == nil {
				continue
			}
			if !slices.Equal(c.Shape(), in.Shape()) || c.DType() != in.DType() {
				tensor.Fail(op, "VJP of %s returned a cotangent %v %v for input %d of shape %v %v",
					n.Op().Name(), c.Shape(), c.DType(), j, in.Shape(), in.DType())
			}
			s.ct = accumulate(s.ct, c)
		}
	}
}

// collect returns each x's cotangent, or zeros of its shape for an x that
// no cotangent reached (constants included).
func (t *tape) collect(xs []*graph.Node) []*graph.Node {
	out := make([]*graph.Node, len(xs))
	for k, x := range xs {
		if s := t.slot(x); s != nil && !x.IsConst() {
			out[k] = t.settle(x, s)
		}
		if out[k] == nil {
			out[k] = zerosLike(x)
		}
	}
	return out
}

// settle adds what waits in n's slot s to its cotangent and returns it:
// the products' outer pieces as one GEMM (outerSum), then the slices'
// pieces. Pieces along one axis whose windows are equal or disjoint
// become one Concat, with zeros between windows and pieces of one window
// added in the order they arrived; the others (a window overlapping
// another, or along a second axis) are scattered and added as Slice's VJP
// would.
func (t *tape) settle(n *graph.Node, s *slot) *graph.Node {
	if len(s.outer) > 0 {
		s.ct = accumulate(s.ct, outerSum(s.outer))
		s.outer = nil
	}
	ps := s.pieces
	if len(ps) == 0 {
		return s.ct
	}
	s.pieces = nil
	axis := ps[0].axis
	width := func(p piece) int { return p.ct.Shape()[axis] }
	key := func(p piece) int { // pieces along another axis last
		if p.axis != axis {
			return math.MaxInt
		}
		return p.start
	}
	slices.SortStableFunc(ps, func(a, b piece) int { return cmp.Compare(key(a), key(b)) })
	var parts, rest []*graph.Node
	at := 0
	for k := 0; k < len(ps); k++ {
		p := ps[k]
		if p.axis != axis || p.start < at {
			w := p.ct.Shape()[p.axis]
			rest = append(rest, graph.ScatterSlice(p.ct, n.Shape(), p.axis, p.start, p.start+w, 1))
			continue
		}
		if p.start > at {
			parts = append(parts, zerosAlong(n, axis, p.start-at))
		}
		sum := p.ct
		for k+1 < len(ps) && ps[k+1].axis == axis && ps[k+1].start == p.start && width(ps[k+1]) == width(p) {
			k++
			sum = graph.Add(sum, ps[k].ct)
		}
		parts = append(parts, sum)
		at = p.start + width(p)
	}
	if d := n.Shape()[axis]; at < d {
		parts = append(parts, zerosAlong(n, axis, d-at))
	}
	whole := parts[0]
	if len(parts) > 1 {
		whole = graph.Concat(axis, parts...)
	}
	s.ct = accumulate(s.ct, whole)
	for _, r := range rest {
		s.ct = accumulate(s.ct, r)
	}
	return s.ct
}

// outerSum returns Σ ctᵀ·x over the pieces, as one product of the
// stacked cotangents and factors. The sweep met the pieces last product
// first; they are stacked in the order of the forward pass, the order in
// which the other cotangents of a sequence's steps are stacked too (the
// gather of a whole sequence's input projection), so that a captured
// program finds the one stack inside the other (graph's capture_concat.go).
func outerSum(ps []piece) *graph.Node {
	n := len(ps)
	cts, xs := make([]*graph.Node, n), make([]*graph.Node, n)
	for i, p := range ps {
		cts[n-1-i], xs[n-1-i] = p.ct, p.x
	}
	if len(ps) == 1 {
		return graph.MatMulT(cts[0], xs[0], true, false)
	}
	return graph.MatMulT(graph.Concat(-2, cts...), graph.Concat(-2, xs...), true, false)
}

// zerosAlong returns zeros shaped like n but with size d on axis.
func zerosAlong(n *graph.Node, axis, d int) *graph.Node {
	shape := append([]int(nil), n.Shape()...)
	shape[axis] = d
	g := n.Graph()
	return g.Const(g.Alloc(n.DType(), shape...))
}

func accumulate(sum, c *graph.Node) *graph.Node {
	if sum == nil {
		return c
	}
	return graph.Add(sum, c)
}

// zerosLike returns a constant zero node with n's shape and dtype, in
// memory the graph recycles on Reset.
func zerosLike(n *graph.Node) *graph.Node {
	g := n.Graph()
	return g.Const(g.Alloc(n.DType(), n.Shape()...))
}

func onesLike(n *graph.Node) *graph.Node {
	g := n.Graph()
	t := g.AllocUninit(n.DType(), n.Shape()...)
	t.Fill(1)
	return g.Const(t)
}

func checkNode(op, what string, n *graph.Node) {
	if n == nil {
		tensor.Fail(op, "%s is nil", what)
	}
}

// checkXs panics unless every x is a node of g.
func checkXs(op string, g *graph.Graph, xs []*graph.Node) {
	for i, x := range xs {
		if x == nil {
			tensor.Fail(op, "x %d is nil", i)
		}
		if x.Graph() == nil {
			tensor.Fail(op, "x %d is a node from before its graph was Reset", i)
		}
		if x.Graph() != g {
			tensor.Fail(op, "x %d (%v) belongs to another graph than the output; build every node of one computation on one graph", i, x)
		}
	}
}
