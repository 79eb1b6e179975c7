package graph

// Rules of a fused op written as the composite it replaces: build applies
// the composite ops to stand-ins for the fused op's inputs, and the rules
// of those ops, swept over the nodes build made, give the fused op's
// derivatives. A fused op whose own derivatives are rarely needed (the
// reverse rule of attention, differentiated only for second derivatives)
// states them this way instead of deriving them by hand. The stand-ins
// are reshapes of the inputs to their own shape (views), so an input
// passed twice still gets one cotangent per position.

// standIns returns a distinct view node for each of xs and the id of the
// first node after them.
func standIns(xs []*Node) ([]*Node, int) {
	s := make([]*Node, len(xs))
	for i, x := range xs {
		s[i] = apply(reshapeOp{x.Shape()}, x)
	}
	return s, s[len(s)-1].id + 1
}

// compositeVJP returns the cotangents of xs (nil where needs is false or
// the composite does not depend on them) for y = build(xs), given y's
// cotangent ct: a reverse sweep over the nodes build made.
func compositeVJP(build func([]*Node) *Node, xs []*Node, ct *Node, needs []bool) []*Node {
	s, start := standIns(xs)
	y := build(s)
	g := y.g
	cts := map[*Node]*Node{y: ct}
	for id := y.id; id >= start; id-- {
		n := g.nodes[id]
		c := cts[n]
		if c == nil || n.op == nil {
			continue
		}
		need := make([]bool, len(n.inputs))
		for i, in := range n.inputs {
			need[i] = in.id >= start-len(s) && in.id <= y.id && in.g == g
		}
		for i, gi := range n.op.VJP(n, c, need) {
			if gi == nil || !need[i] {
				continue
			}
			in := n.inputs[i]
			if prev := cts[in]; prev != nil {
				cts[in] = Add(prev, gi)
			} else {
				cts[in] = gi
			}
		}
	}
	out := make([]*Node, len(xs))
	for i, x := range s {
		if needs[i] && cts[x] != nil {
			out[i] = Reshape(cts[x], xs[i].Shape()...)
		}
	}
	return out
}

// compositeJVP returns the tangent of y = build(xs) given the tangents of
// xs (nil for zero): a forward sweep over the nodes build made. It
// returns nil when the tangent is zero.
func compositeJVP(build func([]*Node) *Node, xs []*Node, t []*Node) *Node {
	s, start := standIns(xs)
	y := build(s)
	g := y.g
	tans := make(map[*Node]*Node, len(s))
	for i, x := range s {
		if t[i] != nil {
			tans[x] = t[i]
		}
	}
	for id := start; id <= y.id; id++ {
		n := g.nodes[id]
		if n.op == nil {
			continue
		}
		ts := make([]*Node, len(n.inputs))
		some := false
		for i, in := range n.inputs {
			ts[i] = tans[in]
			some = some || ts[i] != nil
		}
		if some {
			if tn := n.op.JVP(n, ts); tn != nil {
				tans[n] = tn
			}
		}
	}
	return tans[y]
}
