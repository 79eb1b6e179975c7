package graph

import (
	"fmt"

	"github.com/gradus-ml/gradus/tensor"
)

// Op is a differentiable primitive. Forward, VJP and JVP live next to each
// other, and VJP and JVP are written with graph operations, so derivatives
// are graphs too and can be differentiated again. Rules are pure: they read
// only their arguments (out's inputs and value among them) and build new
// nodes; they never change a node.
type Op interface {
	// Name identifies the op in errors and in the registry, e.g. "add".
	Name() string
	// Arity is the number of inputs the op takes, or -1 for any number.
	Arity() int
	// Forward computes the output value from the input values. It should
	// allocate its result with g.Alloc so the graph can recycle it.
	Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor
	// VJP returns one cotangent per input given the output cotangent ct
	// (shaped like out). needs[i] reports whether input i needs one: the
	// reverse sweep sets it false for inputs on no path from what is being
	// differentiated (the data fed to a first layer), and a rule may skip
	// their work. A nil entry is a symbolic zero. needs is only valid
	// during the call.
	VJP(out, ct *Node, needs []bool) []*Node
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
}

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
	bindings  map[*tensor.Tensor]*Node // VarOf and Bind, until Reset
	replay    *replayer                // non-nil only in a captured Program's graph (capture_plan.go)
	// device is where Alloc puts op outputs and where constants are
	// copied when an op reads them: the device of the GPU leaves added,
	// else the CPU.
	device tensor.Device

	// Scratch's graph, its owner, and the most bytes it held before a
	// Reset since the owner's last Reset (memory.go).
	scratch     *Graph
	owner       *Graph
	scratchPeak int64
}

// New returns an empty graph.
//
// A graph runs on the device of its variables: the first leaf that lives
// on a GPU (parameters moved there with nn.To, say) makes that the
// graph's device until it is made again. Op outputs are then allocated
// there, and a constant on the CPU (a batch or noise drawn on the host),
// or a value computed from constants on the CPU before that first GPU
// leaf, is copied there when an op first reads it. An op whose operands
// still live on different devices (a variable on the CPU beside one on
// the GPU) panics saying so.
func New() *Graph { return &Graph{} }

// Device returns the device the graph's ops run on (see New).
func (g *Graph) Device() tensor.Device { return g.device }

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
// Like Var, it does not copy t, except to the graph's device when t lives
// on the CPU and the graph on a GPU (see New).
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
	if d := t.Device(); d != g.device && d != tensor.CPU {
		if g.device != tensor.CPU {
			tensor.Fail(op, "a leaf on %v in a graph whose leaves live on %v; move it with To", d, g.device)
		}
		g.device = d
	}
	n := g.newNode()
	n.value, n.leaf, n.name = t, kind, name
	g.nodes = append(g.nodes, n)
	return n
}

// Apply adds a node computing op on the inputs and computes its value now.
// All inputs must belong to one graph. Users call it for their own ops,
// and so do the constructors of graph's ops that have nothing to check
// beyond it (Exp, Log, ...); it validates the call (see the package doc,
// "Validation").
func Apply(op Op, inputs ...*Node) *Node {
	if len(inputs) == 0 {
		tensor.Fail(op.Name(), "no inputs")
	}
	if a := op.Arity(); a >= 0 && len(inputs) != a {
		tensor.Fail(op.Name(), "takes %d inputs, got %d", a, len(inputs))
	}
	checkNodes(op.Name(), inputs...)
	ins := inputs[0].g.arenaCopy(inputs)
	if c, ok := op.(checker); ok {
		c.check(ins)
	}
	return record(op, ins)
}

// checker is an op whose Forward trusts its inputs: it calls tensor's
// kernels through internal/unchecked, because its constructor validated
// the operands. Apply calls check, the constructor's validation, before
// Forward, so an op value re-applied to other nodes (Node.Op) fails as
// its constructor would instead of deep inside a kernel. check runs after
// checkNodes.
type checker interface {
	check(in []*Node)
}

// apply is Apply without validation, for constructors that have validated
// their operands (checkNodes and the op's own checks) themselves.
func apply(op Op, inputs ...*Node) *Node { return record(op, inputs[0].g.arenaCopy(inputs)) }

// arenaCopy copies the inputs into the graph's arena rather than keeping
// the caller's variadic slice, so that slice can live on the caller's
// stack.
func (g *Graph) arenaCopy(inputs []*Node) []*Node {
	ins := g.inArena.take(len(inputs))
	copy(ins, inputs)
	return ins
}

// record computes op's value on the inputs ins (in the graph's arena) and
// adds the node.
func record(op Op, ins []*Node) *Node {
	g := ins[0].g
	vals := g.valArena.take(len(ins))
	for i, in := range ins {
		// Constants follow the graph to its device, and so do values
		// computed on the CPU from constants before the graph met its
		// first GPU leaf (a batch reshaped before the first layer).
		if in.leaf != variable && g.device != tensor.CPU && in.value.Device() == tensor.CPU {
			in.value = in.value.To(g.device)
		}
		vals[i] = in.value
	}
	value := op.Forward(g, vals)
	if value == nil {
		tensor.Fail(op.Name(), "Forward returned nil for inputs %s", Describe(ins...))
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
	g.noteScratch()
	clear(g.nodes)
	g.nodes = g.nodes[:0]
	g.nodeArena.reset()
	g.inArena.reset()
	g.valArena.reset()
	g.intArena.rewind()
	g.pool.recycle()
	g.views.recycle()
	clear(g.bindings)
	g.scratchPeak = 0
}
