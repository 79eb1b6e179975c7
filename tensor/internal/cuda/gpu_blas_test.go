//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// adamRef is optim/adam.go's update (adamGeneral without AMSGrad) in
// plain Go, each product rounded to T before the addition as there.
func adamRef[T float32 | float64](p, g, m, v []T, h [8]float64) {
	w1, b2, w2, ss, c := T(h[0]), T(h[1]), T(h[2]), T(h[3]), T(h[4])
	eps, decay, l2 := T(h[5]), T(h[6]), T(h[7])
	for i := range p {
		pi := p[i]
		if decay != 1 {
			pi *= decay
		}
		gi := g[i]
		if l2 != 0 {
			gi += T(l2 * pi)
		}
		mi := gi - T((gi-m[i])*(1-w1))
		if w1 < 0.5 {
			mi = m[i] + T(w1*(gi-m[i]))
		}
		vi := T(v[i]*b2) + T(T(w2*gi)*gi)
		m[i], v[i] = mi, vi
		p[i] = pi + T(ss*(mi/(T(T(math.Sqrt(float64(vi)))*c)+eps)))
	}
}

// TestAdamKernel runs three steps of Adam with L2 decay, AdamW, and a
// small β₁ (the other form of lerp). The kernel performs the same
// correctly rounded operations as the CPU (--fmad=false), so it should
// agree to the bit; the tolerance is 4ε relative.
func TestAdamKernel(t *testing.T) {
	d, k := kernels(t)
	for _, c := range []struct {
		name                 string
		lr, beta1, beta2, wd float64
		decoupled            bool
	}{
		{"Adam+L2", 1e-3, 0.9, 0.999, 0.01, false},
		{"AdamW", 1e-2, 0.9, 0.99, 0.05, true},
		{"beta1=0.3", 1e-3, 0.3, 0.999, 0, false},
	} {
		for _, ty := range dtypes {
			const n = 50021
			p := sample(ty, n, -1, 1, n)
			pRef, mRef, vRef := p.Clone(), tensor.Zeros(ty, n), tensor.Zeros(ty, n)
			pb, mb, vb := upload(t, d, p), upload(t, d, mRef), upload(t, d, vRef)
			for step := 1; step <= 3; step++ {
				g := sample(ty, n, -float64(step), 0.5*float64(step), n)
				h := [8]float64{1 - c.beta1, c.beta2, 1 - c.beta2,
					-c.lr / (1 - math.Pow(c.beta1, float64(step))),
					1 / math.Sqrt(1-math.Pow(c.beta2, float64(step))), 1e-8, 1, 0}
				if c.decoupled {
					h[6] = 1 - c.lr*c.wd
				} else {
					h[7] = c.wd
				}
				gb := upload(t, d, g)
				if err := k.Update("adam", dt(ty), n, pb, gb, [3]*cuda.Buffer{mb, vb}, h); err != nil {
					t.Fatal(err)
				}
				d.Release(gb)
				if ty == tensor.Float32 {
					adamRef(pRef.Float32s(), g.Float32s(), mRef.Float32s(), vRef.Float32s(), h)
				} else {
					adamRef(pRef.Float64s(), g.Float64s(), mRef.Float64s(), vRef.Float64s(), h)
				}
			}
			tl := tol{rtol: 4 * eps(ty), atol: 1e-30}
			compare(t, fmt.Sprintf("%s %v p", c.name, ty), download(t, d, pb, ty, n), pRef, tl)
			compare(t, fmt.Sprintf("%s %v m", c.name, ty), download(t, d, mb, ty, n), mRef, tl)
			compare(t, fmt.Sprintf("%s %v v", c.name, ty), download(t, d, vb, ty, n), vRef, tl)
			d.Release(pb)
			d.Release(mb)
			d.Release(vb)
		}
	}
}

// gemmBound is the forward error bound of a k-term dot product in
// roundoff u, per element: 2·k·u·(|op(A)|·|op(B)|)ᵢⱼ (Higham, 2002,
// "Accuracy and Stability of Numerical Algorithms", §3.5), doubled to
// cover the CPU reference's own error.
func gemmBound(a, b *tensor.Tensor, ta, tb bool, k int, u float64) []float64 {
	ab := tensor.MatMulT(tensor.Abs(a), tensor.Abs(b), ta, tb).Values()
	for i := range ab {
		ab[i] = 2*float64(k)*u*ab[i] + 1e-30
	}
	return ab
}

// TestGemm compares Sgemm and Dgemm (and Sgemm with TF32 and bfloat16
// inputs) with tensor.MatMulT for every combination of transposes.
func TestGemm(t *testing.T) {
	d := device(t)
	blas, err := d.BLAS()
	if err != nil {
		t.Fatal(err)
	}
	const m, n, k = 67, 45, 129
	for _, ty := range dtypes {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			ta, tb := tr[0], tr[1]
			aShape, bShape := []int{m, k}, []int{k, n}
			if ta {
				aShape = []int{k, m}
			}
			if tb {
				bShape = []int{n, k}
			}
			a, b := sample(ty, m*k, -1, 1, aShape...), sample(ty, k*n, -2, 1, bShape...)
			c0 := sample(ty, m*n, -1, 1, m, n)
			ab, bb, cb := upload(t, d, a), upload(t, d, b), upload(t, d, c0)
			g := cuda.Gemm{TransA: ta, TransB: tb, M: m, N: n, K: k, A: ab, B: bb, C: cb}
			// C ← 2·op(A)·op(B) + 0.5·C.
			if ty == tensor.Float32 {
				err = blas.Sgemm(g, 2, 0.5)
			} else {
				err = blas.Dgemm(g, 2, 0.5)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tensor.Add(tensor.MulScalar(tensor.MatMulT(a, b, ta, tb), 2), tensor.MulScalar(c0, 0.5))
			bound := gemmBound(a, b, ta, tb, k, 2*eps(ty))
			what := fmt.Sprintf("gemm %v transA=%v transB=%v", ty, ta, tb)
			compareBound(t, what, download(t, d, cb, ty, m, n), want, bound)
			if ty == tensor.Float32 {
				// TF32 rounds the inputs to 10 mantissa bits (u = 2⁻¹¹),
				// bfloat16 to 7 (u = 2⁻⁸).
				for _, p := range []struct {
					p cuda.Precision
					u float64
				}{{cuda.PrecisionTF32, 0x1p-11}, {cuda.PrecisionBF16, 0x1p-8}} {
					if err := blas.SetPrecision(p.p); err != nil {
						t.Fatal(err)
					}
					err := blas.Sgemm(g, 1, 0)
					if err2 := blas.SetPrecision(cuda.PrecisionFloat32); err == nil {
						err = err2
					}
					if err != nil {
						t.Fatal(err)
					}
					compareBound(t, what+" "+p.p.String(), download(t, d, cb, ty, m, n), tensor.MatMulT(a, b, ta, tb), gemmBound(a, b, ta, tb, k, p.u))
				}
			}
			d.Release(ab)
			d.Release(bb)
			d.Release(cb)
		}
	}
}

// gemmTFLOPs times reps products of n×n matrices after a warm-up and
// returns TFLOP/s (2n³ flops each).
func gemmTFLOPs(tb testing.TB, d *cuda.Driver, ty tensor.DType, p cuda.Precision, n, reps int) float64 {
	blas, err := d.BLAS()
	if err != nil {
		tb.Fatal(err)
	}
	bufs := make([]*cuda.Buffer, 3)
	for i := range bufs {
		bufs[i] = upload(tb, d, sample(ty, n*n, -1, 1, n*n))
		defer d.Release(bufs[i])
	}
	if err := blas.SetPrecision(p); err != nil {
		tb.Fatal(err)
	}
	defer blas.SetPrecision(cuda.PrecisionFloat32)
	g := cuda.Gemm{M: n, N: n, K: n, A: bufs[0], B: bufs[1], C: bufs[2]}
	run := func() {
		if ty == tensor.Float32 {
			err = blas.Sgemm(g, 1, 0)
		} else {
			err = blas.Dgemm(g, 1, 0)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	run()
	if err := d.Synchronize(); err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	for range reps {
		run()
	}
	if err := d.Synchronize(); err != nil {
		tb.Fatal(err)
	}
	return 2 * math.Pow(float64(n), 3) * float64(reps) / time.Since(start).Seconds() / 1e12
}

// gemmN is the size of the timed products: 4096, or GRADUS_CUDA_GEMM_N
// (make cuda-fake sets 64: its device is a naive loop on the CPU).
func gemmN(tb testing.TB) int {
	v := os.Getenv("GRADUS_CUDA_GEMM_N")
	if v == "" {
		return 4096
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("GRADUS_CUDA_GEMM_N=%q is not a positive integer", v)
	}
	return n
}

// TestGemmThroughput logs the GEMM's TFLOP/s at n = 4096 for the record
// in docs/gpu.md; it asserts nothing about speed.
func TestGemmThroughput(t *testing.T) {
	d := device(t)
	n := gemmN(t)
	t.Logf("%s: sgemm n=%d: %.1f TFLOP/s", d.Name(), n, gemmTFLOPs(t, d, tensor.Float32, cuda.PrecisionFloat32, n, 20))
	t.Logf("%s: sgemm TF32 n=%d: %.1f TFLOP/s", d.Name(), n, gemmTFLOPs(t, d, tensor.Float32, cuda.PrecisionTF32, n, 20))
	t.Logf("%s: sgemm BF16 n=%d: %.1f TFLOP/s", d.Name(), n, gemmTFLOPs(t, d, tensor.Float32, cuda.PrecisionBF16, n, 20))
	t.Logf("%s: dgemm n=%d: %.1f TFLOP/s", d.Name(), n, gemmTFLOPs(t, d, tensor.Float64, cuda.PrecisionFloat32, n, 5))
}

func BenchmarkSgemm4096(b *testing.B) {
	d := device(b)
	b.ReportMetric(gemmTFLOPs(b, d, tensor.Float32, cuda.PrecisionFloat32, gemmN(b), max(b.N, 1)), "TFLOP/s")
}

func BenchmarkSgemmTF32_4096(b *testing.B) {
	d := device(b)
	b.ReportMetric(gemmTFLOPs(b, d, tensor.Float32, cuda.PrecisionTF32, gemmN(b), max(b.N, 1)), "TFLOP/s")
}

func BenchmarkSgemmBF16_4096(b *testing.B) {
	d := device(b)
	b.ReportMetric(gemmTFLOPs(b, d, tensor.Float32, cuda.PrecisionBF16, gemmN(b), max(b.N, 1)), "TFLOP/s")
}
