package nn_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

func TestParamBinding(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			p := nn.NewParam(tensor.Ones(dt, 2))
			g := graph.New()
			n1 := p.Node(g)
			g.Const(tensor.Ones(dt, 3)) // other nodes in between
			n2 := p.Node(g)
			assert.Same(t, n1, n2, "same node within a step")
			assert.True(t, n1.IsVar())
			assert.Same(t, p.Value, n1.Value())

			g.Reset()
			g.Const(tensor.Ones(dt, 1)) // the recycled struct now holds another node
			n3 := p.Node(g)
			assert.True(t, n3.IsVar())
			assert.Same(t, p.Value, n3.Value())
			assert.Equal(t, 1, n3.ID(), "a new Var after Reset")
			assert.Same(t, n3, p.Node(g))

			// A new value (e.g. a loaded checkpoint) gets a new Var.
			p.Value = tensor.Zeros(dt, 2)
			n4 := p.Node(g)
			assert.NotSame(t, n3, n4)
			assert.Same(t, p.Value, n4.Value())

			// Another graph gets its own Var.
			g2 := graph.New()
			assert.Equal(t, g2, p.Node(g2).Graph())
		})
	}
}

func TestGradientsMatchAutodiff(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			rng := tensor.NewRNG(4)
			model := nn.NewSequential(
				nn.NewLinear(rng, 3, 4, true, dt),
				nn.Tanh{},
				nn.NewLinear(rng, 4, 2, true, dt),
			)
			unused := nn.NewParam(tensor.Ones(dt, 5))
			ps := append(model.Params(), nn.NamedParam{Name: "unused", Param: unused})
			g := graph.New()
			x := g.Const(rng.Normal(dt, 0, 1, 6, 3))
			loss := graph.Mean(graph.Square(model.Forward(x)), nil, false)
			grads := nn.Gradients(loss, ps)
			require.Len(t, grads, 5)

			nodes := make([]*graph.Node, 4)
			for i, p := range model.Params() {
				nodes[i] = p.Node(g) // the bound nodes
			}
			want := autodiff.Grad(loss, nodes...)
			for i := range nodes {
				assert.Equal(t, ps[i].Value.Shape(), grads[i].Shape(), ps[i].Name)
				assert.InDeltaSlice(t, want[i].Value().Values(), grads[i].Values(), 1e-6, ps[i].Name)
			}
			assert.Equal(t, []float64{0, 0, 0, 0, 0}, grads[4].Values(), "zeros for a parameter not in the graph")
			assert.Equal(t, dt, grads[4].DType())
		})
	}
}

func TestSequentialNamesAndModes(t *testing.T) {
	rng := tensor.NewRNG(1)
	s := nn.NewSequential(nn.NewLinear(rng, 4, 3, true, tensor.Float32), nn.NewLinear(rng, 3, 2, true, tensor.Float32))
	assert.Equal(t, []string{"0.weight", "0.bias", "1.weight", "1.bias"}, paramNames(s))
	assert.Equal(t, 4*3+3+3*2+2, nn.NumParams(s))

	bn := nn.NewBatchNorm1D(3, tensor.Float32)
	drop := nn.NewDropout(rng, 0.5)
	inner := nn.NewSequential().Add("fc", nn.NewLinear(rng, 4, 3, false, tensor.Float32)).Add("bn", bn)
	outer := nn.NewSequential(inner, nn.ReLU{}, drop)
	assert.Equal(t, []string{"0.fc.weight", "0.bn.weight", "0.bn.bias"}, paramNames(outer))
	var bufs []string
	for _, b := range nn.Buffers(outer) {
		bufs = append(bufs, b.Name)
	}
	assert.Equal(t, []string{"0.bn.running_mean", "0.bn.running_var", "0.bn.num_batches_tracked"}, bufs)
	assert.Nil(t, nn.Buffers(nn.ReLU{}))
	state := nn.State(outer)
	var names []string
	for name := range state {
		names = append(names, name)
	}
	assert.ElementsMatch(t, []string{"0.fc.weight", "0.bn.weight", "0.bn.bias",
		"0.bn.running_mean", "0.bn.running_var", "0.bn.num_batches_tracked"}, names)
	assert.Same(t, bn.RunningMean.Value, state["0.bn.running_mean"], "the state dict holds the model's own tensors")
	assert.Same(t, inner.Layer(0).Params()[0].Value, state["0.fc.weight"])

	assert.True(t, bn.Training(), "modules start in training mode")
	outer.SetTraining(false)
	assert.False(t, bn.Training())
	assert.False(t, drop.Training())
	outer.SetTraining(true)
	assert.True(t, bn.Training())

	assert.Equal(t, 3, outer.Len())
	assert.Equal(t, "2", outer.Name(2))
	assert.Same(t, drop, outer.Layer(2))
	assert.Contains(t, panicMessage(t, func() { inner.Add("fc", nn.ReLU{}) }), "already used")
	assert.Contains(t, panicMessage(t, func() { inner.Add("a.b", nn.ReLU{}) }), "dot")

	g := graph.New()
	out := outer.Forward(g.Const(tensor.Ones(tensor.Float32, 5, 4)))
	assert.Equal(t, []int{5, 3}, out.Shape())
}

func TestPrefixAndValues(t *testing.T) {
	p := nn.NewParam(tensor.Ones(tensor.Float64, 2))
	q := nn.NewParam(tensor.Zeros(tensor.Float64, 3))
	ps := []nn.NamedParam{{Name: "weight", Param: p}, {Name: "bias", Param: q}}
	pre := nn.Prefix("enc.fc1", ps)
	assert.Equal(t, "enc.fc1.weight", pre[0].Name)
	assert.Equal(t, "enc.fc1.bias", pre[1].Name)
	assert.Same(t, p, pre[0].Param)
	assert.Equal(t, "weight", ps[0].Name, "the input is not modified")
	assert.Equal(t, ps, nn.Prefix("", ps))
	vs := nn.Values(pre)
	assert.Same(t, p.Value, vs[0])
	assert.Same(t, q.Value, vs[1])
	assert.Equal(t, []string{"enc.fc1.weight", "enc.fc1.bias"}, nn.Names(pre))
}

// twoNames is a module whose Params lists the tensors ps as they are.
type twoNames []nn.NamedParam

func (m twoNames) Params() []nn.NamedParam { return m }
func (twoNames) SetTraining(bool)          {}

func TestStateTiedAndDuplicateNames(t *testing.T) {
	p := nn.NewParam(tensor.Ones(tensor.Float64, 2))
	q := nn.NewParam(tensor.Zeros(tensor.Float64, 2))
	tied := nn.State(twoNames{{Name: "enc.weight", Param: p}, {Name: "dec.weight", Param: p}})
	assert.Len(t, tied, 2)
	assert.Same(t, tied["enc.weight"], tied["dec.weight"])
	msg := panicMessage(t, func() { nn.State(twoNames{{Name: "w", Param: p}, {Name: "w", Param: q}}) })
	assert.Contains(t, msg, "nn.State")
	assert.Contains(t, msg, `two tensors are named "w"`)
}
