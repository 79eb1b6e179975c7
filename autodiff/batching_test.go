package autodiff_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// The batching column of the all-ops table: every registered op's batching
// rule, on every gradient-check case, against a loop that applies the
// case to each example and stacks the results, in float64 to 1e-12. The
// examples are drawn from the case's own sampler with different seeds, and
// the batch sits on different axes (first, last, middle), or on some
// operands only (the others shared by every example, as closed-over
// weights are). Besides f itself, Vmap of f's VJP and of its JVP run the
// rules of the ops the derivative rules build, traced through the
// batched forward values (max pooling's argmax among them).

const batchTol = 1e-12

// batchLayout places the batch in the case's operands: the batch axis of
// operand i of rank r, or graph.NotBatched.
type batchLayout struct {
	name string
	axis func(i, rank, n int) int
}

var batchLayouts = []batchLayout{
	{"axis 0", func(i, r, n int) int { return 0 }},
	{"last axis", func(i, r, n int) int { return r }},
	{"middle axis", func(i, r, n int) int { return (r + 1) / 2 }},
	{"first operand only", func(i, r, n int) int {
		if i == 0 {
			return min(1, r)
		}
		return graph.NotBatched
	}},
	{"last operand only", func(i, r, n int) int {
		if i == n-1 {
			return r
		}
		return graph.NotBatched
	}},
}

// batchModes wrap a case's f: f itself, its VJP with respect to every
// operand along a fixed cotangent, its JVP along fixed tangents.
var batchModes = []struct {
	name string
	wrap func(f func([]*graph.Node) *graph.Node, seed uint64) func([]*graph.Node) []*graph.Node
}{
	{"f", func(f func([]*graph.Node) *graph.Node, _ uint64) func([]*graph.Node) []*graph.Node {
		return func(xs []*graph.Node) []*graph.Node { return []*graph.Node{f(xs)} }
	}},
	{"vjp", func(f func([]*graph.Node) *graph.Node, seed uint64) func([]*graph.Node) []*graph.Node {
		return func(xs []*graph.Node) []*graph.Node {
			y := f(xs)
			ct := y.Graph().Const(tensor.NewRNG(seed).Normal(y.DType(), 0, 1, y.Shape()...))
			return autodiff.VJP(y, ct, xs...)
		}
	}},
	{"jvp", func(f func([]*graph.Node) *graph.Node, seed uint64) func([]*graph.Node) []*graph.Node {
		return func(xs []*graph.Node) []*graph.Node {
			y := f(xs)
			r := tensor.NewRNG(seed)
			ts := make([]*graph.Node, len(xs))
			for i, x := range xs {
				ts[i] = y.Graph().Const(r.Normal(x.DType(), 0, 1, x.Shape()...))
			}
			return autodiff.JVP([]*graph.Node{y}, xs, ts)
		}
	}},
}

const batchSize = 3

// TestBatchingAllOps checks every registered op's batching rule against
// the per-example loop, and fails for an op without one.
func TestBatchingAllOps(t *testing.T) {
	var missing []string
	for _, op := range graph.Registered() {
		if _, ok := op.(graph.Batcher); !ok {
			missing = append(missing, op.Name())
		}
	}
	if len(missing) > 0 {
		t.Errorf("registered ops without a batching rule (graph.Batcher): %v", missing)
	}
	for _, op := range graph.Registered() {
		if slices.Contains(missing, op.Name()) {
			continue
		}
		name := op.Name()
		t.Run(name, func(t *testing.T) {
			for i, c := range opCases[name] {
				label := caseLabel(name, i, c)
				for _, m := range batchModes {
					for _, l := range batchLayouts {
						if err := checkBatching(c, label, m.wrap, l); err != nil {
							t.Errorf("%s, %s, %s: %v", label, m.name, l.name, err)
						}
					}
				}
			}
		})
	}
}

// checkBatching compares Vmap(mode(c.f)) with the loop over the examples.
func checkBatching(c opCase, label string,
	wrap func(func([]*graph.Node) *graph.Node, uint64) func([]*graph.Node) []*graph.Node,
	l batchLayout) (err error) {
	defer tensor.Recover(&err)
	examples := make([][]*tensor.Tensor, batchSize)
	for k := range examples {
		examples[k] = c.inputs(tensor.NewRNG(seedOf(label) + uint64(k)))
	}
	n := len(examples[0])
	axes := make([]int, n)
	for i, x := range examples[0] {
		axes[i] = l.axis(i, x.Dim(), n)
	}
	if !slices.ContainsFunc(axes, func(a int) bool { return a != graph.NotBatched }) {
		return nil
	}
	f := wrap(c.f, seedOf(label)+99)

	// The loop: each example alone, with the shared operands of example 0.
	var want [][]*tensor.Tensor // [result][example]
	for k := range batchSize {
		g := graph.New()
		xs := make([]*graph.Node, n)
		for i := range xs {
			src := examples[k][i]
			if axes[i] == graph.NotBatched {
				src = examples[0][i]
			}
			xs[i] = g.Var(src)
		}
		ys := f(xs)
		if want == nil {
			want = make([][]*tensor.Tensor, len(ys))
		}
		for j, y := range ys {
			want[j] = append(want[j], y.Value().Clone())
		}
	}

	g := graph.New()
	xs := make([]*graph.Node, n)
	for i := range xs {
		if axes[i] == graph.NotBatched {
			xs[i] = g.Var(examples[0][i])
			continue
		}
		per := make([]*tensor.Tensor, batchSize)
		for k := range per {
			per[k] = examples[k][i]
		}
		xs[i] = g.Var(tensor.Stack(axes[i], per...))
	}
	outAxes := make([]int, len(want))
	for j := range outAxes {
		outAxes[j] = -1 // the last axis, to check OutAxes too
	}
	got := autodiff.Vmap(f, autodiff.VmapOptions{InAxes: axes, OutAxes: outAxes})(xs)
	if len(got) != len(want) {
		return fmt.Errorf("%d results, want %d", len(got), len(want))
	}
	for j := range got {
		w := tensor.Stack(-1, want[j]...)
		if e := maxDiff(got[j].Value(), w); !(e <= batchTol) {
			return fmt.Errorf("result %d: batched %v differs from the loop %v by %.3g", j, got[j].Shape(), w.Shape(), e)
		}
	}
	return nil
}

// maxDiff is the largest |a − b|/max(1, |b|) over the elements, +Inf when
// the shapes differ and NaN where one is NaN and the other not.
func maxDiff(a, b *tensor.Tensor) float64 {
	if !slices.Equal(a.Shape(), b.Shape()) {
		return math.Inf(1)
	}
	av, bv := a.Contiguous().Values(), b.Contiguous().Values()
	worst := 0.0
	for i := range av {
		if av[i] == bv[i] || math.IsNaN(av[i]) && math.IsNaN(bv[i]) {
			continue
		}
		d := math.Abs(av[i]-bv[i]) / math.Max(1, math.Abs(bv[i]))
		if !(d <= worst) {
			worst = d
		}
	}
	return worst
}
