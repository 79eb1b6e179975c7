package tensor

import (
	"math"
	"testing"
)

// Every run kernel that graph's fused programs use gives, on any split of
// the elements, the bits the tensor-level op gives on the whole tensor.
func TestElemRunMatchesTheTensorOps(t *testing.T) {
	rng := NewRNG(5)
	const n = 1000 // a few vector blocks and a tail
	for _, dt := range []DType{Float32, Float64} {
		a := rng.Normal(dt, 0, 2, n)
		b := rng.Uniform(dt, 0.1, 3, n) // positive, for Pow, Xlogy and Log
		sameBits := func(name string, want *Tensor, run func(lo, hi int, d *Tensor)) {
			got := New(dt, n)
			for lo := 0; lo < n; lo += 333 { // uneven pieces
				run(lo, min(lo+333, n), got)
			}
			w, g := want.Values(), got.Values()
			for i := range w {
				if math.Float64bits(w[i]) != math.Float64bits(g[i]) && !(math.IsNaN(w[i]) && math.IsNaN(g[i])) {
					t.Fatalf("%v %s: element %d: run %v, tensor op %v", dt, name, i, g[i], w[i])
				}
			}
		}
		piece := func(name string, p float64, x, y *Tensor) func(lo, hi int, d *Tensor) {
			return func(lo, hi int, d *Tensor) {
				if dt == Float32 {
					var ys []float32
					if y != nil {
						ys = y.Float32s()[lo:hi]
					}
					elemRun[float32](name, p)(d.Float32s()[lo:hi], x.Float32s()[lo:hi], ys)
				} else {
					var ys []float64
					if y != nil {
						ys = y.Float64s()[lo:hi]
					}
					elemRun[float64](name, p)(d.Float64s()[lo:hi], x.Float64s()[lo:hi], ys)
				}
			}
		}
		for name, op := range elemUnary {
			x := a
			if name == "Log" || name == "Sqrt" || name == "Lgamma" || name == "Digamma" {
				x = b
			}
			sameBits(name, op.run(New(dt, n), x), piece(name, 0, x, nil))
		}
		for name, op := range elemBinary {
			sameBits(name, op.run(New(dt, n), a, b), piece(name, 0, a, b))
		}
		sameBits("LeakyReluGrad", leakyReluGradOp(0.1).run(New(dt, n), a, b), piece("LeakyReluGrad", 0.1, a, b))
		for name, op := range elemParam {
			sameBits(name, op.run(New(dt, n), b, 0.7, 0), piece(name, 0.7, b, nil))
		}
	}
	if elemRun[float32]("Softmax", 0) != nil {
		t.Error("a kernel for an op that is not elementwise")
	}
}
