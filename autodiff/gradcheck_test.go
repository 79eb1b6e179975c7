package autodiff_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// cubeOp is a user-defined op y = x³ whose rules can be broken on purpose,
// to show that GradCheck catches each kind of mistake.
type cubeOp struct {
	name     string
	vjpCoef  float64 // 3 is right
	jvpCoef  float64 // 3 is right
	constVJP bool    // build the VJP from a constant: right values, no second order
}

func (o cubeOp) Name() string { return o.name }

func (cubeOp) Arity() int { return 1 }

func (o cubeOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.MulTo(g.AllocUninit(in[0].DType(), in[0].Shape()...), tensor.Mul(in[0], in[0]), in[0])
}

func (o cubeOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	x := out.Inputs()[0]
	x2 := graph.Mul(x, x)
	if o.constVJP {
		x2 = out.Graph().Const(x2.Value())
	}
	return []*graph.Node{graph.Mul(ct, graph.MulScalar(x2, o.vjpCoef))}
}

func (o cubeOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	x := out.Inputs()[0]
	return graph.Mul(t[0], graph.MulScalar(graph.Mul(x, x), o.jvpCoef))
}

func TestGradCheckCatchesWrongRules(t *testing.T) {
	cases := []struct {
		op       cubeOp
		failMode string // "" when every mode must pass
	}{
		{cubeOp{name: "cube", vjpCoef: 3, jvpCoef: 3}, ""},
		{cubeOp{name: "cube_bad_vjp", vjpCoef: 2, jvpCoef: 3}, autodiff.ModeVJP},
		{cubeOp{name: "cube_bad_jvp", vjpCoef: 3, jvpCoef: 2}, autodiff.ModeJVP},
		{cubeOp{name: "cube_const_vjp", vjpCoef: 3, jvpCoef: 3, constVJP: true}, autodiff.ModeVJP2},
	}
	for _, d := range dtypes {
		for _, c := range cases {
			t.Run(d.dt.String()+"/"+c.op.name, func(t *testing.T) {
				x := tensor.FromValues(d.dt, []float64{0.5, -1.2, 2, 1.5, -0.3, 0.9}, 2, 3)
				rep, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
					return graph.Apply(c.op, xs[0])
				}, []*tensor.Tensor{x}, autodiff.GradCheckOptions{Seed: 1})
				require.Len(t, rep.Results, 4)
				assert.Equal(t, c.op.name, rep.Name)
				if c.failMode == "" {
					require.NoError(t, err)
					assert.True(t, rep.Passed)
					return
				}
				require.Error(t, err)
				assert.False(t, rep.Passed)
				assert.Contains(t, err.Error(), c.op.name)
				assert.Contains(t, err.Error(), "mode "+c.failMode)
				assert.Greater(t, rep.MaxRelErr(c.failMode), 0.1)
				if c.op.constVJP {
					// First order is right, so only the second-order modes fail.
					assert.Less(t, rep.MaxRelErr(autodiff.ModeVJP), 1e-2)
					assert.Greater(t, rep.MaxRelErr(autodiff.ModeJVPofVJP), 0.1)
				}
			})
		}
	}
}

func TestGradCheckOptionsAndErrors(t *testing.T) {
	for _, d := range dtypes {
		t.Run(d.dt.String(), func(t *testing.T) {
			a := tensor.FromValues(d.dt, []float64{1, 2, 3}, 3)
			b := tensor.FromValues(d.dt, []float64{0.5, 0.25, 2}, 3)
			mul := func(xs []*graph.Node) *graph.Node { return graph.Mul(xs[0], xs[1]) }

			rep, err := autodiff.GradCheck(mul, []*tensor.Tensor{a, b}, autodiff.GradCheckOptions{Order: 1})
			require.NoError(t, err)
			require.Len(t, rep.Results, 4) // vjp and jvp for each input
			for _, r := range rep.Results {
				assert.Contains(t, []string{autodiff.ModeVJP, autodiff.ModeJVP}, r.Mode)
				assert.True(t, r.Passed)
			}
			assert.Equal(t, []float64{1, 2, 3}, a.Values(), "inputs are not modified")

			// A sample of elements is enough for large inputs.
			big := tensor.FromValues(d.dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 8)
			rep, err = autodiff.GradCheck(func(xs []*graph.Node) *graph.Node { return graph.Mul(xs[0], xs[0]) },
				[]*tensor.Tensor{big}, autodiff.GradCheckOptions{MaxElements: 3})
			require.NoError(t, err)
			assert.True(t, rep.Passed)

			// f may return one of its inputs, ignoring the others.
			rep, err = autodiff.GradCheck(func(xs []*graph.Node) *graph.Node { return xs[1] },
				[]*tensor.Tensor{a, b}, autodiff.GradCheckOptions{})
			require.NoError(t, err)
			assert.Equal(t, "(leaf)", rep.Name)
			assert.Len(t, rep.Results, 8)

			// A misuse panic inside f comes back as a *tensor.Error.
			_, err = autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
				return graph.Add(xs[0], xs[1])
			}, []*tensor.Tensor{a, tensor.Ones(d.dt, 2)}, autodiff.GradCheckOptions{})
			var te *tensor.Error
			require.ErrorAs(t, err, &te)
			assert.Contains(t, te.Msg, "(3,)")

			_, err = autodiff.GradCheck(mul, nil, autodiff.GradCheckOptions{})
			require.ErrorAs(t, err, &te)
		})
	}
}
