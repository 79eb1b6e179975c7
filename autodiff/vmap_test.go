package autodiff_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Vmap on small cases worked out by hand.

func mat(v []float64, shape ...int) *tensor.Tensor { return tensor.FromFloat64s(v, shape...) }

// x12 is [[1, 2], [3, 4]], the batch of most cases.
func x12() *tensor.Tensor { return mat([]float64{1, 2, 3, 4}, 2, 2) }

func sumSq(x *graph.Node) *graph.Node { return graph.Sum(graph.Mul(x, x), nil, false) }

func TestVmapValues(t *testing.T) {
	cases := []struct {
		name  string
		args  []*tensor.Tensor
		opts  autodiff.VmapOptions
		f     func(xs []*graph.Node) []*graph.Node
		want  []float64
		shape []int
	}{
		{name: "sum of squares of each row", args: []*tensor.Tensor{x12()},
			f:    func(xs []*graph.Node) []*graph.Node { return []*graph.Node{sumSq(xs[0])} },
			want: []float64{1 + 4, 9 + 16}, shape: []int{2}},
		{name: "in-axis 1 takes the columns", args: []*tensor.Tensor{x12()}, opts: autodiff.VmapOptions{InAxes: []int{1}},
			f:    func(xs []*graph.Node) []*graph.Node { return []*graph.Node{sumSq(xs[0])} },
			want: []float64{1 + 9, 4 + 16}, shape: []int{2}},
		{name: "a shared weight", args: []*tensor.Tensor{x12(), mat([]float64{10, 1}, 2)},
			opts: autodiff.VmapOptions{InAxes: []int{0, graph.NotBatched}},
			f:    func(xs []*graph.Node) []*graph.Node { return []*graph.Node{graph.Dot(xs[0], xs[1])} },
			want: []float64{10 + 2, 30 + 4}, shape: []int{2}},
		{name: "out-axis 1 transposes", args: []*tensor.Tensor{x12()}, opts: autodiff.VmapOptions{OutAxes: []int{1}},
			f:    func(xs []*graph.Node) []*graph.Node { return []*graph.Node{graph.MulScalar(xs[0], 2)} },
			want: []float64{2, 6, 4, 8}, shape: []int{2, 2}},
		{name: "a result that depends on no argument is repeated", args: []*tensor.Tensor{x12()},
			f: func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{xs[0].Graph().Const(mat([]float64{7}, 1))}
			},
			want: []float64{7, 7}, shape: []int{2, 1}},
		{name: "a closed-over matrix times each row", args: []*tensor.Tensor{x12(), mat([]float64{1, 0, 1, 1}, 2, 2)},
			opts: autodiff.VmapOptions{InAxes: []int{0, graph.NotBatched}},
			f:    func(xs []*graph.Node) []*graph.Node { return []*graph.Node{graph.MatMul(xs[1], xs[0])} },
			want: []float64{1, 1 + 2, 3, 3 + 4}, shape: []int{2, 2}},
		{name: "two results", args: []*tensor.Tensor{x12()},
			f: func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{graph.Sum(xs[0], nil, false), graph.Max(xs[0], nil, false)}
			},
			want: []float64{3, 7, 2, 4}, shape: []int{2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			xs := make([]*graph.Node, len(c.args))
			for i, a := range c.args {
				xs[i] = g.Var(a)
			}
			var got []float64
			for _, y := range autodiff.Vmap(c.f, c.opts)(xs) {
				if !slices.Equal(y.Shape(), c.shape) {
					t.Fatalf("shape %v, want %v", y.Shape(), c.shape)
				}
				got = append(got, y.Value().Contiguous().Values()...)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// Transforms compose with Vmap in both orders.
func TestVmapNests(t *testing.T) {
	cases := []struct {
		name string
		run  func(g *graph.Graph) *graph.Node
		want []float64
	}{
		{"vmap of vmap: x_ij · Σ_j x_ij", func(g *graph.Graph) *graph.Node {
			x := g.Var(x12())
			return autodiff.Vmap(func(rows []*graph.Node) []*graph.Node {
				r := rows[0]
				return autodiff.Vmap(func(es []*graph.Node) []*graph.Node {
					return []*graph.Node{graph.Mul(es[0], graph.Sum(r, nil, false))}
				}, autodiff.VmapOptions{})([]*graph.Node{r})
			}, autodiff.VmapOptions{})([]*graph.Node{x})[0]
		}, []float64{1 * 3, 2 * 3, 3 * 7, 4 * 7}},
		{"grad of vmap: ∂/∂w Σ_rows Σ w·x² = Σ_rows x²", func(g *graph.Graph) *graph.Node {
			x, w := g.Var(x12()), g.Var(mat([]float64{1, 1}, 2))
			ys := autodiff.Vmap(func(r []*graph.Node) []*graph.Node {
				return []*graph.Node{graph.Sum(graph.Mul(w, graph.Square(r[0])), nil, false)}
			}, autodiff.VmapOptions{})([]*graph.Node{x})
			return autodiff.Grad(graph.Sum(ys[0], nil, false), w)[0]
		}, []float64{1 + 9, 4 + 16}},
		{"grad of vmap with respect to the batch: 2x·w", func(g *graph.Graph) *graph.Node {
			x, w := g.Var(x12()), g.Var(mat([]float64{1, 3}, 2))
			ys := autodiff.Vmap(func(r []*graph.Node) []*graph.Node {
				return []*graph.Node{graph.Sum(graph.Mul(w, graph.Square(r[0])), nil, false)}
			}, autodiff.VmapOptions{})([]*graph.Node{x})
			return autodiff.Grad(graph.Sum(ys[0], nil, false), x)[0]
		}, []float64{2, 12, 6, 24}},
		{"vmap of grad: ∂/∂w (w·x)² = 2(w·x)x per row", func(g *graph.Graph) *graph.Node {
			x, w := g.Var(x12()), g.Var(mat([]float64{1, 1}, 2))
			return autodiff.Vmap(func(r []*graph.Node) []*graph.Node {
				return autodiff.Grad(graph.Square(graph.Dot(w, r[0])), w)
			}, autodiff.VmapOptions{})([]*graph.Node{x})[0]
		}, []float64{6, 12, 42, 56}},
		{"jvp of vmap: Σ 2x per row along ones", func(g *graph.Graph) *graph.Node {
			x := g.Var(x12())
			ys := autodiff.Vmap(func(r []*graph.Node) []*graph.Node { return []*graph.Node{sumSq(r[0])} },
				autodiff.VmapOptions{})([]*graph.Node{x})
			return autodiff.JVP(ys, []*graph.Node{x}, []*graph.Node{g.Const(mat([]float64{1, 1, 1, 1}, 2, 2))})[0]
		}, []float64{2 + 4, 6 + 8}},
		{"vmap of jvp: d x³ along 1 = 3x²", func(g *graph.Graph) *graph.Node {
			x := g.Var(x12())
			return autodiff.Vmap(func(r []*graph.Node) []*graph.Node {
				y := graph.Mul(graph.Square(r[0]), r[0])
				return autodiff.JVP([]*graph.Node{y}, r, []*graph.Node{g.Const(mat([]float64{1, 1}, 2))})
			}, autodiff.VmapOptions{})([]*graph.Node{x})[0]
		}, []float64{3, 12, 27, 48}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.run(graph.New()).Value().Contiguous().Values()
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// noRuleOp is an op without a batching rule.
type noRuleOp struct{}

func (noRuleOp) Name() string { return "test.no_rule" }
func (noRuleOp) Arity() int   { return 1 }
func (noRuleOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	return in[0]
}
func (noRuleOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node { return []*graph.Node{ct} }
func (noRuleOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node    { return t[0] }

func TestVmapMisuse(t *testing.T) {
	id := func(xs []*graph.Node) []*graph.Node { return xs[:1] }
	cases := []struct {
		name string
		run  func(g *graph.Graph)
		want string
	}{
		{"batch sizes differ", func(g *graph.Graph) {
			autodiff.Vmap(id, autodiff.VmapOptions{})([]*graph.Node{g.Var(x12()), g.Var(mat([]float64{1, 2, 3}, 3))})
		}, "3 examples along axis 0, an earlier one 2"},
		{"in-axis out of range", func(g *graph.Graph) {
			autodiff.Vmap(id, autodiff.VmapOptions{InAxes: []int{2}})([]*graph.Node{g.Var(x12())})
		}, "in-axis 2 out of range"},
		{"too few in-axes", func(g *graph.Graph) {
			autodiff.Vmap(id, autodiff.VmapOptions{InAxes: []int{0}})([]*graph.Node{g.Var(x12()), g.Var(x12())})
		}, "1 in-axes for 2 arguments"},
		{"nothing batched", func(g *graph.Graph) {
			autodiff.Vmap(id, autodiff.VmapOptions{InAxes: []int{graph.NotBatched}})([]*graph.Node{g.Var(x12())})
		}, "no batched argument"},
		{"nil argument", func(g *graph.Graph) {
			autodiff.Vmap(id, autodiff.VmapOptions{})([]*graph.Node{nil})
		}, "argument 0 is nil"},
		{"out-axis out of range", func(g *graph.Graph) {
			autodiff.Vmap(id, autodiff.VmapOptions{OutAxes: []int{3}})([]*graph.Node{g.Var(x12())})
		}, "out-axis 3 out of range"},
		{"an op without a rule", func(g *graph.Graph) {
			autodiff.Vmap(func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{graph.Apply(noRuleOp{}, xs[0])}
			}, autodiff.VmapOptions{})([]*graph.Node{g.Var(x12())})
		}, "op test.no_rule has no batching rule"},
		{"a loss that is not a scalar", func(g *graph.Graph) {
			w := g.Var(mat([]float64{1, 1}, 2))
			autodiff.PerExampleGrads(func(ps, ex []*graph.Node) *graph.Node { return graph.Mul(ps[0], ex[0]) },
				[]*graph.Node{w}, []*graph.Node{g.Const(x12())})
		}, "loss must have size 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := func() (err error) {
				defer tensor.Recover(&err)
				c.run(graph.New())
				return nil
			}()
			var te *tensor.Error
			if !errors.As(err, &te) {
				t.Fatalf("got %v, want a *tensor.Error", err)
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, "vmap_test.go") {
				t.Errorf("error %q does not say %q at the caller's line", msg, c.want)
			}
		})
	}
}
