package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/chewxy/math32"
	"github.com/stretchr/testify/require"
)

// Elementwise ops on runs where an operand is broadcast (stride 0) or
// strided (a reversed or stepped slice) go through the gathered path; the
// results must be those of the definition evaluated element by element.
func TestGatheredElementwise(t *testing.T) {
	long := 2*parallelElemMin + 37 // one run split over goroutines
	type layout struct {
		name string
		a, b func(dt DType) *Tensor // operands of shape (rows, cols)
	}
	layouts := []layout{
		{"broadcast first operand, runs of 40", func(dt DType) *Tensor {
			return Expand(laRandom(dt, 1, 3, 1), 3, 40)
		}, func(dt DType) *Tensor { return laRandom(dt, 2, 3, 40) }},
		{"scalar times a long run", func(dt DType) *Tensor {
			return Expand(Scalar(dt, 1.5), 1, long)
		}, func(dt DType) *Tensor { return laRandom(dt, 3, 1, long) }},
		{"reversed columns, runs of 100", func(dt DType) *Tensor {
			return laRandom(dt, 4, 2, 100)
		}, func(dt DType) *Tensor { return Slice(laRandom(dt, 5, 2, 100), 1, 99, -101, -1) }},
		{"stepped long run", func(dt DType) *Tensor {
			return Slice(laRandom(dt, 6, 1, 2*long), 1, 0, 2*long, 2)
		}, func(dt DType) *Tensor { return laRandom(dt, 7, 1, long) }},
	}
	ops := []struct {
		name string
		f    func(a, b *Tensor) *Tensor
		want func(x, y float64) float64
	}{
		{"Add", Add, func(x, y float64) float64 { return x + y }},
		{"Mul", Mul, func(x, y float64) float64 { return x * y }},
		{"Div", Div, func(x, y float64) float64 { return x / y }},
	}
	for _, lay := range layouts {
		for _, op := range ops {
			for _, dt := range laDTypes {
				t.Run(fmt.Sprintf("%s/%s/%s", lay.name, op.name, dt), func(t *testing.T) {
					a, b := lay.a(dt), lay.b(dt)
					got := op.f(a, b)
					rows, cols := got.Shape()[0], got.Shape()[1]
					tol := 1e-6
					if dt == Float64 {
						tol = 1e-15
					}
					for i := range rows {
						for j := range cols {
							w := op.want(a.At(i, j), b.At(i, j))
							if dt == Float32 {
								w = float64(float32(w))
							}
							g := got.At(i, j)
							if math.Abs(g-w) > tol*math.Max(1, math.Abs(w)) {
								require.Failf(t, "wrong element", "(%d, %d): got %v, want %v", i, j, g, w)
							}
						}
					}
				})
			}
		}
	}
	// A unary op on a strided source.
	for _, dt := range laDTypes {
		src := Slice(laRandom(dt, 8, 3, 200), 1, 199, -201, -1)
		got := Square(src)
		for i := range 3 {
			for j := range 200 {
				v := src.At(i, j)
				require.InDelta(t, v*v, got.At(i, j), 1e-6*math.Max(1, v*v))
			}
		}
	}
}

// Heavy unary ops split runs from heavyElemMin elements per goroutine;
// every element is still its scalar function's value.
func TestHeavyUnarySplit(t *testing.T) {
	n := 3*heavyElemMin + 5
	x := NewRNG(12).Uniform(Float64, 0.1, 50, n)
	for _, c := range []struct {
		name string
		f    func(*Tensor) *Tensor
		want func(float64) float64
	}{{"Sin", Sin, math.Sin}, {"Log", Log, math.Log}, {"Erf", Erf, math.Erf}} {
		got := c.f(x).Float64s()
		for i, v := range x.Float64s() {
			require.Equal(t, math.Float64bits(c.want(v)), math.Float64bits(got[i]), "%s at %d", c.name, i)
		}
	}
	x32 := x.Cast(Float32)
	got := Cos(x32).Float32s()
	for i, v := range x32.Float32s() {
		require.Equal(t, math.Float32bits(math32.Cos(v)), math.Float32bits(got[i]), "Cos float32 at %d", i)
	}
}
