package onnx

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// checkRNN refuses the LSTM and GRU settings PyTorch never writes:
// activations other than the defaults, clipping, coupled input and forget
// gates, peepholes, and GRU's reset applied before the linear map is
// accepted (both forms are mapped).
func checkRNN(n *node) error {
	def := []string{"Sigmoid", "Tanh", "Tanh"}
	if n.op == "GRU" {
		def = def[:2]
	}
	if a := n.attr["activations"]; a != nil {
		for i, s := range a.GetStrings() {
			if !strings.EqualFold(string(s), def[i%len(def)]) {
				return fmt.Errorf("activations %q are not imported (only the defaults %v)", a.GetStrings(), def)
			}
		}
	}
	for _, a := range []string{"activation_alpha", "activation_beta", "clip"} {
		if n.has(a) {
			return fmt.Errorf("attribute %s is not imported", a)
		}
	}
	if n.op == "LSTM" && len(n.in) > 7 && n.in[7] != "" {
		return fmt.Errorf("peephole weights (input P) are not imported")
	}
	if l := n.int("layout", 0); l != 0 && l != 1 {
		return fmt.Errorf("attribute layout = %d is not imported (0 or 1)", l)
	}
	return firstErr(n.want("input_forget", 0),
		n.wantStr("direction", "forward", "reverse", "bidirectional"))
}

// runRNN maps LSTM and GRU by unrolling their recurrences over the time
// steps with graph ops (the input projections of all steps in one matmul).
// Outputs: Y (seq, dirs, batch, hidden), Y_h (dirs, batch, hidden) and,
// for LSTM, Y_c; with layout 1, batch comes first.
func runRNN(c *call, n *node, in []value) []value {
	x, w, r := c.node(in[0]), c.node(in[1]), c.node(in[2])
	layout := n.int("layout", 0)
	if x.Dim() != 3 {
		fail("input %s: want (seq, batch, features)", shapeOf(x.Shape()))
	}
	if layout == 1 {
		x = graph.Permute(x, 1, 0, 2)
	}
	seq, batch, feat := x.Shape()[0], x.Shape()[1], x.Shape()[2]
	gates := 4
	if n.op == "GRU" {
		gates = 3
	}
	dirs := w.Shape()[0]
	hid := n.int("hidden_size", r.Shape()[len(r.Shape())-1])
	if !slices.Equal(w.Shape(), []int{dirs, gates * hid, feat}) || !slices.Equal(r.Shape(), []int{dirs, gates * hid, hid}) {
		fail("W %s and R %s do not fit input %s and hidden size %d", shapeOf(w.Shape()), shapeOf(r.Shape()), shapeOf(x.Shape()), hid)
	}
	if want := map[string]int{"forward": 1, "reverse": 1, "bidirectional": 2}[n.str("direction", "forward")]; dirs != want {
		fail("W has %d directions, direction %q wants %d", dirs, n.str("direction", "forward"), want)
	}
	opt := func(i int) *graph.Node {
		if i < len(in) && (in[i].n != nil || in[i].h != nil) {
			return c.node(in[i])
		}
		return nil
	}
	if l := opt(4); l != nil {
		for _, v := range l.Value().Values() {
			if int(v) != seq {
				fail("sequence_lens %v differ from the sequence length %d: padded batches are not imported", l.Value().Values(), seq)
			}
		}
	}
	b, h0, c0 := opt(3), opt(5), opt(6)
	if layout == 1 {
		for _, s := range []**graph.Node{&h0, &c0} {
			if *s != nil {
				*s = graph.Permute(*s, 1, 0, 2)
			}
		}
	}
	var ys, hs, cs []*graph.Node
	for d := range dirs {
		pick := func(t *graph.Node) *graph.Node {
			s := t.Shape()
			return graph.Reshape(graph.Slice(t, 0, d, d+1, 1), s[1:]...)
		}
		cell := rnnCell{op: n.op, hid: hid, w: pick(w), r: pick(r), lbr: n.int("linear_before_reset", 0) != 0}
		if b != nil {
			bs := graph.Split(pick(b), 0, gates*hid, gates*hid)
			cell.wb, cell.rb = bs[0], bs[1]
		}
		var h, cc *graph.Node
		if h0 != nil {
			h = pick(h0)
		} else {
			h = c.g.Const(tensor.Zeros(c.dt, batch, hid))
		}
		if c0 != nil {
			cc = pick(c0)
		} else {
			cc = c.g.Const(tensor.Zeros(c.dt, batch, hid))
		}
		reverse := d == 1 || n.str("direction", "forward") == "reverse"
		y, hT, cT := cell.unroll(x, h, cc, reverse)
		ys, hs, cs = append(ys, y), append(hs, hT), append(cs, cT)
	}
	y, hT, cT := graph.Stack(1, ys...), graph.Stack(0, hs...), graph.Stack(0, cs...)
	if layout == 1 {
		y, hT, cT = graph.Permute(y, 2, 0, 1, 3), graph.Permute(hT, 1, 0, 2), graph.Permute(cT, 1, 0, 2)
	}
	return []value{{n: y}, {n: hT}, {n: cT}}
}

// rnnCell is one direction of an ONNX LSTM or GRU: W (gates·H, in),
// R (gates·H, H) and the biases Wb, Rb (gates·H), gates in ONNX's order
// (LSTM i, o, f, c; GRU z, r, h).
type rnnCell struct {
	op     string
	hid    int
	w, r   *graph.Node
	wb, rb *graph.Node
	lbr    bool // GRU: linear_before_reset
}

// unroll runs the cell over x (seq, batch, in) from h and c, backwards
// when reverse, and returns Y (seq, batch, H) in time order and the final
// hidden and cell states.
func (k rnnCell) unroll(x, h, c *graph.Node, reverse bool) (y, hT, cT *graph.Node) {
	seq, batch := x.Shape()[0], x.Shape()[1]
	gates := k.w.Shape()[0]
	xw := graph.MatMulT(graph.Reshape(x, seq*batch, x.Shape()[2]), k.w, false, true)
	if k.wb != nil {
		xw = graph.Add(xw, k.wb)
		if k.op == "LSTM" || !k.lbr {
			xw = graph.Add(xw, k.rb)
		}
	}
	xw = graph.Reshape(xw, seq, batch, gates)
	outs := make([]*graph.Node, seq)
	for s := range seq {
		t := s
		if reverse {
			t = seq - 1 - s
		}
		xt := graph.Reshape(graph.Slice(xw, 0, t, t+1, 1), batch, gates)
		if k.op == "LSTM" {
			g := graph.Split(graph.Add(xt, graph.MatMulT(h, k.r, false, true)), 1, k.hid, k.hid, k.hid, k.hid)
			i, o, f, cand := graph.Sigmoid(g[0]), graph.Sigmoid(g[1]), graph.Sigmoid(g[2]), graph.Tanh(g[3])
			c = graph.Add(graph.Mul(f, c), graph.Mul(i, cand))
			h = graph.Mul(o, graph.Tanh(c))
		} else {
			h = k.gru(xt, h)
		}
		outs[t] = h
	}
	return graph.Stack(0, outs...), h, c
}

// gru is one GRU step from the input projection xt (batch, 3H).
func (k rnnCell) gru(xt, h *graph.Node) *graph.Node {
	H := k.hid
	xg := graph.Split(xt, 1, H, H, H)
	rs := graph.Split(k.r, 0, H, H, H)
	var rb []*graph.Node
	if k.rb != nil {
		rb = graph.Split(k.rb, 0, H, H, H)
	}
	hr := graph.MatMulT(h, graph.Concat(0, rs[0], rs[1]), false, true)
	if k.lbr && rb != nil { // the recurrent biases of z and r are not in xt
		hr = graph.Add(hr, graph.Concat(0, rb[0], rb[1]))
	}
	zr := graph.Sigmoid(graph.Add(graph.Concat(1, xg[0], xg[1]), hr))
	zg := graph.Split(zr, 1, H, H)
	z, r := zg[0], zg[1]
	var cand *graph.Node
	if k.lbr {
		hh := graph.MatMulT(h, rs[2], false, true)
		if rb != nil {
			hh = graph.Add(hh, rb[2])
		}
		cand = graph.Tanh(graph.Add(xg[2], graph.Mul(r, hh)))
	} else {
		cand = graph.Tanh(graph.Add(xg[2], graph.MatMulT(graph.Mul(r, h), rs[2], false, true)))
	}
	// (1 − z)·cand + z·h = cand + z·(h − cand)
	return graph.Add(cand, graph.Mul(z, graph.Sub(h, cand)))
}
