package graph

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gradus-ml/gradus/tensor"
)

// Op is a differentiable primitive. Forward, VJP and JVP live next to each
// other, and VJP and JVP are written with graph operations, so derivatives
// are graphs too and can be differentiated again.
type Op interface {
	// Name identifies the op in errors and in the registry, e.g. "add".
	Name() string
	// Forward computes the output value from the input values. It should
	// allocate its result with g.Alloc so the graph can recycle it.
	Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor
	// VJP returns one cotangent per input given the output cotangent ct
	// (shaped like out). A nil entry is a symbolic zero: that input gets
	// no contribution.
	VJP(out, ct *Node) []*Node
	// JVP returns the output tangent given one tangent per input (nil for a
	// symbolic zero; at least one is non-nil). It returns nil when the
	// output tangent is zero. The tangents slice is only valid during the
	// call: the forward sweep reuses it.
	JVP(out *Node, tangents []*Node) *Node
}

// Node is a value in a graph: a leaf (variable or constant) or the result
// of an Op applied to input nodes. Its value is computed when the node is
// created (define-by-run).
type Node struct {
	g      *Graph
	id     int
	op     Op // nil for leaves
	inputs []*Node
	value  *tensor.Tensor
	name   string
	leaf   leafKind
	// noGrad is set by a reverse sweep on inputs that lie on no path from
	// the inputs being differentiated, so rules can skip their cotangents.
	noGrad bool
}

// NeedsGrad reports whether a VJP rule must compute this input's
// cotangent. During a reverse sweep (autodiff.Grad, VJP) it is false for
// inputs that do not depend on any differentiated input, such as the data
// fed to the first layer; a rule may return nil for them and skip the
// work (MatMul and Conv2D do). Outside a sweep it is true.
func (n *Node) NeedsGrad() bool { return !n.noGrad }

// SetNeedsGrad marks whether rules must compute n's cotangent. It is for
// reverse-mode drivers such as autodiff, which set it on a node's inputs
// before calling the node's VJP and restore it afterwards.
func SetNeedsGrad(n *Node, need bool) { n.noGrad = !need }

type leafKind uint8

const (
	notLeaf leafKind = iota
	variable
	constant
)

// Graph records the nodes of a computation in creation order, which is a
// topological order. A Graph is not safe for concurrent use; separate graphs
// can be used from separate goroutines.
//
// A Graph keeps what a step allocates (node structs, input slices, the
// buffers ops get from Alloc) and hands it out again after Reset, so a
// training loop that rebuilds the same graph every step allocates almost
// nothing once warmed up.
type Graph struct {
	nodes []*Node
	pool  bufferPool
	// Arenas for Node structs and the small slices Apply needs; Reset
	// rewinds them. Nodes of a Reset graph must not be used: their memory
	// is reused by the next nodes.
	nodeArena arena[Node]
	inArena   arena[*Node]
	valArena  arena[*tensor.Tensor]
	intArena  arena[int] // AllocInts: index buffers such as max-pool argmax
	views     viewCache
}

// New returns an empty graph.
func New() *Graph { return &Graph{} }

// Var adds a leaf that can be differentiated with respect to. The graph
// does not copy t, and values computed from it may be views of it, so t
// must not change while they are needed; updating a parameter in place
// once the step's gradients are computed is the intended use.
func (g *Graph) Var(t *tensor.Tensor) *Node { return g.leafNode("Var", t, variable, "") }

// NamedVar is Var with a name shown in errors and in debugging output.
func (g *Graph) NamedVar(name string, t *tensor.Tensor) *Node {
	return g.leafNode("NamedVar", t, variable, name)
}

// Const adds a leaf that is never differentiated (its gradient is zero).
// Like Var, it does not copy t.
func (g *Graph) Const(t *tensor.Tensor) *Node { return g.leafNode("Const", t, constant, "") }

// Scalar adds a constant 0-d leaf of the given dtype, held in a buffer the
// graph recycles on Reset.
func (g *Graph) Scalar(dt tensor.DType, v float64) *Node {
	t := g.AllocUninit(dt)
	t.Fill(v)
	return g.Const(t)
}

func (g *Graph) leafNode(op string, t *tensor.Tensor, kind leafKind, name string) *Node {
	if t == nil {
		tensor.Fail(op, "nil tensor")
	}
	n := g.newNode()
	n.value, n.leaf, n.name = t, kind, name
	g.nodes = append(g.nodes, n)
	return n
}

// Apply adds a node computing op on the inputs and computes its value now.
// All inputs must belong to one graph. Op implementations call it from
// their constructor functions (Add, MatMul, ...); users call it for their
// own ops.
func Apply(op Op, inputs ...*Node) *Node {
	if len(inputs) == 0 {
		tensor.Fail(op.Name(), "no inputs")
	}
	checkNodes(op.Name(), inputs...)
	g := inputs[0].g
	// Copy the inputs into the graph's arena rather than keeping the
	// caller's variadic slice, so that slice can live on the caller's stack.
	ins := g.inArena.take(len(inputs))
	copy(ins, inputs)
	vals := g.valArena.take(len(inputs))
	for i, in := range inputs {
		vals[i] = in.value
	}
	value := op.Forward(g, vals)
	if value == nil {
		tensor.Fail(op.Name(), "Forward returned nil for inputs %s", Describe(inputs...))
	}
	n := g.newNode()
	n.op, n.inputs, n.value = op, ins, value
	g.nodes = append(g.nodes, n)
	return n
}

// newNode returns a zeroed node from the arena with the next ID.
func (g *Graph) newNode() *Node {
	n := &g.nodeArena.take(1)[0]
	n.g, n.id = g, len(g.nodes)
	return n
}

// Graph returns the graph the node belongs to.
func (n *Node) Graph() *Graph { return n.g }

// Op returns the node's op, or nil for a leaf.
func (n *Node) Op() Op { return n.op }

// Inputs returns the node's inputs. The slice must not be modified.
func (n *Node) Inputs() []*Node { return n.inputs }

// Value returns the node's value. It stays valid until the graph is Reset.
func (n *Node) Value() *tensor.Tensor { return n.val() }

// Shape returns the shape of the node's value.
func (n *Node) Shape() []int { return n.val().Shape() }

// DType returns the dtype of the node's value.
func (n *Node) DType() tensor.DType { return n.val().DType() }

// Dim returns the number of dimensions of the node's value.
func (n *Node) Dim() int { return n.val().Dim() }

// Size returns the number of elements of the node's value.
func (n *Node) Size() int { return n.val().Size() }

const staleMsg = "node used after its graph was Reset (or a zero Node); build the step's nodes again after Reset"

// val returns the value, failing clearly for a node that Reset cleared
// (one whose slot has not been reused yet; a reused slot is a new node).
func (n *Node) val() *tensor.Tensor {
	if n.value == nil {
		tensor.Fail("Node", staleMsg)
	}
	return n.value
}

// ID returns the node's position in its graph's creation order.
func (n *Node) ID() int { return n.id }

// IsVar reports whether the node is a differentiable leaf made by Var.
func (n *Node) IsVar() bool { return n.leaf == variable }

// IsConst reports whether the node is a constant leaf.
func (n *Node) IsConst() bool { return n.leaf == constant }

// Item returns the single element of a node of size 1.
func (n *Node) Item() float64 { return n.val().Item() }

// String describes the node: its op or leaf kind, shape and dtype.
func (n *Node) String() string {
	what := "var"
	switch {
	case n.op != nil:
		what = n.op.Name()
	case n.leaf == constant:
		what = "const"
	}
	if n.name != "" {
		what += " " + n.name
	}
	if n.value == nil {
		return "stale node"
	}
	return fmt.Sprintf("%s%v %v", what, n.value.Shape(), n.value.DType())
}

// Nodes returns the graph's nodes in creation (topological) order. The
// slice must not be modified.
func (g *Graph) Nodes() []*Node { return g.nodes }

// Len returns the number of nodes in the graph.
func (g *Graph) Len() int { return len(g.nodes) }

// Reset forgets every node and recycles what the graph allocated: the
// buffers ops got from Alloc, the Node structs and their input slices. The
// next step's graph reuses them, so a loop that builds the same graph each
// step stops allocating after the first step. Nodes made before Reset, and
// their values, must not be used after it: their memory now belongs to new
// nodes. Tensors given to Var and Const are the caller's and are never
// recycled.
func (g *Graph) Reset() {
	clear(g.nodes)
	g.nodes = g.nodes[:0]
	g.nodeArena.reset()
	g.inArena.reset()
	g.valArena.reset()
	g.intArena.rewind()
	g.pool.recycle()
	g.views.recycle()
}

// Alloc returns a zero-filled contiguous tensor owned by the graph; Reset
// recycles it. Ops use it for their outputs.
func (g *Graph) Alloc(dt tensor.DType, shape ...int) *tensor.Tensor {
	return g.pool.get(dt, shape, true)
}

// AllocUninit is Alloc without zeroing, for ops that overwrite every
// element.
func (g *Graph) AllocUninit(dt tensor.DType, shape ...int) *tensor.Tensor {
	return g.pool.get(dt, shape, false)
}

// AllocInts returns an int slice of length n owned by the graph, with
// unspecified contents; Reset recycles it. Ops use it for index buffers
// (such as max pooling's argmax) that their rules need until Reset.
func (g *Graph) AllocInts(n int) []int { return g.intArena.take(n) }

// bufferPool hands out tensors and takes them all back on recycle.
//
// A training loop makes the same requests in the same order every step, so
// the pool first tries to replay the previous step: the i-th request gets
// the buffer that served the i-th request last time, when its dtype and
// shape match, at the cost of one comparison. When the sequence diverges,
// the rest of last step's buffers go to free lists keyed by dtype and size,
// where any request of that size can take one (as a reshaped view if the
// shape differs).
type bufferPool struct {
	prev  []*tensor.Tensor // last step's buffers in request order
	next  int              // the next entry of prev to replay
	inUse []*tensor.Tensor // this step's buffers in request order
	free  map[uint64][]*tensor.Tensor
}

// poolKey packs dtype and size into one integer, which Go maps hash
// faster than a struct.
func poolKey(dt tensor.DType, size int) uint64 { return uint64(size)<<8 | uint64(dt) }

func (p *bufferPool) get(dt tensor.DType, shape []int, zero bool) *tensor.Tensor {
	var t *tensor.Tensor
	if p.next < len(p.prev) {
		if c := p.prev[p.next]; c.DType() == dt && slices.Equal(c.Shape(), shape) {
			t = c
			p.prev[p.next] = nil
			p.next++
		} else {
			p.spill()
		}
	}
	if t == nil {
		t = p.fromFree(dt, shape)
	}
	if t == nil {
		t = tensor.New(dt, shape...)
	} else if zero {
		t.Fill(0)
	}
	p.inUse = append(p.inUse, t)
	return t
}

// fromFree takes a buffer of the right dtype and size from the free lists,
// or returns nil.
func (p *bufferPool) fromFree(dt tensor.DType, shape []int) *tensor.Tensor {
	k := poolKey(dt, shapeSize(shape))
	list := p.free[k]
	if len(list) == 0 {
		return nil
	}
	t := list[len(list)-1]
	list[len(list)-1] = nil
	p.free[k] = list[:len(list)-1]
	if !slices.Equal(t.Shape(), shape) {
		t = tensor.Reshape(t, shape...)
	}
	return t
}

// spill moves the buffers of last step that were not replayed to the free
// lists.
func (p *bufferPool) spill() {
	if p.next >= len(p.prev) {
		return
	}
	if p.free == nil {
		p.free = map[uint64][]*tensor.Tensor{}
	}
	for i := len(p.prev) - 1; i >= p.next; i-- {
		t := p.prev[i]
		k := poolKey(t.DType(), t.Size())
		p.free[k] = append(p.free[k], t)
		p.prev[i] = nil
	}
	p.next = len(p.prev)
}

// recycle makes this step's buffers the next step's replay list.
func (p *bufferPool) recycle() {
	p.spill()
	clear(p.prev)
	p.prev, p.inUse = p.inUse, p.prev[:0]
	p.next = 0
}

// arena hands out slices carved from large chunks and takes them all back
// on reset, keeping the chunks for the next step.
type arena[T any] struct {
	chunks [][]T
	c, off int // current chunk and the next free offset in it
}

const arenaChunk = 256

// take returns a slice of length and capacity n, zeroed unless the arena
// was rewound rather than reset.
func (a *arena[T]) take(n int) []T {
	for {
		if a.c < len(a.chunks) {
			ch := a.chunks[a.c]
			if a.off+n <= len(ch) {
				s := ch[a.off : a.off+n : a.off+n]
				a.off += n
				return s
			}
			a.c++
			a.off = 0
			continue
		}
		a.chunks = append(a.chunks, make([]T, max(arenaChunk, n)))
	}
}

// reset zeroes the used chunks, so they hold no stale pointers, and rewinds.
func (a *arena[T]) reset() {
	for i := 0; i <= a.c && i < len(a.chunks); i++ {
		clear(a.chunks[i])
	}
	a.c, a.off = 0, 0
}

// rewind is reset without zeroing, for arenas of plain values whose users
// overwrite what they take.
func (a *arena[T]) rewind() { a.c, a.off = 0, 0 }

// OpInfo describes a registered op for audits and gradient-check tables.
type OpInfo struct {
	Name  string // the op's Name(), e.g. "add"
	Arity int    // number of inputs; -1 for variadic
}

var (
	registryMu sync.RWMutex
	registry   = map[string]OpInfo{}
)

// Register records an op in the registry. Every built-in op registers
// itself at init so a test can walk the table and check that each has a
// VJP, a JVP and a gradient-check case. Users may register their own ops.
// Registering a name twice panics.
func Register(info OpInfo) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[info.Name]; dup {
		panic("graph: op " + info.Name + " registered twice")
	}
	registry[info.Name] = info
}

// Registered returns the registered ops sorted by name.
func Registered() []OpInfo {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]OpInfo, 0, len(registry))
	for _, info := range registry {
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Describe lists the nodes' shapes and dtypes for error messages, as
// "(2, 3) float32, (2,) float32" ("nil" for a nil node, "stale node" for
// one whose graph was Reset), so packages built on graph word their
// errors the same way.
func Describe(ns ...*Node) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		switch {
		case n == nil:
			parts[i] = "nil"
		case n.value == nil:
			parts[i] = "stale node"
		default:
			parts[i] = tensor.FormatShape(n.value.Shape()) + " " + n.value.DType().String()
		}
	}
	return strings.Join(parts, ", ")
}

// cotangents returns its arguments as a slice carved from out's graph's
// arena, so VJP rules can return their per-input cotangents without a heap
// allocation per op. The slice is valid until the graph is Reset.
func cotangents(out *Node, cts ...*Node) []*Node {
	s := out.g.inArena.take(len(cts))
	copy(s, cts)
	return s
}
