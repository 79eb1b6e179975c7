package gemm

// float is the set of element types supported by the generic driver.
type float interface {
	~float32 | ~float64
}

// portableKernel4x4 is the pure-Go register-blocked micro-kernel. It computes
// the 4×4 tile C = alpha·Ã·B̃ + beta·C from packed micro-panels holding k steps
// of 4 values each; C is not read when beta == 0. The tile is processed as
// two 2×4 halves so that the 8 accumulators, 4 B values and the A value fit
// in the 15 float registers the Go compiler uses on amd64 (a single 4×4 pass
// spills on every step).
func portableKernel4x4[T float](k int, a, b, c []T, ldc int, alpha, beta T) {
	a = a[:4*k]
	b = b[:4*k]
	for h := 0; h < 4; h += 2 {
		var c00, c01, c02, c03, c10, c11, c12, c13 T
		aa := a[h:]
		bb := b
		for len(aa) >= 2 && len(bb) >= 4 {
			b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
			a0 := aa[0]
			c00 += a0 * b0
			c01 += a0 * b1
			c02 += a0 * b2
			c03 += a0 * b3
			a1 := aa[1]
			c10 += a1 * b0
			c11 += a1 * b1
			c12 += a1 * b2
			c13 += a1 * b3
			bb = bb[4:]
			if len(aa) < 4 {
				break
			}
			aa = aa[4:]
		}
		r0 := c[h*ldc : h*ldc+4 : h*ldc+4]
		r1 := c[(h+1)*ldc : (h+1)*ldc+4 : (h+1)*ldc+4]
		if beta == 0 {
			r0[0], r0[1], r0[2], r0[3] = alpha*c00, alpha*c01, alpha*c02, alpha*c03
			r1[0], r1[1], r1[2], r1[3] = alpha*c10, alpha*c11, alpha*c12, alpha*c13
			continue
		}
		r0[0], r0[1], r0[2], r0[3] = alpha*c00+beta*r0[0], alpha*c01+beta*r0[1], alpha*c02+beta*r0[2], alpha*c03+beta*r0[3]
		r1[0], r1[1], r1[2], r1[3] = alpha*c10+beta*r1[0], alpha*c11+beta*r1[1], alpha*c12+beta*r1[2], alpha*c13+beta*r1[3]
	}
}

const portableName = "portable go 4x4"

var (
	portableParamsS = &params[float32]{mr: 4, nr: 4, mc: 128, kc: 256, nc: 1024, kern: portableKernel4x4[float32]}
	portableParamsD = &params[float64]{mr: 4, nr: 4, mc: 64, kc: 256, nc: 1024, kern: portableKernel4x4[float64]}
)
