package optim

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// The plain Adam/AdamW update (vector blocks plus scalar tail) must equal
// the scalar loop bit for bit on every length, and the general loop (used
// with an L2 penalty or AMSGrad) must agree with it when those are off.
func TestAdamPlainVectorMatchesScalar(t *testing.T) {
	for _, dt := range numtest.DTypes {
		for _, c := range []struct {
			n     int
			decay float64
		}{{0, 1}, {1, 1}, {7, 1}, {8, 1}, {9, 1}, {31, 1}, {64, 1}, {1003, 1}, {9, 0.99}, {1003, 1 - 1e-5}} {
			n, decay := c.n, c.decay
			t.Run(fmt.Sprintf("%v/%d/decay=%g", dt, n, decay), func(t *testing.T) {
				rng := tensor.NewRNG(uint64(n) + 3)
				vals := func(lo, hi float64) []float64 { return rng.Uniform(tensor.Float64, lo, hi, n).Values() }
				p0, g0, m0, v0 := vals(-2, 2), vals(-1, 1), vals(-0.1, 0.1), vals(0, 0.01)
				hp := adamHyper{decay: decay, w1: 0.1, b2: 0.999, w2: 1e-3, stepSize: -1e-3 / (1 - 0.9*0.9),
					invBC2: 1 / math.Sqrt(1-0.999*0.999), eps: 1e-8}
				if dt == tensor.Float32 {
					checkAdamKernels(t, conv[float32](p0), conv[float32](g0), conv[float32](m0), conv[float32](v0), hp)
				} else {
					checkAdamKernels(t, p0, g0, m0, v0, hp)
				}
			})
		}
	}
}

func conv[T tensor.Float](x []float64) []T {
	out := make([]T, len(x))
	for i, v := range x {
		out[i] = T(v)
	}
	return out
}

func checkAdamKernels[T tensor.Float](t *testing.T, p, g, m, v []T, hp adamHyper) {
	cp := func(x []T) []T { return append([]T(nil), x...) }
	p1, m1, v1 := cp(p), cp(m), cp(v)
	adamUpdate(p1, g, m1, v1, nil, hp) // vector blocks where available
	p2, m2, v2 := cp(p), cp(m), cp(v)
	k := adamConsts[T]{T(hp.w1), T(hp.b2), T(hp.w2), T(hp.stepSize), T(hp.invBC2), T(hp.eps), T(hp.decay)}
	adamPlain(p2, g, m2, v2, &k)
	p3, m3, v3 := cp(p), cp(m), cp(v)
	adamGeneral(p3, g, m3, v3, nil, hp)
	for i := range p {
		require.Equal(t, p2[i], p1[i], "p[%d]", i)
		require.Equal(t, m2[i], m1[i], "m[%d]", i)
		require.Equal(t, v2[i], v1[i], "v[%d]", i)
		require.Equal(t, p2[i], p3[i], "general p[%d]", i)
		require.Equal(t, m2[i], m3[i], "general m[%d]", i)
		require.Equal(t, v2[i], v3[i], "general v[%d]", i)
	}
}
