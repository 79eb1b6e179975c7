package graph

import (
	"math"
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// Batching rules turn a node computed for one example into the node that
// computes it for a whole batch at once (JAX's vmap; Bradbury et al. 2018,
// "JAX: composable transformations of Python+NumPy programs"). autodiff.Vmap
// traces a function on one example, then a Batching rewrites the traced
// nodes in creation order, calling each op's rule where an input carries
// the batch and keeping every other node (closed-over weights) as it is.

// NotBatched is the batch axis of a value that is the same for every
// example (a closed-over weight), in rules' axes and in
// autodiff.VmapOptions.
const NotBatched = math.MinInt

// Batcher is an op with a batching rule. Every registered op has one (a
// test walks the registry), next to its Forward, VJP and JVP.
type Batcher interface {
	// Batch returns a node computing the op for every example at once, and
	// the axis of that node which indexes the examples. in holds the
	// operands: a batched operand has the per-example operand's shape with
	// an axis of size b.Size() inserted at axes[i]; an unbatched one
	// (axes[i] == NotBatched) is the per-example operand itself. At least
	// one operand is batched. The rule is written in graph ops, so batched
	// nodes are differentiable like any other.
	Batch(b *Batching, in []*Node, axes []int) (*Node, int)
}

// Batching rewrites the nodes of one traced example into nodes computing
// every example of a batch: Bind says which traced nodes stand for which
// batched ones, and Batched returns the batched form of any later node.
// It is autodiff.Vmap's engine; ops' batching rules receive it.
type Batching struct {
	size   int
	g      *Graph
	lo     int     // the first traced node
	limit  int     // nodes from here on were created by the rewrite
	next   int     // the next node to rewrite
	nodes  []*Node // batched form of node lo+i, nil when unbatched
	axes   []int
	bound  []binding // Bind's calls, until the first Batched sizes nodes
	argmax map[*int][]int
}

type binding struct {
	example, batched *Node
	axis             int
}

// NewBatching returns a Batching for batches of size examples. It panics
// with a *tensor.Error unless size is at least 1.
func NewBatching(size int) *Batching {
	if size < 1 {
		tensor.Fail("vmap", "batch of %d examples (want at least 1)", size)
	}
	return &Batching{size: size, argmax: map[*int][]int{}}
}

// Size returns the number of examples.
func (b *Batching) Size() int { return b.size }

// Bind declares that the traced node example stands, for each example k,
// for slice k of batched along axis (non-negative). Bind must precede
// Batched. It panics with a *tensor.Error when the shapes do not fit or
// the nodes belong to different graphs.
func (b *Batching) Bind(example, batched *Node, axis int) {
	checkNodes("vmap", example, batched)
	if b.g != nil && b.g != example.g {
		tensor.Fail("vmap", "operands %s belong to another graph than the ones bound before", Describe(example, batched))
	}
	if b.nodes != nil {
		tensor.Fail("vmap", "Bind after Batched")
	}
	if axis < 0 || axis >= batched.Dim() || batched.Shape()[axis] != b.size ||
		!slices.Equal(dropAxis(batched.Shape(), axis), example.Shape()) || batched.DType() != example.DType() {
		tensor.Fail("vmap", "batched operand %s does not hold %d examples %s along axis %d", Describe(batched), b.size, Describe(example), axis)
	}
	if b.g == nil {
		b.g, b.lo = example.g, example.id
	}
	b.lo = min(b.lo, example.id)
	b.bound = append(b.bound, binding{example, batched, axis})
}

// start sizes the tables for the nodes traced so far and fills in the
// bindings.
func (b *Batching) start() {
	b.limit, b.next = b.g.Len(), b.lo
	b.nodes, b.axes = make([]*Node, b.limit-b.lo), make([]int, b.limit-b.lo)
	for i := range b.axes {
		b.axes[i] = NotBatched
	}
	for _, p := range b.bound {
		b.nodes[p.example.id-b.lo], b.axes[p.example.id-b.lo] = p.batched, p.axis
	}
	b.bound = nil
}

// Batched returns the batched form of the traced node n and its batch axis,
// rewriting the nodes between the bound ones and n that have not been yet.
// A node that depends on no bound node comes back as is, with NotBatched.
// It panics with a *tensor.Error, naming the op, when an op on the way has
// no batching rule.
func (b *Batching) Batched(n *Node) (*Node, int) {
	checkNodes("vmap", n)
	if b.g == nil || n.g != b.g {
		return n, NotBatched
	}
	if b.nodes == nil {
		b.start()
	}
	if n.id < b.lo || n.id >= b.limit {
		return n, NotBatched
	}
	for ; b.next <= n.id; b.next++ {
		b.rewrite(b.g.nodes[b.next])
	}
	k := n.id - b.lo
	if b.nodes[k] == nil {
		return n, NotBatched
	}
	return b.nodes[k], b.axes[k]
}

// rewrite applies n's batching rule when one of its operands is batched.
func (b *Batching) rewrite(n *Node) {
	k := n.id - b.lo
	if n.op == nil || b.nodes[k] != nil {
		return
	}
	in := make([]*Node, len(n.inputs))
	axes := make([]int, len(n.inputs))
	some := false
	for i, x := range n.inputs {
		in[i], axes[i] = x, NotBatched
		if j := x.id - b.lo; j >= 0 && j < len(b.nodes) && b.nodes[j] != nil && x.g == b.g {
			in[i], axes[i] = b.nodes[j], b.axes[j]
			some = true
		}
	}
	if p, ok := n.op.(paramBatcher); !some && !(ok && p.batchedParams(b)) {
		return
	}
	rule, ok := n.op.(Batcher)
	if !ok {
		tensor.Fail("vmap", "op %s has no batching rule (node %v)", n.op.Name(), n)
	}
	out, ax := rule.Batch(b, in, axes)
	if out == nil || ax < 0 || ax >= out.Dim() || out.Shape()[ax] != b.size ||
		!slices.Equal(dropAxis(out.Shape(), ax), n.Shape()) || out.DType() != n.DType() {
		tensor.Fail("vmap", "batching rule of %s returned %s with batch axis %d for %d examples of %s (operands %s, axes %v)",
			n.op.Name(), Describe(out), ax, b.size, Describe(n), Describe(in...), axes)
	}
	b.nodes[k], b.axes[k] = out, ax
}

// paramBatcher is an op whose parameters may come from a batched node
// (max pooling's argmax): it is rewritten even when no operand is batched.
type paramBatcher interface {
	batchedParams(b *Batching) bool
}

// dropAxis returns shape without axis ax.
func dropAxis(shape []int, ax int) []int {
	return append(append(make([]int, 0, len(shape)), shape[:ax]...), shape[ax+1:]...)
}

// insertAxis returns shape with d inserted at ax.
func insertAxis(shape []int, ax, d int) []int {
	out := make([]int, 0, len(shape)+1)
	return append(append(append(out, shape[:ax]...), d), shape[ax:]...)
}

// exampleDim is the per-example rank of an operand with batch axis ax.
func exampleDim(x *Node, ax int) int {
	if ax == NotBatched {
		return x.Dim()
	}
	return x.Dim() - 1
}

// toFront moves x's batch axis ax to axis 0; an unbatched x is broadcast
// to b.Size() examples along a new axis 0.
func (b *Batching) toFront(x *Node, ax int) *Node {
	switch ax {
	case NotBatched:
		return BroadcastTo(Unsqueeze(x, 0), insertAxis(x.Shape(), 0, b.size)...)
	case 0:
		return x
	}
	perm := make([]int, 0, x.Dim())
	perm = append(perm, ax)
	for i := range x.Dim() {
		if i != ax {
			perm = append(perm, i)
		}
	}
	return Permute(x, perm...)
}

// moveAxis moves axis from of x to position to.
func moveAxis(x *Node, from, to int) *Node {
	if from == to {
		return x
	}
	perm := make([]int, 0, x.Dim())
	for i := range x.Dim() {
		if i != from {
			perm = append(perm, i)
		}
	}
	perm = slices.Insert(perm, to, from)
	return Permute(x, perm...)
}

// shiftAxis maps axis a of the per-example operand to its position in an
// operand whose batch axis is ax.
func shiftAxis(a, ax int) int {
	if ax != NotBatched && a >= ax {
		return a + 1
	}
	return a
}

// example returns example k of x, whose batch axis is ax (x itself when
// x is not batched).
func example(x *Node, ax, k int) *Node {
	if ax == NotBatched {
		return x
	}
	return Squeeze(Slice(x, ax, k, k+1, 1), ax)
}

// BatchElementwise is the batching rule of an op that broadcasts its
// operands together like NumPy and computes each output element from the
// matching operand elements (Add, Exp, Where, …): the batch axis is moved
// to the front of the batched operands, with size-1 axes after it so that
// their example axes line up with the unbatched operands'. Ops registered
// outside package graph use it as their rule.
func BatchElementwise(b *Batching, op Op, in []*Node, axes []int) (*Node, int) {
	return b.leading(op, in, axes, make([]int, len(in)))
}

// leading batches an op whose operands' leading axes broadcast as batch
// axes and whose last core[i] axes of operand i are its own (2 for the
// matrices of MatMul, 0 for elementwise ops). When every operand is
// batched on the same axis with the same rank, it applies the op as is;
// otherwise the batch axis goes to the front and unbatched operands
// broadcast against it.
func (b *Batching) leading(op Op, in []*Node, axes []int, core []int) (*Node, int) {
	lead, ax, same := 0, NotBatched, true
	for i, x := range in {
		lead = max(lead, exampleDim(x, axes[i])-core[i])
		if a := axes[i]; a != NotBatched {
			same = same && (ax == NotBatched || ax == a)
			ax = a
		}
	}
	if ax == NotBatched { // a rule composed of others (linear's) may pass none
		return Apply(op, in...), NotBatched
	}
	if same {
		for i, x := range in {
			if axes[i] == NotBatched {
				same = same && x.Dim()-core[i] <= lead-ax
			} else {
				same = same && x.Dim()-1-core[i] == lead && ax <= lead
			}
		}
		if same {
			return Apply(op, in...), ax
		}
	}
	ins := make([]*Node, len(in))
	for i, x := range in {
		if axes[i] == NotBatched {
			ins[i] = x
			continue
		}
		x = b.toFront(x, axes[i])
		if pad := lead - (x.Dim() - 1 - core[i]); pad > 0 {
			shape := append(make([]int, 0, x.Dim()+pad), b.size)
			for range pad {
				shape = append(shape, 1)
			}
			x = Reshape(x, append(shape, x.Shape()[1:]...)...)
		}
		ins[i] = x
	}
	return Apply(op, ins...), 0
}

// BatchLoop is the batching rule of last resort, stated by an op that has
// no batched kernel: it applies the op to each example and stacks the
// results, so it costs one op per example. Ops registered outside package
// graph may use it.
func BatchLoop(b *Batching, op Op, in []*Node, axes []int) (*Node, int) {
	outs := make([]*Node, b.size)
	ins := make([]*Node, len(in))
	for k := range outs {
		for i, x := range in {
			ins[i] = example(x, axes[i], k)
		}
		outs[k] = Apply(op, ins...)
	}
	return Stack(0, outs...), 0
}
