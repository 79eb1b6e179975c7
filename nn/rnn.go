package nn

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Recurrent layers follow PyTorch's layouts so weights can be ported:
// gates are stacked along the first axis of weight_ih (gates·h, in) and
// weight_hh (gates·h, h), in the order i, f, g, o for the LSTM and r, z, n
// for the GRU, with separate biases bias_ih and bias_hh. Every weight and
// bias is initialised from U(−1/√h, 1/√h), as PyTorch does.

// RNNCellBase holds the parameters and sizes LSTMCell and GRUCell share
// (PyTorch's RNNCellBase); gates is 4 for the LSTM and 3 for the GRU.
type RNNCellBase struct {
	WeightIH *Param // (gates·Hidden, In)
	WeightHH *Param // (gates·Hidden, Hidden)
	BiasIH   *Param // (gates·Hidden), nil without biases
	BiasHH   *Param // (gates·Hidden), nil without biases
	In       int    // input features
	Hidden   int    // hidden state size
}

func newRNNCell(op string, rng *tensor.RNG, in, hidden, gates int, bias bool, dt tensor.DType) RNNCellBase {
	if in <= 0 || hidden <= 0 {
		tensor.Fail(op, "sizes must be positive, got in=%d hidden=%d", in, hidden)
	}
	checkRNG(op, rng)
	k := 1 / math.Sqrt(float64(hidden))
	u := func(shape ...int) *Param { return NewParam(Uniform(rng, tensor.Zeros(dt, shape...), -k, k)) }
	c := RNNCellBase{In: in, Hidden: hidden}
	c.WeightIH = u(gates*hidden, in)
	c.WeightHH = u(gates*hidden, hidden)
	if bias {
		c.BiasIH = u(gates * hidden)
		c.BiasHH = u(gates * hidden)
	}
	return c
}

// Params returns "weight_ih", "weight_hh", "bias_ih", "bias_hh" (PyTorch's
// cell names), the biases only if present.
func (c *RNNCellBase) Params() []NamedParam { return c.params("") }

// params names the parameters with suffix, "_l0" in a multi-layer module.
func (c *RNNCellBase) params(suffix string) []NamedParam {
	ps := []NamedParam{{"weight_ih" + suffix, c.WeightIH}, {"weight_hh" + suffix, c.WeightHH}}
	if c.BiasIH != nil {
		ps = append(ps, NamedParam{"bias_ih" + suffix, c.BiasIH}, NamedParam{"bias_hh" + suffix, c.BiasHH})
	}
	return ps
}

// SetTraining does nothing: a recurrent cell is the same in both modes.
func (c *RNNCellBase) SetTraining(bool) {}

// inputProj returns x·W_ihᵀ + b_ih for x (..., In): all gates of all the
// rows of x in one matrix product.
func (c *RNNCellBase) inputProj(x *graph.Node) *graph.Node {
	return affine(x, c.WeightIH, c.BiasIH)
}

// hiddenProj returns h·W_hhᵀ + b_hh, all gates in one matrix product.
func (c *RNNCellBase) hiddenProj(h *graph.Node) *graph.Node {
	return affine(h, c.WeightHH, c.BiasHH)
}

// affine returns x·wᵀ + b (b may be nil), as one fused op where x has
// rows.
func affine(x *graph.Node, w, b *Param) *graph.Node {
	g := x.Graph()
	if b != nil && x.Dim() >= 2 {
		return graph.Linear(x, w.Node(g), b.Node(g))
	}
	y := graph.MatMulT(x, w.Node(g), false, true)
	if b != nil {
		y = graph.Add(y, b.Node(g))
	}
	return y
}

// checkStep panics, naming the cell, unless x is (B, In) or (In) and each
// state is nil or shaped (B, Hidden) or (Hidden) accordingly. It returns the
// state shape.
func (c *RNNCellBase) checkStep(name fmt.Stringer, x *graph.Node, states ...*graph.Node) []int {
	checkInput(name, x, c.WeightIH.Value.DType())
	s := x.Shape()
	if (len(s) != 1 && len(s) != 2) || s[len(s)-1] != c.In {
		tensor.Fail(name.String(), "input shape %s does not fit: want (B, %d) or (%d,)", tensor.FormatShape(s), c.In, c.In)
	}
	want := []int{c.Hidden}
	if len(s) == 2 {
		want = []int{s[0], c.Hidden}
	}
	for _, st := range states {
		if st == nil {
			continue
		}
		checkInput(name, st, c.WeightIH.Value.DType())
		if !slices.Equal(st.Shape(), want) {
			tensor.Fail(name.String(), "state shape %s does not fit input %s: want %s", tensor.FormatShape(st.Shape()), tensor.FormatShape(s), tensor.FormatShape(want))
		}
	}
	return want
}

// LSTMCell is one step of a long short-term memory (Hochreiter and
// Schmidhuber 1997), as PyTorch's nn.LSTMCell:
//
//	i, f, g, o = σ(·), σ(·), tanh(·), σ(·) of x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh
//	c' = f∘c + i∘g,  h' = o∘tanh(c')
type LSTMCell struct{ RNNCellBase }

// NewLSTMCell returns an LSTM cell from in features to hidden units in
// dtype dt, with or without biases, initialised as PyTorch does.
func NewLSTMCell(rng *tensor.RNG, in, hidden int, bias bool, dt tensor.DType) *LSTMCell {
	return &LSTMCell{newRNNCell("nn.NewLSTMCell", rng, in, hidden, 4, bias, dt)}
}

// String names the cell as its errors do, e.g. "LSTMCell(28→128)".
func (c *LSTMCell) String() string { return fmt.Sprintf("LSTMCell(%d→%d)", c.In, c.Hidden) }

// Forward runs one step from the state (h, c) on the input x (B, In) (or
// (In) for one sequence) and returns the new state (h', c'), each shaped
// (B, Hidden). A nil h or c is a zero state. It panics, naming the cell, if
// the shapes do not fit.
func (c *LSTMCell) Forward(x, h, cs *graph.Node) (h2, c2 *graph.Node) {
	c.checkStep(c, x, h, cs)
	return c.step(c.inputProj(x), h, cs)
}

// step finishes a step given the input projection xp (..., 4·Hidden),
// b_ih included, with the fused cell (graph.LSTMCell).
func (c *LSTMCell) step(xp, h, cs *graph.Node) (h2, c2 *graph.Node) {
	var hp *graph.Node
	if h != nil {
		hp = c.hiddenProj(h)
	} else if c.BiasHH != nil {
		xp = graph.Add(xp, c.BiasHH.Node(xp.Graph()))
	}
	return graph.LSTMCell(xp, hp, cs)
}

// GRUCell is one step of a gated recurrent unit (Cho et al. 2014), as
// PyTorch's nn.GRUCell:
//
//	r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz)
//	n = tanh(W_in x + b_in + r∘(W_hn h + b_hn)),  h' = (1 − z)∘n + z∘h
type GRUCell struct{ RNNCellBase }

// NewGRUCell returns a GRU cell from in features to hidden units in dtype
// dt, with or without biases, initialised as PyTorch does.
func NewGRUCell(rng *tensor.RNG, in, hidden int, bias bool, dt tensor.DType) *GRUCell {
	return &GRUCell{newRNNCell("nn.NewGRUCell", rng, in, hidden, 3, bias, dt)}
}

// String names the cell as its errors do, e.g. "GRUCell(28→128)".
func (c *GRUCell) String() string { return fmt.Sprintf("GRUCell(%d→%d)", c.In, c.Hidden) }

// Forward runs one step from the state h on the input x (B, In) (or (In))
// and returns the new state h' (B, Hidden). A nil h is a zero state. It
// panics, naming the cell, if the shapes do not fit.
func (c *GRUCell) Forward(x, h *graph.Node) *graph.Node {
	want := c.checkStep(c, x, h)
	if h == nil {
		h = x.Graph().Const(x.Graph().Alloc(x.DType(), want...))
	}
	return c.step(c.inputProj(x), h)
}

// step finishes a step given the input projection xp (..., 3·Hidden),
// b_ih included, and a non-nil state h, with the fused cell
// (graph.GRUCell).
func (c *GRUCell) step(xp, h *graph.Node) *graph.Node {
	return graph.GRUCell(xp, c.hiddenProj(h), h)
}

// RNNBase holds the sizes and layout RNN, LSTM and GRU share (PyTorch's
// RNNBase).
type RNNBase struct {
	In, Hidden, Layers int  // input features, hidden size, stacked layers
	BatchFirst         bool // inputs and outputs are (B, T, ·) instead of (T, B, ·)
	Bidirectional      bool // each layer also runs a cell over the reversed sequence
}

// Directions is 2 for a bidirectional stack, else 1.
func (r *RNNBase) Directions() int {
	if r.Bidirectional {
		return 2
	}
	return 1
}

// checkSeq panics, naming the module, unless x is a (T, B, In) sequence
// (or (B, T, In) with BatchFirst) and each state is nil or
// (Layers·Directions, B, Hidden). It returns T and B.
func (r *RNNBase) checkSeq(name fmt.Stringer, dt tensor.DType, x *graph.Node, states ...*graph.Node) (steps, batch int) {
	checkInput(name, x, dt)
	s := x.Shape()
	layout := "(T, B, %d)"
	if r.BatchFirst {
		layout = "(B, T, %d)"
	}
	if len(s) != 3 || s[2] != r.In {
		tensor.Fail(name.String(), "input shape %s does not fit: want "+layout, tensor.FormatShape(s), r.In)
	}
	steps, batch = s[0], s[1]
	if r.BatchFirst {
		steps, batch = batch, steps
	}
	if steps == 0 {
		tensor.Fail(name.String(), "input shape %s has no time steps", tensor.FormatShape(s))
	}
	want := []int{r.Layers * r.Directions(), batch, r.Hidden}
	for _, st := range states {
		if st == nil {
			continue
		}
		checkInput(name, st, dt)
		if !slices.Equal(st.Shape(), want) {
			tensor.Fail(name.String(), "initial state shape %s does not fit input %s: want %s", tensor.FormatShape(st.Shape()), tensor.FormatShape(s), tensor.FormatShape(want))
		}
	}
	return steps, batch
}

// timeAxis is the axis of time steps in inputs and outputs.
func (r *RNNBase) timeAxis() int {
	if r.BatchFirst {
		return 1
	}
	return 0
}

// newLayers returns the forward and (bidirectional only) reverse cells of
// a stack of layers recurrent layers with biases, layer 0 reading in
// features and the others Directions·hidden, each made by wrap from
// newRNNCell(op, ..., gates, ...) in PyTorch's order (a layer's forward
// cell, then its reverse one).
func newLayers[C any](op string, rng *tensor.RNG, in, hidden, layers, gates int, bidirectional bool, dt tensor.DType, wrap func(RNNCellBase) C) (cells, reverse []C) {
	if layers <= 0 {
		tensor.Fail(op, "number of layers must be positive, got %d", layers)
	}
	dirs := 1
	if bidirectional {
		dirs = 2
	}
	for l := range layers {
		inl := in
		if l > 0 {
			inl = dirs * hidden
		}
		cells = append(cells, wrap(newRNNCell(op, rng, inl, hidden, gates, true, dt)))
		if bidirectional {
			reverse = append(reverse, wrap(newRNNCell(op, rng, inl, hidden, gates, true, dt)))
		}
	}
	return cells, reverse
}

// layerParams returns each cell's parameters named with the suffix _l{l}
// (and the reverse cell's with _l{l}_reverse), layer by layer, as PyTorch
// names a stack's.
func layerParams[C interface{ params(string) []NamedParam }](cells, reverse []C) []NamedParam {
	var ps []NamedParam
	for l, c := range cells {
		ps = append(ps, c.params("_l"+strconv.Itoa(l))...)
		if reverse != nil {
			ps = append(ps, reverse[l].params("_l"+strconv.Itoa(l)+"_reverse")...)
		}
	}
	return ps
}

// layerState returns layer l's (Directions, B, Hidden) slice of a
// (Layers·Directions, B, Hidden) state, a view, or nil.
func (r *RNNBase) layerState(st *graph.Node, l int) *graph.Node {
	if st == nil {
		return nil
	}
	d := r.Directions()
	return graph.Slice(st, 0, l*d, (l+1)*d, 1)
}

// stack runs every layer's sweep over x and returns the last layer's
// output at every step, (T, B, Directions·Hidden) or batch first, and the
// final states of every layer and direction, hN and cN (Layers·Directions,
// B, Hidden), cN nil but for the LSTM. cells(l) returns layer l's cells,
// forward first.
func (r *RNNBase) stack(kind cellKind, x, h0, c0 *graph.Node, cells func(l int) []*RNNCellBase) (out, hN, cN *graph.Node) {
	rows := r.timeMajor(x)
	var seq, hs, cs []*graph.Node
	for l := range r.Layers {
		if l > 0 {
			rows = graph.Stack(0, seq...)
		}
		sw := layerSweep{kind: kind, cells: cells(l), g: x.Graph()}
		outs, h, c := sw.run(rows, r.layerState(h0, l), r.layerState(c0, l))
		seq = joinSteps(outs)
		hs = append(hs, h...)
		cs = append(cs, c...)
	}
	out, hN = graph.Stack(r.timeAxis(), seq...), graph.Stack(0, hs...)
	if kind == lstmKind {
		cN = graph.Stack(0, cs...)
	}
	return out, hN, cN
}

// bases returns the RNNCellBase of layer l's cells, forward then reverse.
func bases[C interface{ base() *RNNCellBase }](cells, reverse []C, l int) []*RNNCellBase {
	b := []*RNNCellBase{cells[l].base()}
	if reverse != nil {
		b = append(b, reverse[l].base())
	}
	return b
}

func (c *RNNCellBase) base() *RNNCellBase { return c }

// LSTM is a stack of LSTM layers run over sequences, as PyTorch's nn.LSTM
// (no dropout between layers, no projections), optionally bidirectional:
// a bidirectional layer runs a second cell over the reversed sequence
// and concatenates both hidden states at every step, so the next layer
// (and the output) has 2·Hidden features. Layer l's parameters are named
// weight_ih_l{l}, weight_hh_l{l}, bias_ih_l{l}, bias_hh_l{l}, and the
// reverse cell's the same with the suffix _reverse, as in PyTorch.
type LSTM struct {
	RNNBase
	Cells   []*LSTMCell // forward cell of each layer; layer 0 reads In features, the others Directions·Hidden
	Reverse []*LSTMCell // reverse cell of each layer (bidirectional only)
}

// NewLSTM returns a stack of opts.Layers LSTM layers (bidirectional with
// opts.Bidirectional) from in features to hidden units, with biases,
// initialised as PyTorch does.
//
//	lstm := nn.NewLSTM(rng, 28, 128, nn.RNNOptions{Layers: 2, BatchFirst: true})
func NewLSTM(rng *tensor.RNG, in, hidden int, opts RNNOptions) *LSTM {
	layers, dt := opts.resolve("nn.NewLSTM")
	cells, rev := newLayers("nn.NewLSTM", rng, in, hidden, layers, 4, opts.Bidirectional, dt, func(c RNNCellBase) *LSTMCell { return &LSTMCell{c} })
	return &LSTM{RNNBase: opts.base(in, hidden, layers), Cells: cells, Reverse: rev}
}

// String names the module as its errors do, e.g. "LSTM(28→128, 2 layers)"
// or "LSTM(28→128, 2 layers, bidirectional)".
func (m *LSTM) String() string { return "LSTM" + m.describe() }

// describe is the sizes part of a stack's name.
func (r *RNNBase) describe() string {
	s := fmt.Sprintf("(%d→%d, %d layers", r.In, r.Hidden, r.Layers)
	if r.Bidirectional {
		s += ", bidirectional"
	}
	return s + ")"
}

// Params returns each layer's weight_ih_l{l}, weight_hh_l{l}, bias_ih_l{l}
// and bias_hh_l{l}, then its reverse cell's (…_l{l}_reverse), layer by
// layer.
func (m *LSTM) Params() []NamedParam {
	return layerParams(m.Cells, m.Reverse)
}

// SetTraining does nothing: the LSTM is the same in both modes.
func (m *LSTM) SetTraining(bool) {}

// Forward runs the stack over the sequence x, (T, B, In) or with
// BatchFirst (B, T, In), from the initial states h0 and c0
// (Layers·Directions, B, Hidden), ordered as PyTorch's (layer by layer,
// forward before reverse); nil states are zeros. It returns the last
// layer's hidden states at every step, out (T, B, Directions·Hidden) or
// (B, T, Directions·Hidden), and the final states hN and cN
// (Layers·Directions, B, Hidden). Each layer projects the whole
// sequence's inputs, for both directions, in one matrix product, then
// takes one hidden product and one fused cell (graph.LSTMCell) per step
// and direction. It panics, naming the module, if the shapes do not fit.
func (m *LSTM) Forward(x, h0, c0 *graph.Node) (out, hN, cN *graph.Node) {
	m.checkSeq(m, m.Cells[0].WeightIH.Value.DType(), x, h0, c0)
	return m.stack(lstmKind, x, h0, c0, func(l int) []*RNNCellBase { return bases(m.Cells, m.Reverse, l) })
}

// timeMajor returns the sequence x as (T, B, In), the layout of every
// layer's input projection.
func (r *RNNBase) timeMajor(x *graph.Node) *graph.Node {
	if r.BatchFirst {
		return graph.Permute(x, 1, 0, 2)
	}
	return x
}

// stepOf returns step t (B, ·) of a time-major (T, B, ·) tensor, a view.
// The reverse sweep assembles the cotangents of all steps' views of one
// tensor in one Concat.
func stepOf(xp *graph.Node, t int) *graph.Node {
	return graph.Squeeze(graph.Slice(xp, 0, t, t+1, 1), 0)
}

// GRU is a stack of GRU layers run over sequences, as PyTorch's nn.GRU
// (no dropout between layers), optionally bidirectional as LSTM is. Layer
// l's parameters are named weight_ih_l{l}, weight_hh_l{l}, bias_ih_l{l},
// bias_hh_l{l}, and the reverse cell's the same with the suffix _reverse.
type GRU struct {
	RNNBase
	Cells   []*GRUCell // forward cell of each layer
	Reverse []*GRUCell // reverse cell of each layer (bidirectional only)
}

// NewGRU returns a stack of opts.Layers GRU layers (bidirectional with
// opts.Bidirectional) from in features to hidden units, with biases,
// initialised as PyTorch does.
func NewGRU(rng *tensor.RNG, in, hidden int, opts RNNOptions) *GRU {
	layers, dt := opts.resolve("nn.NewGRU")
	cells, rev := newLayers("nn.NewGRU", rng, in, hidden, layers, 3, opts.Bidirectional, dt, func(c RNNCellBase) *GRUCell { return &GRUCell{c} })
	return &GRU{RNNBase: opts.base(in, hidden, layers), Cells: cells, Reverse: rev}
}

// String names the module as its errors do, e.g. "GRU(28→128, 1 layers)".
func (m *GRU) String() string { return "GRU" + m.describe() }

// Params returns each layer's weight_ih_l{l}, weight_hh_l{l}, bias_ih_l{l}
// and bias_hh_l{l}, then its reverse cell's, layer by layer.
func (m *GRU) Params() []NamedParam {
	return layerParams(m.Cells, m.Reverse)
}

// SetTraining does nothing: the GRU is the same in both modes.
func (m *GRU) SetTraining(bool) {}

// Forward runs the stack over the sequence x, (T, B, In) or with
// BatchFirst (B, T, In), from the initial state h0 (Layers·Directions, B,
// Hidden), ordered as PyTorch's; nil is zeros. It returns the last
// layer's hidden states at every step, out (T, B, Directions·Hidden) or
// (B, T, Directions·Hidden), and the final states hN (Layers·Directions,
// B, Hidden). Each layer projects the whole sequence's inputs in one
// matrix product, then takes one hidden product and one fused cell
// (graph.GRUCell) per step and direction. It panics, naming the module,
// if the shapes do not fit.
func (m *GRU) Forward(x, h0 *graph.Node) (out, hN *graph.Node) {
	m.checkSeq(m, m.Cells[0].WeightIH.Value.DType(), x, h0)
	out, hN, _ = m.stack(gruKind, x, h0, nil, func(l int) []*RNNCellBase { return bases(m.Cells, m.Reverse, l) })
	return out, hN
}
