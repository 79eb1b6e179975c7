package graph_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// compositeAttention is the unfused reference the kernel replaces:
// softmax(scale·q·kᵀ + causal + mask)·v with every score stored.
func compositeAttention(q, k, v, mask *graph.Node, scale float64, causal bool) *graph.Node {
	s := graph.MulScalar(graph.MatMulT(q, k, false, true), scale)
	if causal {
		n := q.Shape()[q.Dim()-2]
		c := make([]float64, n*n)
		for i := range n {
			for j := i + 1; j < n; j++ {
				c[i*n+j] = math.Inf(-1)
			}
		}
		s = graph.Add(s, q.Graph().Const(tensor.FromValues(q.DType(), c, n, n)))
	}
	if mask != nil {
		s = graph.Add(s, mask)
	}
	return graph.MatMul(graph.Softmax(s, -1), v)
}

type attnCase struct {
	name          string
	q, k, v, mask []int // shapes; mask nil for none
	causal        bool
	pad           bool // the mask removes random keys (−Inf) instead of adding noise
}

// attnCases cover sizes that are not multiples of the tiles (64 queries,
// 128 keys), several key tiles, broadcast batch axes and masks of every
// rank the API allows.
var attnCases = []attnCase{
	{name: "small", q: []int{3, 5}, k: []int{4, 5}, v: []int{4, 2}},
	{name: "odd tiles", q: []int{2, 70, 5}, k: []int{2, 150, 5}, v: []int{2, 150, 7}},
	{name: "causal", q: []int{2, 1, 133, 6}, k: []int{2, 1, 133, 6}, v: []int{2, 1, 133, 3}, causal: true},
	{name: "causal long", q: []int{1, 300, 4}, k: []int{1, 300, 4}, v: []int{1, 300, 4}, causal: true},
	{name: "additive mask", q: []int{2, 67, 3}, k: []int{2, 140, 3}, v: []int{2, 140, 4}, mask: []int{67, 140}},
	{name: "padding mask", q: []int{3, 2, 65, 4}, k: []int{3, 2, 129, 4}, v: []int{3, 2, 129, 4}, mask: []int{3, 1, 1, 129}, pad: true},
	{name: "padding and causal", q: []int{2, 2, 130, 4}, k: []int{2, 2, 130, 4}, v: []int{2, 2, 130, 5}, mask: []int{2, 1, 1, 130}, pad: true, causal: true},
	{name: "vector mask", q: []int{2, 9, 3}, k: []int{2, 11, 3}, v: []int{2, 11, 3}, mask: []int{11}},
	{name: "broadcast batch", q: []int{2, 3, 17, 4}, k: []int{3, 19, 4}, v: []int{1, 3, 19, 2}, mask: []int{3, 17, 1}},
}

func (c attnCase) inputs(dt tensor.DType, seed uint64) []*tensor.Tensor {
	rng := tensor.NewRNG(seed)
	ts := []*tensor.Tensor{rng.Normal(dt, 0, 1, c.q...), rng.Normal(dt, 0, 1, c.k...), rng.Normal(dt, 0, 1, c.v...)}
	if c.mask != nil {
		m := rng.Normal(dt, 0, 1, c.mask...)
		if c.pad {
			vals := m.Values()
			n := c.mask[len(c.mask)-1]
			for i := range vals {
				vals[i] = 0
				if i%n != 0 && (i*7919)%10 < 3 {
					vals[i] = math.Inf(-1) // key 0 stays, so no row is empty
				}
			}
			m = tensor.FromValues(dt, vals, c.mask...)
		}
		ts = append(ts, m)
	}
	return ts
}

// TestAttentionMatchesComposite compares the fused op's values and the
// gradients of q, k, v (and of an additive mask) with the composite's: to
// 1e-12 in float64 and float32 rounding (2e-5 of the largest value) in
// float32.
func TestAttentionMatchesComposite(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 2e-5
		}
		for i, c := range attnCases {
			ins := c.inputs(dt, uint64(i+1))
			scale := 1 / math.Sqrt(float64(c.q[len(c.q)-1]))
			run := func(attend func(q, k, v, m *graph.Node, scale float64, causal bool) *graph.Node) (*tensor.Tensor, []*tensor.Tensor) {
				g := graph.New()
				xs := make([]*graph.Node, len(ins))
				for j, x := range ins {
					xs[j] = g.Var(x)
				}
				var m *graph.Node
				if c.mask != nil {
					m = xs[3]
					if c.pad {
						m = g.Const(ins[3])
						xs = xs[:3]
					}
				}
				out := attend(xs[0], xs[1], xs[2], m, scale, c.causal)
				r := g.Const(tensor.NewRNG(99).Normal(dt, 0, 1, out.Shape()...))
				gs := autodiff.Grad(graph.Sum(graph.Mul(out, r), nil, false), xs...)
				vals := make([]*tensor.Tensor, len(gs))
				for j, gr := range gs {
					vals[j] = gr.Value()
				}
				return out.Value(), vals
			}
			want, wantG := run(compositeAttention)
			got, gotG := run(graph.Attention)
			numtest.Close(t, want.Values(), got, tol, "%s %v: values", c.name, dt)
			for j := range wantG {
				numtest.Close(t, wantG[j].Values(), gotG[j], tol, "%s %v: gradient %d", c.name, dt, j)
			}
		}
	}
}

// TestAttentionLogSumExp checks the packed log-sum-exp column against the
// composite's LogSumExp of the scores, and that a query with every key
// removed gives NaN (as the composite does) and −Inf.
func TestAttentionLogSumExp(t *testing.T) {
	rng := tensor.NewRNG(5)
	q, k, v := rng.Normal(tensor.Float64, 0, 1, 2, 70, 3), rng.Normal(tensor.Float64, 0, 1, 2, 200, 3), rng.Normal(tensor.Float64, 0, 1, 2, 200, 2)
	mask := tensor.Zeros(tensor.Float64, 70, 200)
	for j := range 200 {
		mask.SetAt(math.Inf(-1), 5, j) // query 5 sees nothing
		if j >= 130 {
			mask.SetAt(math.Inf(-1), 6, j) // query 6 only sees the first tile
		}
		if j < 130 {
			mask.SetAt(math.Inf(-1), 7, j) // query 7 only sees the second
		}
	}
	p := tensor.AttentionPacked(q, k, v, mask, 0.5, false)
	s := tensor.Add(tensor.MulScalar(tensor.MatMulT(q, k, false, true), 0.5), mask)
	lse := tensor.LogSumExp(s, []int{-1}, false)
	numtest.Close(t, lse.Values(), tensor.Squeeze(tensor.Slice(p, -1, 2, 3, 1), -1), 1e-13, "log-sum-exp")
	g := graph.New()
	want := compositeAttention(g.Const(q), g.Const(k), g.Const(v), g.Const(mask), 0.5, false).Value()
	numtest.Close(t, want.Values(), tensor.Slice(p, -1, 0, 2, 1), 1e-13, "output with empty rows")
	if o := p.At(0, 5, 0); !math.IsNaN(o) || !math.IsInf(p.At(1, 5, 2), -1) {
		t.Errorf("a query with no keys: output %v, log-sum-exp %v; want NaN and -Inf", o, p.At(1, 5, 2))
	}
}

// TestAttentionGradPacked checks tensor's reverse kernel, called directly
// and unpacked, against the composite's gradients through graph (float64,
// a broadcast batch, an additive mask, several key tiles).
func TestAttentionGradPacked(t *testing.T) {
	c := attnCase{q: []int{2, 3, 70, 4}, k: []int{3, 150, 4}, v: []int{1, 3, 150, 5}, mask: []int{3, 70, 1}}
	ins := c.inputs(tensor.Float64, 11)
	g := graph.New()
	xs := []*graph.Node{g.Var(ins[0]), g.Var(ins[1]), g.Var(ins[2])}
	out := compositeAttention(xs[0], xs[1], xs[2], g.Const(ins[3]), 0.7, false)
	r := tensor.NewRNG(4).Normal(tensor.Float64, 0, 1, out.Shape()...)
	want := autodiff.Grad(graph.Sum(graph.Mul(out, g.Const(r)), nil, false), xs...)

	packed := tensor.AttentionPacked(ins[0], ins[1], ins[2], ins[3], 0.7, false)
	ct := tensor.Concat(-1, r, tensor.Zeros(tensor.Float64, 2, 3, 70, 1))
	dq, dk, dv := tensor.UnpackAttentionGrad(tensor.AttentionGradPacked(ins[0], ins[1], ins[2], ins[3], packed, ct, 0.7, false), 70, 150, 4, 5)
	numtest.Close(t, want[0].Value().Values(), dq, 1e-12, "dq")
	numtest.Close(t, want[1].Value().Values(), tensor.SumTo(dk, 3, 150, 4), 1e-12, "dk")
	numtest.Close(t, want[2].Value().Values(), tensor.SumTo(dv, 1, 3, 150, 5), 1e-12, "dv")
}

// TestAttentionMisuse checks that bad operands fail naming the op.
func TestAttentionMisuse(t *testing.T) {
	g := graph.New()
	x := func(s ...int) *graph.Node { return g.Const(tensor.Zeros(tensor.Float64, s...)) }
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"widths", func() { graph.Attention(x(3, 4), x(5, 3), x(5, 2), nil, 1, false) }, "differ in width"},
		{"lengths", func() { graph.Attention(x(3, 4), x(5, 4), x(6, 2), nil, 1, false) }, "differ in length"},
		{"causal", func() { graph.Attention(x(3, 4), x(5, 4), x(5, 2), nil, 1, true) }, "as many queries as keys"},
		{"mask", func() { graph.Attention(x(3, 4), x(5, 4), x(5, 2), x(3, 3), 1, false) }, "does not broadcast"},
		{"no keys", func() { graph.Attention(x(3, 4), x(0, 4), x(0, 2), nil, 1, false) }, "no keys"},
		{"dtype", func() {
			graph.Attention(x(3, 4), x(5, 4), g.Const(tensor.Zeros(tensor.Float32, 5, 2)), nil, 1, false)
		}, "mixed dtypes"},
	} {
		msg := graphError(t, tc.f).Error()
		if !strings.Contains(msg, "attention") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: got %q, want an attention error with %q", tc.name, msg, tc.want)
		}
	}
}
