//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// TestHostAllocationsPerCall bounds the Go allocations of the calls every
// training step makes many times: a kernel launch (an elementwise op, a
// cell) and a cuBLAS product. Each goes through purego.SyscallN, whose
// argument slice is one allocation, and cuCtxSetCurrent is another; the
// arguments themselves live in scratch kept by the Kernels and the BLAS
// handle. Before that a launch made about ten and a product about eight.
func TestHostAllocationsPerCall(t *testing.T) {
	d, k := kernels(t)
	b, err := d.BLAS()
	if err != nil {
		t.Fatal(err)
	}
	const n = 64
	x := upload(t, d, sample(tensor.Float32, n*n, -1, 1))
	y := upload(t, d, sample(tensor.Float32, n*n, -1, 1))
	z := upload(t, d, sample(tensor.Float32, n*n, -1, 1))
	cell := upload(t, d, sample(tensor.Float32, 8*n, -1, 1))
	g := cuda.Gemm{M: n, N: n, K: n, A: x, B: y, C: z}
	calls := []struct {
		name string
		max  float64
		call func() error
	}{
		{"Unary", 2, func() error { return k.Unary("tanh", cuda.F32, n*n, z, x) }},
		{"Sgemm", 2, func() error { return b.Sgemm(g, 1, 0) }},
		{"Cell", 2, func() error {
			in := []cuda.RowOperand{{Buf: x, RowStride: 4 * n}, {Buf: y, RowStride: 4 * n}, {Buf: cell, RowStride: n}}
			return k.Cell("lstm_cell", cuda.F32, 2, n, z, in)
		}},
	}
	for _, c := range calls {
		var callErr error
		got := testing.AllocsPerRun(20, func() {
			if err := c.call(); err != nil {
				callErr = err
			}
		})
		if callErr != nil {
			t.Fatalf("%s: %v", c.name, callErr)
		}
		if got > c.max {
			t.Errorf("%s: %.1f allocations a call, want at most %.0f", c.name, got, c.max)
		}
	}
	if err := d.Synchronize(); err != nil {
		t.Fatal(err)
	}
}
