package nn

import (
	"github.com/gradus-ml/gradus/graph"
)

// cellKind is the recurrence a layer sweep runs.
type cellKind uint8

const (
	tanhKind cellKind = iota // the Elman RNN: h' = tanh(xp + h·W_hhᵀ), both biases in xp
	lstmKind                 // graph.LSTMCell, both biases in xp
	gruKind                  // graph.GRUCell, b_ih in xp and b_hh in the hidden product
)

// layerSweep runs one layer of a recurrent stack over a sequence in one
// direction or, with two cells, in both: cells[1] reads the sequence
// from its end. The two directions' hidden products of a step are one
// batched matrix product, (2, B, H)·(2, H, G·H), and their cells one
// fused op on (2, B, ·) operands, so each step costs one product and
// one cell whatever the number of directions (on two cores the batched
// product runs one direction per core).
type layerSweep struct {
	kind  cellKind
	cells []*RNNCellBase // one per direction
	g     *graph.Graph
}

// inputProj returns rows·W_ihᵀ plus the biases kind folds in, for every
// direction side by side along the last axis: (T, B, D·G·H), one product
// for the whole sequence.
func (s *layerSweep) inputProj(rows *graph.Node) *graph.Node {
	ws := make([]*graph.Node, len(s.cells))
	var bs []*graph.Node
	for d, c := range s.cells {
		ws[d] = c.WeightIH.Node(s.g)
		if c.BiasIH == nil {
			continue
		}
		b := c.BiasIH.Node(s.g)
		if s.kind != gruKind {
			b = graph.Add(b, c.BiasHH.Node(s.g))
		}
		bs = append(bs, b)
	}
	w := ws[0]
	if len(ws) > 1 {
		w = graph.Concat(0, ws...)
	}
	if bs == nil {
		return graph.MatMulT(rows, w, false, true)
	}
	b := bs[0]
	if len(bs) > 1 {
		b = graph.Concat(0, bs...)
	}
	return graph.Linear(rows, w, b)
}

// run sweeps the layer over its input rows (T, B, In) from the initial
// states h and c, (D, B, H) each or nil for zeros (c for the LSTM only).
// It returns each direction's hidden state at every step, outs[d][t]
// (B, H), and each direction's final states, hN[d] and cN[d] (B, H),
// cN nil but for the LSTM.
func (s *layerSweep) run(rows, h, c *graph.Node) (outs [][]*graph.Node, hN, cN []*graph.Node) {
	xp := s.inputProj(rows)
	steps, dirs := xp.Shape()[0], len(s.cells)
	hidden := s.cells[0].Hidden
	width := xp.Shape()[2] / dirs // G·H
	if h == nil && s.kind != lstmKind {
		h = s.g.Const(s.g.Alloc(xp.DType(), dirs, xp.Shape()[1], hidden))
	}
	if dirs == 1 {
		h, c = squeeze0(h), squeeze0(c)
	}
	// The recurrent weights, (G·H, H) or stacked (2, G·H, H), and for
	// the GRU the recurrent biases, (G·H) or (2, 1, G·H).
	whh, bhh := s.cells[0].WeightHH.Node(s.g), (*graph.Node)(nil)
	if s.kind == gruKind && s.cells[0].BiasHH != nil {
		bhh = s.cells[0].BiasHH.Node(s.g)
	}
	if dirs == 2 {
		whh = graph.Stack(0, whh, s.cells[1].WeightHH.Node(s.g))
		if bhh != nil {
			bhh = graph.Reshape(graph.Stack(0, bhh, s.cells[1].BiasHH.Node(s.g)), 2, 1, width)
		}
	}
	outs = make([][]*graph.Node, dirs)
	for d := range outs {
		outs[d] = make([]*graph.Node, steps)
	}
	// Each direction's projections as a view of its own, so that the
	// reverse sweep assembles each one's step cotangents in one Concat.
	xps := []*graph.Node{xp}
	if dirs == 2 {
		xps = []*graph.Node{graph.Slice(xp, -1, 0, width, 1), graph.Slice(xp, -1, width, 2*width, 1)}
	}
	for k := range steps {
		// Step k of the forward direction is time k, of the reverse one
		// time T−1−k.
		xt := stepOf(xps[0], k)
		if dirs == 2 {
			xt = graph.Stack(0, xt, stepOf(xps[1], steps-1-k))
		}
		var hp *graph.Node
		switch {
		case h == nil:
		case dirs == 1 && bhh != nil:
			hp = graph.Linear(h, whh, bhh)
		default:
			hp = graph.MatMulT(h, whh, false, true)
			if bhh != nil {
				hp = graph.Add(hp, bhh)
			}
		}
		switch s.kind {
		case lstmKind:
			h, c = graph.LSTMCell(xt, hp, c)
		case gruKind:
			h = graph.GRUCell(xt, hp, h)
		default:
			if hp != nil {
				xt = graph.Add(xt, hp)
			}
			h = graph.Tanh(xt)
		}
		if dirs == 1 {
			outs[0][k] = h
			continue
		}
		outs[0][k], outs[1][steps-1-k] = index0(h, 0), index0(h, 1)
	}
	if dirs == 1 {
		return outs, []*graph.Node{h}, []*graph.Node{c}
	}
	hN = []*graph.Node{index0(h, 0), index0(h, 1)}
	if c != nil {
		cN = []*graph.Node{index0(c, 0), index0(c, 1)}
	}
	return outs, hN, cN
}

// index0 returns x[i] along the first axis, a view.
func index0(x *graph.Node, i int) *graph.Node {
	return graph.Squeeze(graph.Slice(x, 0, i, i+1, 1), 0)
}

// squeeze0 drops the leading axis of length 1 of x, or returns nil.
func squeeze0(x *graph.Node) *graph.Node {
	if x == nil {
		return nil
	}
	return graph.Squeeze(x, 0)
}

// joinSteps returns the layer's output at every step: the one direction's
// hidden states, or both directions' side by side, (B, D·H) per step.
func joinSteps(outs [][]*graph.Node) []*graph.Node {
	if len(outs) == 1 {
		return outs[0]
	}
	seq := make([]*graph.Node, len(outs[0]))
	for t := range seq {
		seq[t] = graph.Concat(-1, outs[0][t], outs[1][t])
	}
	return seq
}
