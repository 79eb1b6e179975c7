package gemm

// float is the set of element types supported by the generic driver.
type float interface {
	~float32 | ~float64
}

// portableKernel4x4 is the pure-Go register-blocked micro-kernel. It computes
// the 4×4 tile C = alpha·Ã·B̃ + beta·C from packed micro-panels holding k steps
// of 4 values each; C is not read when beta == 0.
func portableKernel4x4[T float](k int, a, b, c []T, ldc int, alpha, beta T) {
	var (
		c00, c01, c02, c03 T
		c10, c11, c12, c13 T
		c20, c21, c22, c23 T
		c30, c31, c32, c33 T
	)
	a = a[:4*k]
	b = b[:4*k]
	for len(a) >= 4 && len(b) >= 4 {
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		a = a[4:]
		b = b[4:]
	}
	r0 := c[0:4:4]
	r1 := c[ldc : ldc+4 : ldc+4]
	r2 := c[2*ldc : 2*ldc+4 : 2*ldc+4]
	r3 := c[3*ldc : 3*ldc+4 : 3*ldc+4]
	if beta == 0 {
		r0[0], r0[1], r0[2], r0[3] = alpha*c00, alpha*c01, alpha*c02, alpha*c03
		r1[0], r1[1], r1[2], r1[3] = alpha*c10, alpha*c11, alpha*c12, alpha*c13
		r2[0], r2[1], r2[2], r2[3] = alpha*c20, alpha*c21, alpha*c22, alpha*c23
		r3[0], r3[1], r3[2], r3[3] = alpha*c30, alpha*c31, alpha*c32, alpha*c33
		return
	}
	r0[0], r0[1], r0[2], r0[3] = alpha*c00+beta*r0[0], alpha*c01+beta*r0[1], alpha*c02+beta*r0[2], alpha*c03+beta*r0[3]
	r1[0], r1[1], r1[2], r1[3] = alpha*c10+beta*r1[0], alpha*c11+beta*r1[1], alpha*c12+beta*r1[2], alpha*c13+beta*r1[3]
	r2[0], r2[1], r2[2], r2[3] = alpha*c20+beta*r2[0], alpha*c21+beta*r2[1], alpha*c22+beta*r2[2], alpha*c23+beta*r2[3]
	r3[0], r3[1], r3[2], r3[3] = alpha*c30+beta*r3[0], alpha*c31+beta*r3[1], alpha*c32+beta*r3[2], alpha*c33+beta*r3[3]
}

var (
	portableParamsS = &params[float32]{mr: 4, nr: 4, mc: 128, kc: 256, nc: 1024, kern: portableKernel4x4[float32]}
	portableParamsD = &params[float64]{mr: 4, nr: 4, mc: 64, kc: 256, nc: 1024, kern: portableKernel4x4[float64]}
)
