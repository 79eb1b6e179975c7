package nn

import (
	"fmt"
	"strconv"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// RNNCell is one step of the plain (Elman) recurrent network, PyTorch's
// nn.RNNCell with tanh: h' = tanh(W_ih x + b_ih + W_hh h + b_hh).
type RNNCell struct{ RNNCellBase }

// NewRNNCell returns a tanh cell from in features to hidden units,
// initialised as PyTorch does.
func NewRNNCell(rng *tensor.RNG, in, hidden int, bias bool, dt tensor.DType) *RNNCell {
	return &RNNCell{newRNNCell("nn.NewRNNCell", rng, in, hidden, 1, bias, dt)}
}

// String names the cell in errors.
func (c *RNNCell) String() string { return fmt.Sprintf("RNNCell(%d→%d)", c.In, c.Hidden) }

// Forward runs one step from h (B, Hidden) (nil: zeros) on x (B, In).
func (c *RNNCell) Forward(x, h *graph.Node) *graph.Node {
	want := c.checkStep(c, x, h)
	if h == nil {
		h = x.Graph().Const(x.Graph().Alloc(x.DType(), want...))
	}
	return c.step(c.inputProj(x), h)
}

// dirProj returns rows·W_ihᵀ + b_ih + b_hh for each cell, side by side
// along the last axis, in one product.
func dirProj(rows *graph.Node, cells []*RNNCell) *graph.Node {
	g := rows.Graph()
	ws := make([]*graph.Node, len(cells))
	bs := make([]*graph.Node, len(cells))
	for i, c := range cells {
		ws[i] = c.WeightIH.Node(g)
		bs[i] = graph.Add(c.BiasIH.Node(g), c.BiasHH.Node(g))
	}
	if len(cells) == 1 {
		return graph.Linear(rows, ws[0], bs[0])
	}
	return graph.Linear(rows, graph.Concat(0, ws...), graph.Concat(0, bs...))
}

func (c *RNNCell) step(xp, h *graph.Node) *graph.Node {
	return graph.Tanh(graph.Add(xp, c.hiddenProj(h)))
}

// RNN is a stack of tanh recurrent layers, optionally bidirectional, as
// PyTorch's nn.RNN: a bidirectional layer runs a second cell over the
// reversed sequence and concatenates both hidden states at every step, so
// the next layer (and the output) has 2·Hidden features. Parameters are
// named weight_ih_l{l}, …, and weight_ih_l{l}_reverse, … for the reverse
// cells.
type RNN struct {
	RNNBase
	Bidirectional bool
	Cells         []*RNNCell // forward cell of each layer
	Reverse       []*RNNCell // reverse cell of each layer (bidirectional only)
}

// RNNOptions holds the options of NewRNN, NewLSTM and NewGRU. The zero
// value is PyTorch's default in float32: one layer, time-major sequences
// (T, B, ·), one direction.
type RNNOptions struct {
	Layers        int          // stacked layers; 0 means 1
	BatchFirst    bool         // inputs and outputs are (B, T, ·) instead of (T, B, ·)
	Bidirectional bool         // NewRNN only: a second cell per layer runs over the reversed sequence
	DType         tensor.DType // the parameters' dtype; 0 means tensor.Float32
}

// resolve returns the number of layers and the dtype with the zero-value
// defaults applied, panicking, naming op, on a negative number of layers
// or, unless bidirectional is allowed, on Bidirectional.
func (o RNNOptions) resolve(op string, bidirectional bool) (int, tensor.DType) {
	if o.Layers < 0 {
		tensor.Fail(op, "number of layers must be positive, got %d", o.Layers)
	}
	if o.Bidirectional && !bidirectional {
		tensor.Fail(op, "Bidirectional is not supported (only NewRNN has it)")
	}
	return max(o.Layers, 1), orFloat32(o.DType)
}

// NewRNN returns the stack, with biases, initialised as PyTorch does.
//
//	rnn := nn.NewRNN(rng, 28, 128, nn.RNNOptions{Layers: 2, Bidirectional: true})
func NewRNN(rng *tensor.RNG, in, hidden int, opts RNNOptions) *RNN {
	layers, dt := opts.resolve("nn.NewRNN", true)
	batchFirst, bidirectional := opts.BatchFirst, opts.Bidirectional
	m := &RNN{RNNBase: RNNBase{In: in, Hidden: hidden, Layers: layers, BatchFirst: batchFirst}, Bidirectional: bidirectional}
	dirs := 1
	if bidirectional {
		dirs = 2
	}
	for l := range layers {
		inl := in
		if l > 0 {
			inl = dirs * hidden
		}
		m.Cells = append(m.Cells, &RNNCell{newRNNCell("nn.NewRNN", rng, inl, hidden, 1, true, dt)})
		if bidirectional {
			m.Reverse = append(m.Reverse, &RNNCell{newRNNCell("nn.NewRNN", rng, inl, hidden, 1, true, dt)})
		}
	}
	return m
}

// String names the module in errors.
func (m *RNN) String() string {
	return fmt.Sprintf("RNN(%d→%d, %d layers, bidirectional %v)", m.In, m.Hidden, m.Layers, m.Bidirectional)
}

// Params returns every layer's parameters in PyTorch's order and names.
func (m *RNN) Params() []NamedParam {
	var ps []NamedParam
	for l, c := range m.Cells {
		ps = append(ps, c.params("_l"+strconv.Itoa(l))...)
		if m.Bidirectional {
			ps = append(ps, m.Reverse[l].params("_l"+strconv.Itoa(l)+"_reverse")...)
		}
	}
	return ps
}

// SetTraining does nothing.
func (m *RNN) SetTraining(bool) {}

// Forward runs the stack over x, (T, B, In) or with BatchFirst (B, T, In),
// from h0 (Layers·Directions, B, Hidden) (nil: zeros). It returns the last
// layer's states at every step, out (T, B, Directions·Hidden) (or batch
// first), and the final states hN (Layers·Directions, B, Hidden), ordered
// as PyTorch's (layer by layer, forward before reverse). Each layer
// projects the whole sequence's inputs for both directions in one matrix
// product, then takes one hidden product per step and direction.
func (m *RNN) Forward(x, h0 *graph.Node) (out, hN *graph.Node) {
	dirs := 1
	if m.Bidirectional {
		dirs = 2
	}
	if x == nil {
		tensor.Fail(m.String(), "nil input")
	}
	checkInput(m, x, m.Cells[0].WeightIH.Value.DType())
	ax := m.timeAxis()
	s := x.Shape()
	if len(s) != 3 || s[2] != m.In {
		tensor.Fail(m.String(), "input shape %s does not fit: want a sequence of %d features", tensor.FormatShape(s), m.In)
	}
	steps, batch := s[ax], s[1-ax]
	if h0 != nil && (h0.Dim() != 3 || h0.Shape()[0] != m.Layers*dirs || h0.Shape()[1] != batch || h0.Shape()[2] != m.Hidden) {
		tensor.Fail(m.String(), "initial state %s does not fit: want (%d, %d, %d)", graph.Describe(h0), m.Layers*dirs, batch, m.Hidden)
	}
	g := x.Graph()
	zero := func() *graph.Node { return g.Const(g.Alloc(x.DType(), batch, m.Hidden)) }
	state := func(k int) *graph.Node {
		if h := layerState(h0, k); h != nil {
			return h
		}
		return zero()
	}
	rows := m.timeMajor(x)
	var last, seq []*graph.Node
	for l := range m.Layers {
		if l > 0 {
			rows = graph.Stack(0, seq...)
		}
		// Both directions' input projections, biases folded in, in one
		// product over the whole sequence: (T, B, Directions·Hidden).
		cells := []*RNNCell{m.Cells[l]}
		if m.Bidirectional {
			cells = append(cells, m.Reverse[l])
		}
		xp := dirProj(rows, cells)
		outs := make([][]*graph.Node, dirs)
		for d, cell := range cells {
			outs[d] = make([]*graph.Node, steps)
			h := state(dirs*l + d)
			for k := range steps {
				t := k
				if d == 1 {
					t = steps - 1 - k
				}
				xt := stepOf(xp, t)
				if dirs > 1 {
					xt = graph.Slice(xt, -1, d*m.Hidden, (d+1)*m.Hidden, 1)
				}
				h = graph.Tanh(graph.Add(xt, graph.MatMulT(h, cell.WeightHH.Node(g), false, true)))
				outs[d][t] = h
			}
			last = append(last, h)
		}
		seq = outs[0]
		if m.Bidirectional {
			for t := range seq {
				seq[t] = graph.Concat(-1, outs[0][t], outs[1][t])
			}
		}
	}
	return graph.Stack(ax, seq...), graph.Stack(0, last...)
}
