package graph_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// rnnStep is a tanh recurrence of three steps, h ← tanh(x_t·W + h·U),
// with loss Σ h²: W is the right operand of three matmuls forwards, U of
// two (the first step starts from h = 0 without one) and, transposed, of
// two backwards, and the cotangents dz of the second and third steps of
// two each (the products x_tᵀ·dz and h_{t-1}ᵀ·dz of W's and U's
// gradients): 11 matmuls on 4 packed operands.
func rnnStep(g *graph.Graph, in []*graph.Node) []*graph.Node {
	x, w, u := in[0], in[1], in[2]
	var h *graph.Node
	for t := range x.Shape()[0] {
		xt := graph.Reshape(graph.Slice(x, 0, t, t+1, 1), x.Shape()[1], x.Shape()[2])
		z := graph.MatMul(xt, w)
		if h != nil {
			z = graph.Add(z, graph.MatMul(h, u))
		}
		h = graph.Tanh(z)
	}
	loss := graph.Sum(graph.Square(h), nil, false)
	return append([]*graph.Node{loss}, autodiff.Grad(loss, w, u)...)
}

func TestCapturePacksSharedOperands(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			rng := tensor.NewRNG(3)
			in := []*tensor.Tensor{rng.Normal(dt, 0, 1, 3, 4, 5), rng.Normal(dt, 0, 0.5, 5, 6), rng.Normal(dt, 0, 0.5, 6, 6)}
			p, err := graph.Capture(rnnStep, in, graph.CaptureOptions{})
			require.NoError(t, err)
			require.Equal(t, 11, p.Stats().Packed, p.String())
			packed := 0
			for _, s := range p.Steps() {
				if s.Op == "matmul_packed" {
					packed++
				}
			}
			require.Equal(t, 11, packed)
			require.Contains(t, p.String(), "11 products on packed operands")

			plain, err := graph.Capture(rnnStep, in, graph.CaptureOptions{NoFusion: true})
			require.NoError(t, err)
			require.Zero(t, plain.Stats().Packed)
			require.NotContains(t, plain.String(), "matmul_packed")

			// New weights on every run: the first step of each group packs
			// again, so the results follow them bit for bit.
			for k := range 3 {
				for _, w := range in[1:] {
					tensor.AddScalarTo(w, tensor.MulScalarTo(w, w, 0.9), 0.01*float64(k))
				}
				want := eagerRun(rnnStep, in)
				got, err := p.Run(in)
				require.NoError(t, err)
				requireSameBits(t, want, got, "packed program")
				got, err = plain.Run(in)
				require.NoError(t, err)
				requireSameBits(t, want, got, "unpacked program")
			}

			// Build turns the packed steps back into matmuls.
			g := graph.New()
			nodes := []*graph.Node{g.VarOf(in[0]), g.VarOf(in[1]), g.VarOf(in[2])}
			var vals []*tensor.Tensor
			for _, n := range p.Build(g, nodes) {
				vals = append(vals, n.Value())
			}
			requireSameBits(t, eagerRun(rnnStep, in), vals, "built program")
		})
	}
}

// TestCaptureLeavesLoneOperandsUnpacked: a right operand read by one
// matmul, or of depth 1, is multiplied as it is.
func TestCaptureLeavesLoneOperandsUnpacked(t *testing.T) {
	rng := tensor.NewRNG(4)
	in := []*tensor.Tensor{rng.Normal(tensor.Float32, 0, 1, 4, 3), rng.Normal(tensor.Float32, 0, 1, 3, 5), rng.Normal(tensor.Float32, 0, 1, 1, 5)}
	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		y := graph.MatMul(in[0], in[1])                                           // W once
		z := graph.MatMul(graph.Sum(in[0], []int{1}, true), in[2])                // depth 1
		zz := graph.MatMul(graph.Sum(graph.Square(in[0]), []int{1}, true), in[2]) // depth 1 again
		return []*graph.Node{graph.Sum(graph.Add(graph.Add(y, z), zz), nil, false)}
	}
	p, err := graph.Capture(step, in, graph.CaptureOptions{})
	require.NoError(t, err)
	require.Zero(t, p.Stats().Packed, p.String())
	require.False(t, strings.Contains(p.String(), "matmul_packed"))
	got, err := p.Run(in)
	require.NoError(t, err)
	requireSameBits(t, eagerRun(step, in), got, "outputs")
}

// TestCapturePacksConstantOperandOnce: a constant right operand shared by
// two matmuls is packed on the first Run and reused; new inputs still
// give eager's bits.
func TestCapturePacksConstantOperandOnce(t *testing.T) {
	w := tensor.NewRNG(8).Normal(tensor.Float32, 0, 1, 5, 4)
	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		c := g.Const(w)
		y := graph.Tanh(graph.MatMul(in[0], c))
		z := graph.MatMul(graph.Sin(in[0]), c)
		return []*graph.Node{graph.Sum(graph.Mul(y, z), nil, false)}
	}
	in := []*tensor.Tensor{tensor.NewRNG(9).Normal(tensor.Float32, 0, 1, 3, 5)}
	p, err := graph.Capture(step, in, graph.CaptureOptions{})
	require.NoError(t, err)
	require.Equal(t, 2, p.Stats().Packed, p.String())
	for k := range 3 {
		tensor.AddScalarTo(in[0], in[0], 0.25*float64(k))
		got, err := p.Run(in)
		require.NoError(t, err)
		requireSameBits(t, eagerRun(step, in), got, "outputs")
	}
}

// linearStep is a recurrence through the linear op, h ← tanh(x_t·Wᵀ + b +
// h·Uᵀ + c) over three steps, with loss Σ h²: the three input projections
// share one packing of Wᵀ and the two later steps' state projections one
// of Uᵀ, as a GRU's recurrent projections do (5 linear steps); backwards,
// the state's cotangent is multiplied by U twice (2 matmuls): 7 products
// on 3 packings.
func linearStep(g *graph.Graph, in []*graph.Node) []*graph.Node {
	x, w, b, u, c := in[0], in[1], in[2], in[3], in[4]
	var h *graph.Node
	for t := range x.Shape()[0] {
		xt := graph.Reshape(graph.Slice(x, 0, t, t+1, 1), x.Shape()[1], x.Shape()[2])
		z := graph.Linear(xt, w, b)
		if h != nil {
			z = graph.Add(z, graph.Linear(h, u, c))
		}
		h = graph.Tanh(z)
	}
	loss := graph.Sum(graph.Square(h), nil, false)
	return append([]*graph.Node{loss}, autodiff.Grad(loss, w, b, u, c)...)
}

func TestCapturePacksSharedLinearWeights(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			rng := tensor.NewRNG(6)
			in := []*tensor.Tensor{rng.Normal(dt, 0, 1, 3, 4, 5), rng.Normal(dt, 0, 0.5, 6, 5), rng.Normal(dt, 0, 0.5, 6),
				rng.Normal(dt, 0, 0.5, 6, 6), rng.Normal(dt, 0, 0.5, 6)}
			p, err := graph.Capture(linearStep, in, graph.CaptureOptions{})
			require.NoError(t, err)
			linear := 0
			for _, s := range p.Steps() {
				if s.Op == "linear_packed" {
					linear++
				}
			}
			require.Equal(t, 5, linear, p.String())
			require.Equal(t, 7, p.Stats().Packed, p.String())
			for k := range 3 {
				for _, w := range in[1:] {
					tensor.AddScalarTo(w, tensor.MulScalarTo(w, w, 0.9), 0.01*float64(k))
				}
				got, err := p.Run(in)
				require.NoError(t, err)
				requireSameBits(t, eagerRun(linearStep, in), got, "packed program")
			}
			g := graph.New()
			nodes := make([]*graph.Node, len(in))
			for i, x := range in {
				nodes[i] = g.VarOf(x)
			}
			var vals []*tensor.Tensor
			for _, n := range p.Build(g, nodes) {
				vals = append(vals, n.Value())
			}
			requireSameBits(t, eagerRun(linearStep, in), vals, "built program")
		})
	}
}
