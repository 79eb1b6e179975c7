package graph

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// Capture and replay. A step (forward, and backward through autodiff.Grad)
// is traced once, define-by-run as always, into a Program: the list of
// its ops with input and output slots, cleaned of dead code, repeated
// subexpressions and constant subgraphs, with chains of elementwise ops
// fused into single passes over memory (capture_fuse.go), sums of
// scattered slices into single writes (capture_scatter.go), concats
// found inside earlier ones turned into views of them (capture_concat.go)
// and right operands that several matmuls share packed once per run
// (capture_pack.go), whose buffers come from one arena laid out by
// liveness. Run replays it on
// new input values by calling each op's Forward on the planned buffers,
// building no nodes. None of this changes a bit of the results.
//
// What the program reads is explicit. The tensors passed to Capture are
// its inputs (data, targets, parameters), read again on every Run;
// every Const leaf the step makes is a constant, copied at capture and
// the same on every Run; a Var leaf that is not an input is refused,
// since it is most likely a parameter that the program would freeze.
// Anything the step computes in Go from other values (labels given as a
// []int, a learning rate read from a variable) is frozen the same way;
// such values must be inputs. Capture therefore refuses:
//
//   - a step whose two traces differ: Capture traces the step twice and
//     compares every node's op, inputs and value bit for bit, so a step
//     that draws random numbers (nn.Dropout's masks, rng.Normal inside the
//     step) or reads state that changes between calls is refused, naming
//     the first node that differs;
//   - ops that carry data from Go in their value: index_select and
//     scatter_add (whose indices would be frozen: losses.CrossEntropy's
//     labels, embedding lookups), and max pooling, whose Forward records
//     its argmax for the rules of the backward ops;
//   - a Const leaf made from an input tensor (use the input's node).
//
// User ops are replayed under the Op contract: Forward depends only on
// the op value and the input values.

// ErrNotCapturable is wrapped by the errors Capture returns for a step it
// cannot replay faithfully.
var ErrNotCapturable = errors.New("step cannot be captured")

// ErrShapeChanged is wrapped by the error Run returns when an input's
// shape or dtype differs from the one captured.
var ErrShapeChanged = errors.New("input shape or dtype differs from the captured program's")

// StepFunc builds one step on g from the nodes of its inputs (in the
// order given to Capture) and returns the nodes whose values the step
// produces: a loss and its gradients, say.
type StepFunc func(g *Graph, in []*Node) []*Node

// CaptureOptions configures Capture. The zero value refuses inputs whose
// shapes change.
type CaptureOptions struct {
	// Recapture makes Run trace the step again, with the new inputs, when
	// an input's shape or dtype differs from the captured one, instead of
	// returning an error wrapping ErrShapeChanged. The new program
	// replaces the old one.
	Recapture bool
	// NoFusion keeps every elementwise op a step of its own instead of
	// fusing chains of them, sums of scatter_slice results as they are,
	// a concat found inside an earlier one a copy of its own, and every
	// matmul packing its own right operand (capture_fuse.go,
	// capture_scatter.go, capture_concat.go, capture_pack.go). None of
	// these changes a bit of the results, so this serves to compare.
	NoFusion bool
}

// CaptureStats counts what the optimisations did to the traced graph.
type CaptureStats struct {
	Traced int // nodes the step built (leaves included)
	Dead   int // nodes removed because no output depends on them
	Folded int // ops whose inputs were all constants, replaced by their value
	Merged int // nodes merged into an earlier identical one (same op, same inputs; equal constants)
	Fused  int // elementwise ops computed inside a fused step of several (the steps that remain count in Ops)
	Views  int // concats found inside an earlier concat and made views of it (capture_concat.go)
	Packed int // matmul and linear steps multiplying by a right operand packed once per Run for all of them (capture_pack.go)
	Ops    int // ops the program runs
}

// Program is a captured step: ops on slots, and the buffer plan that
// gives every op's output its memory. It is not safe for concurrent use.
type Program struct {
	fn    StepFunc
	opts  CaptureOptions
	stats CaptureStats

	inShapes [][]int
	inTypes  []tensor.DType

	slots   []slot           // inputs, constants and op outputs, in order
	steps   []step           // the ops, in order
	outs    []int            // output slots
	vals    []*tensor.Tensor // each slot's value in the current Run
	outVals []*tensor.Tensor // Run's result
	outCopy []*tensor.Tensor // per output: a buffer Run copies it into (a constant, or a slot returned twice), else nil

	plan   BufferPlan
	exec   *Graph // the graph Forward calls allocate from: its replayer serves the plan
	replay *replayer
}

type slotKind uint8

const (
	slotInput slotKind = iota
	slotConst
	slotOp
	slotFused // an op output computed inside a fused step, never stored
	slotDead  // the output of a step that a later rewrite left unread, removed
)

// slot is one value of the program.
type slot struct {
	kind  slotKind
	input int            // slotInput: its position among the inputs
	value *tensor.Tensor // slotConst: the copy made at capture
	dt    tensor.DType
	shape []int
}

// step runs op on the input slots into the output slot.
type step struct {
	op       stepKernel
	in       []int
	out      int
	args     []*tensor.Tensor // reused for Forward's input list
	reqs     [2]int           // this step's requests in the replayer: [first, end)
	own      int              // the request that holds the output, or -1 for a view
	expected *tensor.Tensor   // the planned output buffer when own >= 0
}

// Capture traces fn on the inputs in and returns the compiled program.
// Each input becomes a Var bound to its tensor (Graph.VarOf), so model
// code that reads a parameter through VarOf (nn's layers) uses the input
// node. See the notes above for what is refused; such failures return an
// error wrapping ErrNotCapturable, and a panic with a *tensor.Error while
// tracing is returned as that error. Programs run on the CPU: a step
// whose inputs or parameters live on a GPU is refused (run it eagerly
// there).
//
// Capture panics with a *tensor.Error if fn is nil, an input is nil, an
// input is given twice, or fn returns no outputs.
func Capture(fn StepFunc, in []*tensor.Tensor, opts CaptureOptions) (*Program, error) {
	const op = "graph.Capture"
	if fn == nil {
		tensor.Fail(op, "nil step function")
	}
	for i, t := range in {
		if t == nil {
			tensor.Fail(op, "input %d is nil", i)
		}
		if j := slices.Index(in[:i], t); j >= 0 {
			tensor.Fail(op, "input %d is the same tensor as input %d", i, j)
		}
	}
	return capture(fn, in, opts)
}

func capture(fn StepFunc, in []*tensor.Tensor, opts CaptureOptions) (*Program, error) {
	for i, t := range in {
		if d := t.Device(); d != tensor.CPU {
			return nil, fmt.Errorf("graph.Capture: %w: input %d lives on %v; captured programs run on the CPU (their fused steps are host loops): run the step eagerly on the GPU", ErrNotCapturable, i, d)
		}
	}
	g1, outs1, err := trace(fn, in)
	if err != nil {
		return nil, err
	}
	if d := g1.Device(); d != tensor.CPU {
		g1.Reset()
		return nil, fmt.Errorf("graph.Capture: %w: the step reads tensors on %v; captured programs run on the CPU (their fused steps are host loops): run the step eagerly on the GPU", ErrNotCapturable, d)
	}
	g2, outs2, err := trace(fn, in)
	if err != nil {
		return nil, err
	}
	if err := sameTrace(g1, outs1, g2, outs2); err != nil {
		return nil, err
	}
	g2.Reset()
	defer g1.Reset()
	p := &Program{fn: fn, opts: opts}
	for _, t := range in {
		p.inShapes = append(p.inShapes, slices.Clone(t.Shape()))
		p.inTypes = append(p.inTypes, t.DType())
	}
	traced, err := p.compile(g1, in, outs1)
	if err != nil {
		return nil, err
	}
	if !opts.NoFusion {
		p.mergeScatters()
		p.fuse()
		p.concatViews()
		p.dropUnread()
		p.packShared()
	}
	if err := p.planBuffers(in, traced); err != nil {
		return nil, err
	}
	return p, nil
}

// trace builds the step once on a new graph.
func trace(fn StepFunc, in []*tensor.Tensor) (g *Graph, outs []*Node, err error) {
	defer tensor.Recover(&err)
	g = New()
	nodes := make([]*Node, len(in))
	for i, t := range in {
		nodes[i] = g.VarOf(t)
	}
	outs = fn(g, nodes)
	if len(outs) == 0 {
		tensor.Fail("graph.Capture", "the step returned no outputs")
	}
	for i, o := range outs {
		if o == nil {
			tensor.Fail("graph.Capture", "output %d is nil", i)
		}
		if o.g != g {
			tensor.Fail("graph.Capture", "output %d (%v) belongs to another graph", i, o)
		}
	}
	return g, outs, nil
}

// sameTrace reports, as an error, the first difference between two traces
// of one step: their op sequences, wiring and values must agree exactly.
func sameTrace(g1 *Graph, outs1 []*Node, g2 *Graph, outs2 []*Node) error {
	if g1.Len() != g2.Len() {
		return fmt.Errorf("graph.Capture: %w: two traces built %d and %d nodes; the step's control flow depends on state that changes between calls", ErrNotCapturable, g1.Len(), g2.Len())
	}
	for i, a := range g1.nodes {
		b := g2.nodes[i]
		same := a.leaf == b.leaf && len(a.inputs) == len(b.inputs) && (a.op == nil) == (b.op == nil)
		if same && a.op != nil {
			same = a.op.Name() == b.op.Name()
		}
		for j := 0; same && j < len(a.inputs); j++ {
			same = a.inputs[j].id == b.inputs[j].id
		}
		if !same {
			return fmt.Errorf("graph.Capture: %w: node %d is %v in one trace and %v in the next; the step depends on state that changes between calls", ErrNotCapturable, i, a, b)
		}
		if !bitsEqual(a.value, b.value) {
			return fmt.Errorf("graph.Capture: %w: node %d (%v) has different values in two traces of the step: it draws random numbers (dropout, a random op) or reads state that changes between calls; pass such values as inputs", ErrNotCapturable, i, a)
		}
	}
	for i := range outs1 {
		if outs1[i].id != outs2[i].id {
			return fmt.Errorf("graph.Capture: %w: output %d differs between two traces", ErrNotCapturable, i)
		}
	}
	return nil
}

// bitsEqual reports whether a and b have one dtype, one shape and the same
// bits in every element (so NaNs compare equal to themselves).
func bitsEqual(a, b *tensor.Tensor) bool {
	if a.DType() != b.DType() || !slices.Equal(a.Shape(), b.Shape()) {
		return false
	}
	ac, bc := a.Contiguous(), b.Contiguous()
	if a.DType() == tensor.Float32 {
		x, y := ac.Float32s(), bc.Float32s()
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	}
	x, y := ac.Float64s(), bc.Float64s()
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

// Run replays the program on new input values, in Capture's order, and
// returns the outputs' values. The returned slice and tensors belong to
// the program and are overwritten by the next Run; copy what must last.
// Inputs may change values between calls (a new batch, parameters an
// optimiser updated in place) but not shapes or dtypes: Run then returns
// an error wrapping ErrShapeChanged, or captures the step again when
// CaptureOptions.Recapture is set. Failures that depend on the data (a
// matrix that is not positive definite) are returned as errors.
//
// Run panics with a *tensor.Error if the number of inputs differs from
// Capture's or an input is nil.
func (p *Program) Run(in []*tensor.Tensor) (out []*tensor.Tensor, err error) {
	const op = "graph.Program.Run"
	if len(in) != len(p.inShapes) {
		tensor.Fail(op, "%d inputs for a program captured with %d", len(in), len(p.inShapes))
	}
	for i, t := range in {
		if t == nil {
			tensor.Fail(op, "input %d is nil", i)
		}
		if t.DType() == p.inTypes[i] && slices.Equal(t.Shape(), p.inShapes[i]) {
			continue
		}
		if !p.opts.Recapture {
			return nil, fmt.Errorf("%s: %w: input %d is %s %v, captured as %s %v", op, ErrShapeChanged, i,
				tensor.FormatShape(t.Shape()), t.DType(), tensor.FormatShape(p.inShapes[i]), p.inTypes[i])
		}
		q, err := capture(p.fn, in, p.opts)
		if err != nil {
			return nil, err
		}
		*p = *q
		break
	}
	defer tensor.Recover(&err)
	p.run(in)
	return p.outVals, nil
}

// run executes the steps; in has been checked.
func (p *Program) run(in []*tensor.Tensor) {
	g, r := p.exec, p.replay
	g.nodes = g.nodes[:0]
	g.intArena.rewind()
	g.views.recycle()
	r.next = 0
	for i := range p.slots {
		if p.slots[i].kind == slotInput {
			p.vals[i] = in[p.slots[i].input]
		}
	}
	for i := range p.steps {
		s := &p.steps[i]
		for j, k := range s.in {
			s.args[j] = p.vals[k]
		}
		v := s.op.Forward(g, s.args)
		if r.next != s.reqs[1] || (s.own >= 0 && v != s.expected) || v == nil {
			tensor.Fail("graph.Program.Run", "step %d (%s) did not replay as captured: its Forward allocated or returned other buffers than when it was traced", i, s.op.Name())
		}
		p.vals[s.out] = v
	}
	for i, k := range p.outs {
		p.outVals[i] = p.vals[k]
		if c := p.outCopy[i]; c != nil {
			tensor.CopyInto(c, p.vals[k])
			p.outVals[i] = c
		}
	}
}

// Stats returns what the optimisations removed and how many ops remain.
func (p *Program) Stats() CaptureStats { return p.stats }
