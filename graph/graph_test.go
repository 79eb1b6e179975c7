package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// scaleOp doubles its input into a graph buffer; it allocates nothing of
// its own, so a loop of it measures the graph machinery alone.
type scaleOp struct{}

func (scaleOp) Name() string { return "graph_test_scale" }

func (scaleOp) Arity() int { return 1 }

func (scaleOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	out := g.AllocUninit(in[0].DType(), in[0].Shape()...)
	tensor.AddTo(out, in[0], in[0])
	return out
}

func (scaleOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node { return nil }

func (scaleOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node { return nil }

func TestApplyRecordsNodesInOrder(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.NamedVar("x", tensor.FromValues(dt, []float64{1, 2, 3}, 3))
			c := g.Const(tensor.Ones(dt, 3))
			y := graph.Apply(scaleOp{}, x)
			z := graph.Add(y, c)
			assert.Equal(t, []float64{3, 5, 7}, z.Value().Values())
			assert.Equal(t, 4, g.Len())
			for i, n := range g.Nodes() {
				assert.Equal(t, i, n.ID())
			}
			assert.True(t, x.IsVar())
			assert.True(t, c.IsConst())
			assert.False(t, y.IsVar() || y.IsConst())
			assert.Equal(t, []*graph.Node{y, c}, z.Inputs())
			assert.Equal(t, "add", z.Op().Name())
			assert.Nil(t, x.Op())
			assert.Contains(t, x.String(), "var x")
			assert.Same(t, g, z.Graph())
		})
	}
}

func TestApplyMisuse(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g1, g2 := graph.New(), graph.New()
			a := g1.Var(tensor.Ones(dt, 2))
			b := g2.Var(tensor.Ones(dt, 2))
			for name, f := range map[string]func(){
				"graphs": func() { graph.Apply(scaleOp{}, a, b) },
				"nil":    func() { graph.Apply(scaleOp{}, a, nil) },
				"none":   func() { graph.Apply(scaleOp{}) },
				"var":    func() { g1.Var(nil) },
			} {
				var err error
				func() {
					defer tensor.Recover(&err)
					f()
				}()
				var te *tensor.Error
				require.ErrorAs(t, err, &te, name)
				assert.Contains(t, te.Caller, "graph_test.go", name)
			}
		})
	}
}

func TestResetRecyclesBuffers(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			a := g.Alloc(dt, 2, 3)
			b := g.Alloc(dt, 6)
			a.Fill(7)
			g.Reset()
			// Same requests in the same order get the same buffers back,
			// zeroed by Alloc.
			a2 := g.Alloc(dt, 2, 3)
			b2 := g.AllocUninit(dt, 6)
			assert.Same(t, a, a2)
			assert.Same(t, b, b2)
			assert.Equal(t, make([]float64, 6), a2.Values())
			// A new shape of a known size reuses storage under a new shape.
			g.Reset()
			c := g.Alloc(dt, 3, 2)
			assert.Equal(t, []int{3, 2}, c.Shape())
			assert.Equal(t, 0, g.Len())
		})
	}
}

func TestPoolNeverHandsOutABufferTwice(t *testing.T) {
	// Steps that repeat, diverge from and shrink the previous step's
	// requests: every buffer of a step must keep the value written to it.
	shapes := [][]int{{2, 3}, {6}, {3, 2}, {4}, {2, 2}, {1}, {}}
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			rng := tensor.NewRNG(7)
			for step := 0; step < 40; step++ {
				g.Reset()
				n := 1 + rng.Intn(12)
				if step%3 == 0 {
					n = 12 // a repeated prefix exercises the replay path
				}
				bufs := make([]*tensor.Tensor, n)
				for i := range bufs {
					sh := shapes[(i*5+step*(step%2))%len(shapes)]
					if step%4 == 1 {
						sh = shapes[rng.Intn(len(shapes))]
					}
					if i%2 == 0 {
						bufs[i] = g.Alloc(dt, sh...)
						assert.Equal(t, make([]float64, bufs[i].Size()), bufs[i].Values(), "Alloc zeroes")
					} else {
						bufs[i] = g.AllocUninit(dt, sh...)
					}
					assert.Equal(t, sh, bufs[i].Shape())
					bufs[i].Fill(float64(i + 1))
				}
				for i, b := range bufs {
					for _, v := range b.Values() {
						require.Equal(t, float64(i+1), v, "step %d buffer %d was handed out twice", step, i)
					}
				}
			}
		})
	}
}

func TestSteadyLoopAllocatesNothingInTheGraph(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			xt := tensor.Ones(dt, 4)
			step := func() {
				g.Reset()
				y := g.Var(xt)
				for i := 0; i < 1000; i++ {
					y = graph.Apply(scaleOp{}, y)
				}
			}
			step()
			assert.Zero(t, testing.AllocsPerRun(5, step))
		})
	}
}

func TestNodeAfterResetIsAClearError(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.Ones(dt, 2))
			y := graph.Apply(scaleOp{}, x)
			g.Reset()
			for name, f := range map[string]func(){
				"apply": func() { graph.Apply(scaleOp{}, y) },
				"shape": func() { y.Shape() },
				"add":   func() { graph.Add(x, x) },
			} {
				var err error
				func() {
					defer tensor.Recover(&err)
					f()
				}()
				require.Error(t, err, name)
				assert.Contains(t, err.Error(), "Reset", name)
			}
			assert.Equal(t, "stale node", y.String())
		})
	}
}

func TestRegisteredIsSorted(t *testing.T) {
	ops := graph.Registered()
	require.NotEmpty(t, ops)
	for i := 1; i < len(ops); i++ {
		assert.Less(t, ops[i-1].Name(), ops[i].Name())
	}
}
