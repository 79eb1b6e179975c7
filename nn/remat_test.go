package nn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// deepMLP returns layers Linear-Tanh blocks of width w, as segments of
// per layers each, every segment wrapped in a Remat when remat is set.
func deepMLP(seed uint64, layers, per, w int, remat bool, dt tensor.DType) *nn.Sequential {
	rng := tensor.NewRNG(seed)
	var segs []nn.Layer
	for i := 0; i < layers; i += per {
		var seg []nn.Layer
		for range per {
			seg = append(seg, nn.NewLinear(rng, w, w, true, dt), nn.Tanh{})
		}
		var l nn.Layer = nn.NewSequential(seg...)
		if remat {
			l = nn.NewRemat(l)
		}
		segs = append(segs, l)
	}
	return nn.NewSequential(segs...)
}

// deepStep runs one step of m on g: the loss Σ out² / 2 and the gradients.
func deepStep(g *graph.Graph, m *nn.Sequential, x *tensor.Tensor) (float64, []*tensor.Tensor) {
	g.Reset()
	out := m.Forward(g.Const(x))
	loss := graph.MulScalar(graph.Sum(graph.Square(out), nil, false), 0.5)
	grads := nn.Gradients(loss, m.Params())
	return loss.Item(), grads
}

func TestRematGradientsEqualPlainBitForBit(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		plain, remat := deepMLP(4, 8, 2, 16, false, dt), deepMLP(4, 8, 2, 16, true, dt)
		x := tensor.NewRNG(9).Normal(dt, 0, 1, 32, 16)
		gp, gr := graph.New(), graph.New()
		for step := range 2 { // the second step replays recycled buffers
			lp, wantGrads := deepStep(gp, plain, x)
			lr, gotGrads := deepStep(gr, remat, x)
			require.Equal(t, math.Float64bits(lp), math.Float64bits(lr), "loss, step %d", step)
			require.Len(t, gotGrads, len(wantGrads))
			for i := range wantGrads {
				w, g := wantGrads[i].Values(), gotGrads[i].Values()
				for k := range w {
					if math.Float64bits(w[k]) != math.Float64bits(g[k]) {
						t.Fatalf("%v step %d: gradient %d element %d: remat %v, plain %v", dt, step, i, k, g[k], w[k])
					}
				}
			}
			// Each Remat keeps its output and its inputs' cotangents; the
			// plain chain keeps every layer's values.
			assert.Less(t, float64(gr.BufferBytes()), 0.75*float64(gp.BufferBytes()), "%v: remat %d bytes, plain %d", dt, gr.BufferBytes(), gp.BufferBytes())
		}
	}
}

func TestRematNamesItsParamsAsTheInnerLayer(t *testing.T) {
	rng := tensor.NewRNG(1)
	inner := nn.NewSequential(nn.NewLinear(rng, 3, 2, true, tensor.Float64), nn.Tanh{})
	r := nn.NewRemat(inner)
	assert.Equal(t, nn.Names(inner.Params()), nn.Names(r.Params()))
	assert.Contains(t, r.String(), "Remat(")
	numtest.Misuse(t, "nn.NewRemat", numtest.Here(), func() { nn.NewRemat(nil) }, "nil layer")
}

// A 16-layer MLP in four rematerialised segments: the same gradients as
// the plain model, for a fraction of the step's buffer memory.
func ExampleRemat() {
	build := func(remat bool) *nn.Sequential {
		rng := tensor.NewRNG(1)
		var segs []nn.Layer
		for range 4 {
			var seg []nn.Layer
			for range 4 {
				seg = append(seg, nn.NewLinear(rng, 64, 64, true, tensor.Float32), nn.ReLU{})
			}
			var l nn.Layer = nn.NewSequential(seg...)
			if remat {
				l = nn.NewRemat(l)
			}
			segs = append(segs, l)
		}
		return nn.NewSequential(segs...)
	}
	x := tensor.NewRNG(2).Normal(tensor.Float32, 0, 1, 512, 64)
	step := func(m *nn.Sequential) ([]float64, int64) {
		g := graph.New()
		loss := graph.Sum(graph.Square(m.Forward(g.Const(x))), nil, false)
		return nn.Gradients(loss, m.Params())[0].Values(), g.BufferBytes()
	}
	plain, plainBytes := step(build(false))
	remat, rematBytes := step(build(true))
	fmt.Println("same gradients:", fmt.Sprint(plain) == fmt.Sprint(remat))
	fmt.Printf("buffers: %.2f of the plain model's\n", float64(rematBytes)/float64(plainBytes))
	// Output:
	// same gradients: true
	// buffers: 0.42 of the plain model's
}
