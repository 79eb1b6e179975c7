package graph_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// fusedCase pairs a fused op with the composite of plain ops it replaces.
// Both must give the same values and the same gradients (of a random
// projection of the output, to every input) and the same JVPs.
type fusedCase struct {
	name      string
	inputs    func(rng *tensor.RNG) []*tensor.Tensor
	fused     func(xs []*graph.Node) *graph.Node
	composite func(xs []*graph.Node) *graph.Node
	bitwise   bool // the fused kernel performs the composite's operations exactly
}

func fusedCases() []fusedCase {
	normal := func(shapes ...[]int) func(*tensor.RNG) []*tensor.Tensor {
		return func(rng *tensor.RNG) []*tensor.Tensor {
			out := make([]*tensor.Tensor, len(shapes))
			for i, s := range shapes {
				out[i] = rng.Normal(tensor.Float64, 0, 2, s...)
			}
			return out
		}
	}
	spd := func(rng *tensor.RNG) []*tensor.Tensor {
		a := rng.Normal(tensor.Float64, 0, 1, 5, 5)
		k := tensor.AddDiag(tensor.MatMulT(a, a, false, true), tensor.Scalar(tensor.Float64, 5))
		l, err := tensor.Cholesky(k)
		if err != nil {
			panic(err)
		}
		return []*tensor.Tensor{l, rng.Normal(tensor.Float64, 0, 1, 5, 5)}
	}
	return []fusedCase{
		{name: "sigmoid_grad", inputs: normal([]int{3, 4}, []int{3, 4}), bitwise: true,
			fused: func(xs []*graph.Node) *graph.Node { return graph.SigmoidGrad(xs[0], xs[1]) },
			composite: func(xs []*graph.Node) *graph.Node {
				x := xs[1]
				return graph.Mul(xs[0], graph.Mul(graph.Sigmoid(x), graph.Sigmoid(graph.Neg(x))))
			}},
		{name: "tanh_grad", inputs: normal([]int{3, 4}, []int{4}),
			fused: func(xs []*graph.Node) *graph.Node { return graph.TanhGrad(xs[0], xs[1]) },
			composite: func(xs []*graph.Node) *graph.Node {
				return graph.Mul(xs[0], graph.AddScalar(graph.Neg(graph.Square(xs[1])), 1))
			}},
		{name: "gelu_grad", inputs: normal([]int{3, 4}, []int{4}),
			fused: func(xs []*graph.Node) *graph.Node { return graph.GeluGrad(xs[0], xs[1]) },
			composite: func(xs []*graph.Node) *graph.Node {
				x := xs[1]
				cdf := graph.MulScalar(graph.AddScalar(graph.Erf(graph.MulScalar(x, 1/math.Sqrt2)), 1), 0.5)
				pdf := graph.MulScalar(graph.Exp(graph.MulScalar(graph.Square(x), -0.5)), 1/math.Sqrt(2*math.Pi))
				return graph.Mul(xs[0], graph.Add(cdf, graph.Mul(x, pdf)))
			}},
		{name: "relu_grad", inputs: normal([]int{3, 4}, []int{3, 4}), bitwise: true,
			fused:     func(xs []*graph.Node) *graph.Node { return graph.ReluGrad(xs[0], xs[1]) },
			composite: func(xs []*graph.Node) *graph.Node { return graph.Mul(xs[0], graph.Sign(xs[1])) }},
		{name: "leaky_relu_grad", inputs: normal([]int{3, 4}, []int{3, 4}), bitwise: true,
			fused: func(xs []*graph.Node) *graph.Node { return graph.LeakyReluGrad(xs[0], xs[1], 0.2) },
			composite: func(xs []*graph.Node) *graph.Node {
				x := xs[1]
				return graph.Where(graph.Greater(x, x.Graph().Scalar(tensor.Float64, 0)), xs[0], graph.MulScalar(xs[0], 0.2))
			}},
		{name: "leaky_relu_grad broadcast", inputs: normal([]int{4}, []int{3, 4}), bitwise: true,
			fused: func(xs []*graph.Node) *graph.Node { return graph.LeakyReluGrad(xs[0], xs[1], 0.2) },
			composite: func(xs []*graph.Node) *graph.Node {
				x := xs[1]
				return graph.Where(graph.Greater(x, x.Graph().Scalar(tensor.Float64, 0)), xs[0], graph.MulScalar(xs[0], 0.2))
			}},
		{name: "softmax_grad", inputs: normal([]int{3, 4}, []int{3, 4}),
			fused: func(xs []*graph.Node) *graph.Node { return graph.SoftmaxGrad(graph.Softmax(xs[0], 0), xs[1], 0) },
			composite: func(xs []*graph.Node) *graph.Node {
				y := graph.Softmax(xs[0], 0)
				return graph.Mul(y, graph.Sub(xs[1], graph.Sum(graph.Mul(xs[1], y), []int{0}, true)))
			}},
		{name: "add_diag", inputs: normal([]int{2, 4, 4}, []int{4}), bitwise: true,
			fused: func(xs []*graph.Node) *graph.Node { return graph.AddDiag(xs[0], xs[1]) },
			composite: func(xs []*graph.Node) *graph.Node {
				eye := xs[0].Graph().Const(tensor.Eye(tensor.Float64, 4))
				return graph.Add(xs[0], graph.Mul(eye, xs[1]))
			}},
		{name: "sq_dist", inputs: normal([]int{5, 3}, []int{4, 3}),
			fused: func(xs []*graph.Node) *graph.Node { return graph.SqDist(xs[0], xs[1]) },
			composite: func(xs []*graph.Node) *graph.Node {
				a, b := xs[0], xs[1]
				diff := graph.Sub(graph.Unsqueeze(a, 1), graph.Unsqueeze(b, 0)) // (5, 4, 3)
				return graph.Sum(graph.Square(diff), []int{2}, false)
			}},
		{name: "tri_matmul", inputs: normal([]int{4, 4}, []int{4, 3}),
			fused:     func(xs []*graph.Node) *graph.Node { return graph.TriMatMul(xs[0], xs[1], true) },
			composite: func(xs []*graph.Node) *graph.Node { return graph.MatMul(graph.Transpose(graph.Tril(xs[0])), xs[1]) }},
		{name: "sym_lower", inputs: normal([]int{4, 4}),
			fused: func(xs []*graph.Node) *graph.Node { return graph.SymmetrizeLower(xs[0]) },
			composite: func(xs []*graph.Node) *graph.Node {
				eye := xs[0].Graph().Const(tensor.Eye(tensor.Float64, 4))
				strictLower := graph.Sub(graph.Tril(xs[0]), graph.Mul(xs[0], eye))
				return graph.Add(graph.Tril(xs[0]), graph.Transpose(strictLower))
			}},
		// Murray (2016): Ā = Φ-symmetrised L⁻ᵀ Φ(LᵀL̄) L⁻¹, the formula the
		// blocked reverse sweep replaces.
		{name: "cholesky_grad", inputs: spd,
			fused: func(xs []*graph.Node) *graph.Node { return graph.CholeskyGrad(xs[0], xs[1]) },
			composite: func(xs []*graph.Node) *graph.Node {
				l, lbar := graph.Tril(xs[0]), graph.Tril(xs[1])
				p := graph.PhiLower(graph.MatMul(graph.Transpose(l), lbar))
				s := graph.TriSolve(l, graph.Transpose(graph.TriSolve(l, graph.Transpose(p), true, true)), true, true)
				return graph.MulScalar(graph.Add(s, graph.Transpose(s)), 0.5)
			}},
	}
}

// TestFusedOpsMatchComposites checks each fused op against its composite:
// forward values, VJPs to every input and JVPs along random tangents.
func TestFusedOpsMatchComposites(t *testing.T) {
	for _, c := range fusedCases() {
		t.Run(c.name, func(t *testing.T) {
			rng := tensor.NewRNG(7)
			ins := c.inputs(rng)
			run := func(f func([]*graph.Node) *graph.Node) (val []float64, vjps, jvps [][]float64) {
				g := graph.New()
				xs := make([]*graph.Node, len(ins))
				for i, in := range ins {
					xs[i] = g.Var(in)
				}
				y := f(xs)
				r := tensor.NewRNG(11)
				ct := g.Const(r.Normal(tensor.Float64, 0, 1, y.Shape()...))
				for _, v := range autodiff.VJP(y, ct, xs...) {
					vjps = append(vjps, v.Value().Values())
				}
				tans := make([]*graph.Node, len(xs))
				for i, x := range xs {
					tans[i] = g.Const(r.Normal(tensor.Float64, 0, 1, x.Shape()...))
				}
				jvps = append(jvps, autodiff.JVP([]*graph.Node{y}, xs, tans)[0].Value().Values())
				return y.Value().Values(), vjps, jvps
			}
			fv, fvjp, fjvp := run(c.fused)
			cv, cvjp, cjvp := run(c.composite)
			if c.bitwise {
				require.Equal(t, cv, fv, "values")
			} else {
				require.InDeltaSlice(t, cv, fv, 1e-12*(1+maxAbs(cv)), "values")
			}
			for i := range fvjp {
				require.InDeltaSlice(t, cvjp[i], fvjp[i], 1e-10*(1+maxAbs(cvjp[i])), "VJP of input %d", i)
			}
			require.InDeltaSlice(t, cjvp[0], fjvp[0], 1e-10*(1+maxAbs(cjvp[0])), "JVP")
		})
	}
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x, -x)
	}
	return m
}
