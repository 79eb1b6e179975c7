package tensor

import (
	"strconv"
	"testing"
)

// BenchmarkElementwise measures the hot elementwise kernels writing into a
// preallocated destination: BenchmarkElementwise/<op>/<dtype>/<n>. Bytes
// per op count every operand read and the result written.
func BenchmarkElementwise(b *testing.B) {
	ops := []struct {
		name  string
		arity int
		f     func(dst, x, y *Tensor) *Tensor
	}{
		{"Add", 2, AddTo},
		{"Mul", 2, MulTo},
		{"Exp", 1, func(dst, x, _ *Tensor) *Tensor { return ExpTo(dst, x) }},
		{"Relu", 1, func(dst, x, _ *Tensor) *Tensor { return ReluTo(dst, x) }},
		{"Sigmoid", 1, func(dst, x, _ *Tensor) *Tensor { return SigmoidTo(dst, x) }},
		{"Gelu", 1, func(dst, x, _ *Tensor) *Tensor { return GeluTo(dst, x) }},
		{"GeluGrad", 2, GeluGradTo},
		{"LeakyRelu", 1, func(dst, x, _ *Tensor) *Tensor { return LeakyReluTo(dst, x, 0.2) }},
		{"LeakyReluGrad", 2, func(dst, x, y *Tensor) *Tensor { return LeakyReluGradTo(dst, x, y, 0.2) }},
	}
	rng := NewRNG(1)
	for _, op := range ops {
		for _, dt := range []DType{Float32, Float64} {
			for _, n := range []int{1_000, 100_000, 1_000_000} {
				x := rng.Uniform(dt, -5, 5, n)
				y := rng.Uniform(dt, -5, 5, n)
				dst := New(dt, n)
				b.Run(op.name+"/"+dt.String()+"/"+strconv.Itoa(n), func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(n * dt.Size() * (op.arity + 1)))
					for b.Loop() {
						op.f(dst, x, y)
					}
				})
			}
		}
	}
}

// BenchmarkElementwiseAlloc is the allocating form, for comparison.
func BenchmarkElementwiseAlloc(b *testing.B) {
	for _, dt := range []DType{Float32, Float64} {
		x := NewRNG(2).Uniform(dt, -5, 5, 100_000)
		b.Run("Exp/"+dt.String()+"/100000", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(x.Size() * dt.Size() * 2))
			for b.Loop() {
				Exp(x)
			}
		})
	}
}
