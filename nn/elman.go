package nn

import (
	"fmt"

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
	Cells   []*RNNCell // forward cell of each layer
	Reverse []*RNNCell // reverse cell of each layer (bidirectional only)
}

// RNNOptions holds the options of NewRNN, NewLSTM and NewGRU. The zero
// value is PyTorch's default in float32: one layer, time-major sequences
// (T, B, ·), one direction.
type RNNOptions struct {
	Layers        int          // stacked layers; 0 means 1
	BatchFirst    bool         // inputs and outputs are (B, T, ·) instead of (T, B, ·)
	Bidirectional bool         // a second cell per layer runs over the reversed sequence
	DType         tensor.DType // the parameters' dtype; 0 means tensor.Float32
}

// resolve returns the number of layers and the dtype with the zero-value
// defaults applied, panicking, naming op, on a negative number of layers.
func (o RNNOptions) resolve(op string) (int, tensor.DType) {
	if o.Layers < 0 {
		tensor.Fail(op, "number of layers must be positive, got %d", o.Layers)
	}
	return max(o.Layers, 1), orFloat32(o.DType)
}

// base returns the stack's sizes and layout.
func (o RNNOptions) base(in, hidden, layers int) RNNBase {
	return RNNBase{In: in, Hidden: hidden, Layers: layers, BatchFirst: o.BatchFirst, Bidirectional: o.Bidirectional}
}

// NewRNN returns the stack, with biases, initialised as PyTorch does.
//
//	rnn := nn.NewRNN(rng, 28, 128, nn.RNNOptions{Layers: 2, Bidirectional: true})
func NewRNN(rng *tensor.RNG, in, hidden int, opts RNNOptions) *RNN {
	layers, dt := opts.resolve("nn.NewRNN")
	cells, rev := newLayers("nn.NewRNN", rng, in, hidden, layers, 1, opts.Bidirectional, dt, func(c RNNCellBase) *RNNCell { return &RNNCell{c} })
	return &RNN{RNNBase: opts.base(in, hidden, layers), Cells: cells, Reverse: rev}
}

// String names the module in errors, e.g. "RNN(3→4, 2 layers,
// bidirectional)".
func (m *RNN) String() string { return "RNN" + m.describe() }

// Params returns every layer's parameters in PyTorch's order and names.
func (m *RNN) Params() []NamedParam {
	return layerParams(m.Cells, m.Reverse)
}

// SetTraining does nothing.
func (m *RNN) SetTraining(bool) {}

// Forward runs the stack over x, (T, B, In) or with BatchFirst (B, T, In),
// from h0 (Layers·Directions, B, Hidden) (nil: zeros). It returns the last
// layer's states at every step, out (T, B, Directions·Hidden) (or batch
// first), and the final states hN (Layers·Directions, B, Hidden), ordered
// as PyTorch's (layer by layer, forward before reverse). Each layer
// projects the whole sequence's inputs for both directions in one matrix
// product, then takes one hidden product per step and direction. It
// panics, naming the module, if the shapes do not fit.
func (m *RNN) Forward(x, h0 *graph.Node) (out, hN *graph.Node) {
	m.checkSeq(m, m.Cells[0].WeightIH.Value.DType(), x, h0)
	out, hN, _ = m.stack(tanhKind, x, h0, nil, func(l int) []*RNNCellBase { return bases(m.Cells, m.Reverse, l) })
	return out, hN
}
