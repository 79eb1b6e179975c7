package tensor

import (
	"fmt"
	"testing"
)

// BenchmarkReduce measures the hot reductions: Sum over the last axis
// (row sums), Sum over axis 0 (bias gradients) and Softmax over the last
// axis, on contiguous matrices, writing into preallocated destinations.
func BenchmarkReduce(b *testing.B) {
	shapes := [][2]int{{128, 512}, {1024, 1024}}
	ops := []struct {
		name string
		dst  func(dt DType, r, c int) *Tensor
		run  func(dst, x *Tensor)
	}{
		{"SumLast", func(dt DType, r, c int) *Tensor { return New(dt, r) },
			func(dst, x *Tensor) { SumInto(dst, x, []int{-1}, false) }},
		{"SumAxis0", func(dt DType, r, c int) *Tensor { return New(dt, c) },
			func(dst, x *Tensor) { SumInto(dst, x, []int{0}, false) }},
		{"Softmax", func(dt DType, r, c int) *Tensor { return New(dt, r, c) },
			func(dst, x *Tensor) { SoftmaxInto(dst, x, -1) }},
	}
	for _, op := range ops {
		for _, dt := range []DType{Float32, Float64} {
			for _, s := range shapes {
				r, c := s[0], s[1]
				b.Run(fmt.Sprintf("%s/%v/%dx%d", op.name, dt, r, c), func(b *testing.B) {
					x := Linspace(dt, -3, 3, r*c)
					x = Reshape(x, r, c)
					dst := op.dst(dt, r, c)
					b.SetBytes(int64(r * c * dt.Size()))
					b.ReportAllocs()
					for b.Loop() {
						op.run(dst, x)
					}
				})
			}
		}
	}
}
