//go:build amd64 && !purego

#include "textflag.h"

// Vectorised float32 kernels (AVX2, no FMA). Every lane performs exactly the
// IEEE operations of the scalar Go code, in the same order and with the
// same constants, so results are bit-identical to it.
//
// Why this file is written by hand: most of its length is lane-replicated
// DATA constants and the 8-wide and 4-wide copies of each kernel's loop
// body. A generator (avo) would keep one source for them, but only if it
// reproduced every instruction: the bit-for-bit tests catch a change of
// arithmetic, not of register choice or scheduling, whose speed was tuned
// here. That needs the kernels restated with physical registers and a
// per-symbol hash of the object code before and after, which has not been
// done (issue 12). Until it is, edit a kernel's repeated bodies together.

DATA sgabs<>+0(SB)/4, $0x7fffffff
DATA sgabs<>+4(SB)/4, $0x7fffffff
DATA sgabs<>+8(SB)/4, $0x7fffffff
DATA sgabs<>+12(SB)/4, $0x7fffffff
DATA sgabs<>+16(SB)/4, $0x7fffffff
DATA sgabs<>+20(SB)/4, $0x7fffffff
DATA sgabs<>+24(SB)/4, $0x7fffffff
DATA sgabs<>+28(SB)/4, $0x7fffffff
GLOBL sgabs<>(SB), RODATA|NOPTR, $32

DATA sgsign<>+0(SB)/4, $0x80000000
DATA sgsign<>+4(SB)/4, $0x80000000
DATA sgsign<>+8(SB)/4, $0x80000000
DATA sgsign<>+12(SB)/4, $0x80000000
DATA sgsign<>+16(SB)/4, $0x80000000
DATA sgsign<>+20(SB)/4, $0x80000000
DATA sgsign<>+24(SB)/4, $0x80000000
DATA sgsign<>+28(SB)/4, $0x80000000
GLOBL sgsign<>(SB), RODATA|NOPTR, $32

DATA sglim<>+0(SB)/4, $0x42ae0000
DATA sglim<>+4(SB)/4, $0x42ae0000
DATA sglim<>+8(SB)/4, $0x42ae0000
DATA sglim<>+12(SB)/4, $0x42ae0000
DATA sglim<>+16(SB)/4, $0x42ae0000
DATA sglim<>+20(SB)/4, $0x42ae0000
DATA sglim<>+24(SB)/4, $0x42ae0000
DATA sglim<>+28(SB)/4, $0x42ae0000
GLOBL sglim<>(SB), RODATA|NOPTR, $32

DATA sglog2e<>+0(SB)/4, $0x3fb8aa3b
DATA sglog2e<>+4(SB)/4, $0x3fb8aa3b
DATA sglog2e<>+8(SB)/4, $0x3fb8aa3b
DATA sglog2e<>+12(SB)/4, $0x3fb8aa3b
DATA sglog2e<>+16(SB)/4, $0x3fb8aa3b
DATA sglog2e<>+20(SB)/4, $0x3fb8aa3b
DATA sglog2e<>+24(SB)/4, $0x3fb8aa3b
DATA sglog2e<>+28(SB)/4, $0x3fb8aa3b
GLOBL sglog2e<>(SB), RODATA|NOPTR, $32

DATA sground<>+0(SB)/4, $0x4b400000
DATA sground<>+4(SB)/4, $0x4b400000
DATA sground<>+8(SB)/4, $0x4b400000
DATA sground<>+12(SB)/4, $0x4b400000
DATA sground<>+16(SB)/4, $0x4b400000
DATA sground<>+20(SB)/4, $0x4b400000
DATA sground<>+24(SB)/4, $0x4b400000
DATA sground<>+28(SB)/4, $0x4b400000
GLOBL sground<>(SB), RODATA|NOPTR, $32

DATA sgc1<>+0(SB)/4, $0x3f318000
DATA sgc1<>+4(SB)/4, $0x3f318000
DATA sgc1<>+8(SB)/4, $0x3f318000
DATA sgc1<>+12(SB)/4, $0x3f318000
DATA sgc1<>+16(SB)/4, $0x3f318000
DATA sgc1<>+20(SB)/4, $0x3f318000
DATA sgc1<>+24(SB)/4, $0x3f318000
DATA sgc1<>+28(SB)/4, $0x3f318000
GLOBL sgc1<>(SB), RODATA|NOPTR, $32

DATA sgc2<>+0(SB)/4, $0xb95e8083
DATA sgc2<>+4(SB)/4, $0xb95e8083
DATA sgc2<>+8(SB)/4, $0xb95e8083
DATA sgc2<>+12(SB)/4, $0xb95e8083
DATA sgc2<>+16(SB)/4, $0xb95e8083
DATA sgc2<>+20(SB)/4, $0xb95e8083
DATA sgc2<>+24(SB)/4, $0xb95e8083
DATA sgc2<>+28(SB)/4, $0xb95e8083
GLOBL sgc2<>(SB), RODATA|NOPTR, $32

DATA sgp0<>+0(SB)/4, $0x39506967
DATA sgp0<>+4(SB)/4, $0x39506967
DATA sgp0<>+8(SB)/4, $0x39506967
DATA sgp0<>+12(SB)/4, $0x39506967
DATA sgp0<>+16(SB)/4, $0x39506967
DATA sgp0<>+20(SB)/4, $0x39506967
DATA sgp0<>+24(SB)/4, $0x39506967
DATA sgp0<>+28(SB)/4, $0x39506967
GLOBL sgp0<>(SB), RODATA|NOPTR, $32

DATA sgp1<>+0(SB)/4, $0x3ab743ce
DATA sgp1<>+4(SB)/4, $0x3ab743ce
DATA sgp1<>+8(SB)/4, $0x3ab743ce
DATA sgp1<>+12(SB)/4, $0x3ab743ce
DATA sgp1<>+16(SB)/4, $0x3ab743ce
DATA sgp1<>+20(SB)/4, $0x3ab743ce
DATA sgp1<>+24(SB)/4, $0x3ab743ce
DATA sgp1<>+28(SB)/4, $0x3ab743ce
GLOBL sgp1<>(SB), RODATA|NOPTR, $32

DATA sgp2<>+0(SB)/4, $0x3c088908
DATA sgp2<>+4(SB)/4, $0x3c088908
DATA sgp2<>+8(SB)/4, $0x3c088908
DATA sgp2<>+12(SB)/4, $0x3c088908
DATA sgp2<>+16(SB)/4, $0x3c088908
DATA sgp2<>+20(SB)/4, $0x3c088908
DATA sgp2<>+24(SB)/4, $0x3c088908
DATA sgp2<>+28(SB)/4, $0x3c088908
GLOBL sgp2<>(SB), RODATA|NOPTR, $32

DATA sgp3<>+0(SB)/4, $0x3d2aa9c1
DATA sgp3<>+4(SB)/4, $0x3d2aa9c1
DATA sgp3<>+8(SB)/4, $0x3d2aa9c1
DATA sgp3<>+12(SB)/4, $0x3d2aa9c1
DATA sgp3<>+16(SB)/4, $0x3d2aa9c1
DATA sgp3<>+20(SB)/4, $0x3d2aa9c1
DATA sgp3<>+24(SB)/4, $0x3d2aa9c1
DATA sgp3<>+28(SB)/4, $0x3d2aa9c1
GLOBL sgp3<>(SB), RODATA|NOPTR, $32

DATA sgp4<>+0(SB)/4, $0x3e2aaaaa
DATA sgp4<>+4(SB)/4, $0x3e2aaaaa
DATA sgp4<>+8(SB)/4, $0x3e2aaaaa
DATA sgp4<>+12(SB)/4, $0x3e2aaaaa
DATA sgp4<>+16(SB)/4, $0x3e2aaaaa
DATA sgp4<>+20(SB)/4, $0x3e2aaaaa
DATA sgp4<>+24(SB)/4, $0x3e2aaaaa
DATA sgp4<>+28(SB)/4, $0x3e2aaaaa
GLOBL sgp4<>(SB), RODATA|NOPTR, $32

DATA sgp5<>+0(SB)/4, $0x3f000000
DATA sgp5<>+4(SB)/4, $0x3f000000
DATA sgp5<>+8(SB)/4, $0x3f000000
DATA sgp5<>+12(SB)/4, $0x3f000000
DATA sgp5<>+16(SB)/4, $0x3f000000
DATA sgp5<>+20(SB)/4, $0x3f000000
DATA sgp5<>+24(SB)/4, $0x3f000000
DATA sgp5<>+28(SB)/4, $0x3f000000
GLOBL sgp5<>(SB), RODATA|NOPTR, $32

DATA sgone<>+0(SB)/4, $0x3f800000
DATA sgone<>+4(SB)/4, $0x3f800000
DATA sgone<>+8(SB)/4, $0x3f800000
DATA sgone<>+12(SB)/4, $0x3f800000
DATA sgone<>+16(SB)/4, $0x3f800000
DATA sgone<>+20(SB)/4, $0x3f800000
DATA sgone<>+24(SB)/4, $0x3f800000
DATA sgone<>+28(SB)/4, $0x3f800000
GLOBL sgone<>(SB), RODATA|NOPTR, $32

DATA sg127<>+0(SB)/4, $0x0000007f
DATA sg127<>+4(SB)/4, $0x0000007f
DATA sg127<>+8(SB)/4, $0x0000007f
DATA sg127<>+12(SB)/4, $0x0000007f
DATA sg127<>+16(SB)/4, $0x0000007f
DATA sg127<>+20(SB)/4, $0x0000007f
DATA sg127<>+24(SB)/4, $0x0000007f
DATA sg127<>+28(SB)/4, $0x0000007f
GLOBL sg127<>(SB), RODATA|NOPTR, $32

// func sigmoidAVX2(d, x *float32, n int) int
// computes sigmoidRun32 on blocks of 8 while every |x| ≤ 87 (the range in
// which the scalar code inlines exp32Core) and returns how many elements it
// wrote: a multiple of 8, stopping at the first block holding a larger
// |x| or a NaN, or at the last full block.
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

sgloop:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  sgdone
	VMOVUPS (SI)(AX*4), Y0
	VANDPS  sgabs<>(SB), Y0, Y1
	VCMPPS  $2, sglim<>(SB), Y1, Y2
	VMOVMSKPS Y2, BX
	CMPL    BX, $0xff
	JNE     sgdone

	// t = -|x|; k = t·log2e + round − round; r = t − k·c1 − k·c2
	VXORPS  sgsign<>(SB), Y1, Y1
	VMULPS  sglog2e<>(SB), Y1, Y2
	VADDPS  sground<>(SB), Y2, Y2
	VSUBPS  sground<>(SB), Y2, Y2
	VMULPS  sgc1<>(SB), Y2, Y3
	VSUBPS  Y3, Y1, Y3
	VMULPS  sgc2<>(SB), Y2, Y4
	VSUBPS  Y4, Y3, Y3

	// y = (((((p0·r+p1)·r+p2)·r+p3)·r+p4)·r+p5)·r·r + r + 1
	VMULPS  sgp0<>(SB), Y3, Y4
	VADDPS  sgp1<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp2<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp3<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp4<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp5<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  Y3, Y4, Y4
	VADDPS  sgone<>(SB), Y4, Y4

	// e = y·2ⁿ with n = int32(k), 2ⁿ built from its exponent bits
	VCVTTPS2DQ Y2, Y5
	VPADDD  sg127<>(SB), Y5, Y5
	VPSLLD  $23, Y5, Y5
	VMULPS  Y5, Y4, Y4

	// numerator 1, or e where x has its sign bit set; divide by 1 + e
	VMOVUPS sgone<>(SB), Y6
	VBLENDVPS Y0, Y4, Y6, Y6
	VADDPS  sgone<>(SB), Y4, Y7
	VDIVPS  Y7, Y6, Y6
	VMOVUPS Y6, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     sgloop

sgdone:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

DATA tht0<>+0(SB)/4, $0xbbbaf0ea
DATA tht0<>+4(SB)/4, $0xbbbaf0ea
DATA tht0<>+8(SB)/4, $0xbbbaf0ea
DATA tht0<>+12(SB)/4, $0xbbbaf0ea
DATA tht0<>+16(SB)/4, $0xbbbaf0ea
DATA tht0<>+20(SB)/4, $0xbbbaf0ea
DATA tht0<>+24(SB)/4, $0xbbbaf0ea
DATA tht0<>+28(SB)/4, $0xbbbaf0ea
GLOBL tht0<>(SB), RODATA|NOPTR, $32

DATA tht1<>+0(SB)/4, $0x3ca9134e
DATA tht1<>+4(SB)/4, $0x3ca9134e
DATA tht1<>+8(SB)/4, $0x3ca9134e
DATA tht1<>+12(SB)/4, $0x3ca9134e
DATA tht1<>+16(SB)/4, $0x3ca9134e
DATA tht1<>+20(SB)/4, $0x3ca9134e
DATA tht1<>+24(SB)/4, $0x3ca9134e
DATA tht1<>+28(SB)/4, $0x3ca9134e
GLOBL tht1<>(SB), RODATA|NOPTR, $32

DATA tht2<>+0(SB)/4, $0xbd5c1e2d
DATA tht2<>+4(SB)/4, $0xbd5c1e2d
DATA tht2<>+8(SB)/4, $0xbd5c1e2d
DATA tht2<>+12(SB)/4, $0xbd5c1e2d
DATA tht2<>+16(SB)/4, $0xbd5c1e2d
DATA tht2<>+20(SB)/4, $0xbd5c1e2d
DATA tht2<>+24(SB)/4, $0xbd5c1e2d
DATA tht2<>+28(SB)/4, $0xbd5c1e2d
GLOBL tht2<>(SB), RODATA|NOPTR, $32

DATA tht3<>+0(SB)/4, $0x3e088393
DATA tht3<>+4(SB)/4, $0x3e088393
DATA tht3<>+8(SB)/4, $0x3e088393
DATA tht3<>+12(SB)/4, $0x3e088393
DATA tht3<>+16(SB)/4, $0x3e088393
DATA tht3<>+20(SB)/4, $0x3e088393
DATA tht3<>+24(SB)/4, $0x3e088393
DATA tht3<>+28(SB)/4, $0x3e088393
GLOBL tht3<>(SB), RODATA|NOPTR, $32

DATA tht4<>+0(SB)/4, $0xbeaaaa99
DATA tht4<>+4(SB)/4, $0xbeaaaa99
DATA tht4<>+8(SB)/4, $0xbeaaaa99
DATA tht4<>+12(SB)/4, $0xbeaaaa99
DATA tht4<>+16(SB)/4, $0xbeaaaa99
DATA tht4<>+20(SB)/4, $0xbeaaaa99
DATA tht4<>+24(SB)/4, $0xbeaaaa99
DATA tht4<>+28(SB)/4, $0xbeaaaa99
GLOBL tht4<>(SB), RODATA|NOPTR, $32

DATA thcut<>+0(SB)/4, $0x3f200000
DATA thcut<>+4(SB)/4, $0x3f200000
DATA thcut<>+8(SB)/4, $0x3f200000
DATA thcut<>+12(SB)/4, $0x3f200000
DATA thcut<>+16(SB)/4, $0x3f200000
DATA thcut<>+20(SB)/4, $0x3f200000
DATA thcut<>+24(SB)/4, $0x3f200000
DATA thcut<>+28(SB)/4, $0x3f200000
GLOBL thcut<>(SB), RODATA|NOPTR, $32

DATA thlim<>+0(SB)/4, $0x42300000
DATA thlim<>+4(SB)/4, $0x42300000
DATA thlim<>+8(SB)/4, $0x42300000
DATA thlim<>+12(SB)/4, $0x42300000
DATA thlim<>+16(SB)/4, $0x42300000
DATA thlim<>+20(SB)/4, $0x42300000
DATA thlim<>+24(SB)/4, $0x42300000
DATA thlim<>+28(SB)/4, $0x42300000
GLOBL thlim<>(SB), RODATA|NOPTR, $32

DATA thtwo<>+0(SB)/4, $0x40000000
DATA thtwo<>+4(SB)/4, $0x40000000
DATA thtwo<>+8(SB)/4, $0x40000000
DATA thtwo<>+12(SB)/4, $0x40000000
DATA thtwo<>+16(SB)/4, $0x40000000
DATA thtwo<>+20(SB)/4, $0x40000000
DATA thtwo<>+24(SB)/4, $0x40000000
DATA thtwo<>+28(SB)/4, $0x40000000
GLOBL thtwo<>(SB), RODATA|NOPTR, $32

// func tanhAVX2(d, x *float32, n int) int
// computes tanhRun32 (tanh32 per element) on blocks of 8 while every
// |x| ≤ 44, so that exp32(2|x|) stays on exp32Core's normal path, and
// returns how many elements it wrote (a multiple of 8; it stops at a block
// with a larger |x| or a NaN). Both branches of tanh32 are computed and
// blended by |x| ≥ 0.625.
TEXT ·tanhAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

thloop:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  thdone
	VMOVUPS (SI)(AX*4), Y0
	VANDPS  sgabs<>(SB), Y0, Y1
	VCMPPS  $2, thlim<>(SB), Y1, Y2
	VMOVMSKPS Y2, BX
	CMPL    BX, $0xff
	JNE     thdone

	// Large |x|: t = 1 − 2/(exp32(z+z) + 1), with x's sign.
	VADDPS  Y1, Y1, Y8
	VMULPS  sglog2e<>(SB), Y8, Y2
	VADDPS  sground<>(SB), Y2, Y2
	VSUBPS  sground<>(SB), Y2, Y2
	VMULPS  sgc1<>(SB), Y2, Y3
	VSUBPS  Y3, Y8, Y3
	VMULPS  sgc2<>(SB), Y2, Y4
	VSUBPS  Y4, Y3, Y3
	VMULPS  sgp0<>(SB), Y3, Y4
	VADDPS  sgp1<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp2<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp3<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp4<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp5<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  Y3, Y4, Y4
	VADDPS  sgone<>(SB), Y4, Y4
	VCVTTPS2DQ Y2, Y5
	VPADDD  sg127<>(SB), Y5, Y5
	VPSLLD  $23, Y5, Y5
	VMULPS  Y5, Y4, Y4
	VADDPS  sgone<>(SB), Y4, Y4
	VMOVUPS thtwo<>(SB), Y5
	VDIVPS  Y4, Y5, Y5
	VMOVUPS sgone<>(SB), Y6
	VSUBPS  Y5, Y6, Y6
	VANDPS  sgsign<>(SB), Y0, Y7
	VXORPS  Y7, Y6, Y6

	// Small |x|: s = x²; ((((t0·s+t1)·s+t2)·s+t3)·s+t4)·s·x + x.
	VMULPS  Y0, Y0, Y7
	VMULPS  tht0<>(SB), Y7, Y8
	VADDPS  tht1<>(SB), Y8, Y8
	VMULPS  Y7, Y8, Y8
	VADDPS  tht2<>(SB), Y8, Y8
	VMULPS  Y7, Y8, Y8
	VADDPS  tht3<>(SB), Y8, Y8
	VMULPS  Y7, Y8, Y8
	VADDPS  tht4<>(SB), Y8, Y8
	VMULPS  Y7, Y8, Y8
	VMULPS  Y0, Y8, Y8
	VADDPS  Y0, Y8, Y8

	VCMPPS  $13, thcut<>(SB), Y1, Y9
	VBLENDVPS Y9, Y6, Y8, Y8
	VMOVUPS Y8, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     thloop

thdone:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func addAVX2F32(d, x, y unsafe.Pointer, n int) int
// sets d[i] = x[i] op y[i] for i below n rounded down to 8 and returns
// that count. Each lane is one IEEE operation, as in the Go loop.
TEXT ·addAVX2F32(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX

addavx2f32loop4:
	CMPQ AX, BX
	JGE  addavx2f32one
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y1
	VMOVUPS 64(SI)(AX*4), Y2
	VMOVUPS 96(SI)(AX*4), Y3
	VADDPS (DX)(AX*4), Y0, Y0
	VADDPS 32(DX)(AX*4), Y1, Y1
	VADDPS 64(DX)(AX*4), Y2, Y2
	VADDPS 96(DX)(AX*4), Y3, Y3
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	ADDQ $32, AX
	JMP  addavx2f32loop4

addavx2f32one:
	MOVQ CX, BX
	ANDQ $-8, BX

addavx2f32loop1:
	CMPQ AX, BX
	JGE  addavx2f32done
	VMOVUPS (SI)(AX*4), Y0
	VADDPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  addavx2f32loop1

addavx2f32done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func mulAVX2F32(d, x, y unsafe.Pointer, n int) int
// sets d[i] = x[i] op y[i] for i below n rounded down to 8 and returns
// that count. Each lane is one IEEE operation, as in the Go loop.
TEXT ·mulAVX2F32(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX

mulavx2f32loop4:
	CMPQ AX, BX
	JGE  mulavx2f32one
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y1
	VMOVUPS 64(SI)(AX*4), Y2
	VMOVUPS 96(SI)(AX*4), Y3
	VMULPS (DX)(AX*4), Y0, Y0
	VMULPS 32(DX)(AX*4), Y1, Y1
	VMULPS 64(DX)(AX*4), Y2, Y2
	VMULPS 96(DX)(AX*4), Y3, Y3
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	ADDQ $32, AX
	JMP  mulavx2f32loop4

mulavx2f32one:
	MOVQ CX, BX
	ANDQ $-8, BX

mulavx2f32loop1:
	CMPQ AX, BX
	JGE  mulavx2f32done
	VMOVUPS (SI)(AX*4), Y0
	VMULPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  mulavx2f32loop1

mulavx2f32done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func subAVX2F32(d, x, y unsafe.Pointer, n int) int
// sets d[i] = x[i] op y[i] for i below n rounded down to 8 and returns
// that count. Each lane is one IEEE operation, as in the Go loop.
TEXT ·subAVX2F32(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX

subavx2f32loop4:
	CMPQ AX, BX
	JGE  subavx2f32one
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y1
	VMOVUPS 64(SI)(AX*4), Y2
	VMOVUPS 96(SI)(AX*4), Y3
	VSUBPS (DX)(AX*4), Y0, Y0
	VSUBPS 32(DX)(AX*4), Y1, Y1
	VSUBPS 64(DX)(AX*4), Y2, Y2
	VSUBPS 96(DX)(AX*4), Y3, Y3
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	ADDQ $32, AX
	JMP  subavx2f32loop4

subavx2f32one:
	MOVQ CX, BX
	ANDQ $-8, BX

subavx2f32loop1:
	CMPQ AX, BX
	JGE  subavx2f32done
	VMOVUPS (SI)(AX*4), Y0
	VSUBPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  subavx2f32loop1

subavx2f32done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func addAVX2F64(d, x, y unsafe.Pointer, n int) int
// sets d[i] = x[i] op y[i] for i below n rounded down to 4 and returns
// that count. Each lane is one IEEE operation, as in the Go loop.
TEXT ·addAVX2F64(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX

addavx2f64loop4:
	CMPQ AX, BX
	JGE  addavx2f64one
	VMOVUPS (SI)(AX*8), Y0
	VMOVUPS 32(SI)(AX*8), Y1
	VMOVUPS 64(SI)(AX*8), Y2
	VMOVUPS 96(SI)(AX*8), Y3
	VADDPD (DX)(AX*8), Y0, Y0
	VADDPD 32(DX)(AX*8), Y1, Y1
	VADDPD 64(DX)(AX*8), Y2, Y2
	VADDPD 96(DX)(AX*8), Y3, Y3
	VMOVUPS Y0, (DI)(AX*8)
	VMOVUPS Y1, 32(DI)(AX*8)
	VMOVUPS Y2, 64(DI)(AX*8)
	VMOVUPS Y3, 96(DI)(AX*8)
	ADDQ $16, AX
	JMP  addavx2f64loop4

addavx2f64one:
	MOVQ CX, BX
	ANDQ $-4, BX

addavx2f64loop1:
	CMPQ AX, BX
	JGE  addavx2f64done
	VMOVUPS (SI)(AX*8), Y0
	VADDPD (DX)(AX*8), Y0, Y0
	VMOVUPS Y0, (DI)(AX*8)
	ADDQ $4, AX
	JMP  addavx2f64loop1

addavx2f64done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func mulAVX2F64(d, x, y unsafe.Pointer, n int) int
// sets d[i] = x[i] op y[i] for i below n rounded down to 4 and returns
// that count. Each lane is one IEEE operation, as in the Go loop.
TEXT ·mulAVX2F64(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX

mulavx2f64loop4:
	CMPQ AX, BX
	JGE  mulavx2f64one
	VMOVUPS (SI)(AX*8), Y0
	VMOVUPS 32(SI)(AX*8), Y1
	VMOVUPS 64(SI)(AX*8), Y2
	VMOVUPS 96(SI)(AX*8), Y3
	VMULPD (DX)(AX*8), Y0, Y0
	VMULPD 32(DX)(AX*8), Y1, Y1
	VMULPD 64(DX)(AX*8), Y2, Y2
	VMULPD 96(DX)(AX*8), Y3, Y3
	VMOVUPS Y0, (DI)(AX*8)
	VMOVUPS Y1, 32(DI)(AX*8)
	VMOVUPS Y2, 64(DI)(AX*8)
	VMOVUPS Y3, 96(DI)(AX*8)
	ADDQ $16, AX
	JMP  mulavx2f64loop4

mulavx2f64one:
	MOVQ CX, BX
	ANDQ $-4, BX

mulavx2f64loop1:
	CMPQ AX, BX
	JGE  mulavx2f64done
	VMOVUPS (SI)(AX*8), Y0
	VMULPD (DX)(AX*8), Y0, Y0
	VMOVUPS Y0, (DI)(AX*8)
	ADDQ $4, AX
	JMP  mulavx2f64loop1

mulavx2f64done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func subAVX2F64(d, x, y unsafe.Pointer, n int) int
// sets d[i] = x[i] op y[i] for i below n rounded down to 4 and returns
// that count. Each lane is one IEEE operation, as in the Go loop.
TEXT ·subAVX2F64(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX

subavx2f64loop4:
	CMPQ AX, BX
	JGE  subavx2f64one
	VMOVUPS (SI)(AX*8), Y0
	VMOVUPS 32(SI)(AX*8), Y1
	VMOVUPS 64(SI)(AX*8), Y2
	VMOVUPS 96(SI)(AX*8), Y3
	VSUBPD (DX)(AX*8), Y0, Y0
	VSUBPD 32(DX)(AX*8), Y1, Y1
	VSUBPD 64(DX)(AX*8), Y2, Y2
	VSUBPD 96(DX)(AX*8), Y3, Y3
	VMOVUPS Y0, (DI)(AX*8)
	VMOVUPS Y1, 32(DI)(AX*8)
	VMOVUPS Y2, 64(DI)(AX*8)
	VMOVUPS Y3, 96(DI)(AX*8)
	ADDQ $16, AX
	JMP  subavx2f64loop4

subavx2f64one:
	MOVQ CX, BX
	ANDQ $-4, BX

subavx2f64loop1:
	CMPQ AX, BX
	JGE  subavx2f64done
	VMOVUPS (SI)(AX*8), Y0
	VSUBPD (DX)(AX*8), Y0, Y0
	VMOVUPS Y0, (DI)(AX*8)
	ADDQ $4, AX
	JMP  subavx2f64loop1

subavx2f64done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

DATA sgnegone<>+0(SB)/4, $0xbf800000
DATA sgnegone<>+4(SB)/4, $0xbf800000
DATA sgnegone<>+8(SB)/4, $0xbf800000
DATA sgnegone<>+12(SB)/4, $0xbf800000
DATA sgnegone<>+16(SB)/4, $0xbf800000
DATA sgnegone<>+20(SB)/4, $0xbf800000
DATA sgnegone<>+24(SB)/4, $0xbf800000
DATA sgnegone<>+28(SB)/4, $0xbf800000
GLOBL sgnegone<>(SB), RODATA|NOPTR, $32

DATA dpone<>+0(SB)/8, $0x3ff0000000000000
DATA dpone<>+8(SB)/8, $0x3ff0000000000000
DATA dpone<>+16(SB)/8, $0x3ff0000000000000
DATA dpone<>+24(SB)/8, $0x3ff0000000000000
GLOBL dpone<>(SB), RODATA|NOPTR, $32

DATA dpnegone<>+0(SB)/8, $0xbff0000000000000
DATA dpnegone<>+8(SB)/8, $0xbff0000000000000
DATA dpnegone<>+16(SB)/8, $0xbff0000000000000
DATA dpnegone<>+24(SB)/8, $0xbff0000000000000
GLOBL dpnegone<>(SB), RODATA|NOPTR, $32

// func reluAVX2F32(d, x unsafe.Pointer, n int) int
// sets d[i] = max(x[i], 0) with Go's semantics (NaN stays NaN, −0 gives +0)
// for i below n rounded down to 8, and returns that count: VMAXPS(0, x)
// returns x for NaN and for ±0, and adding +0 turns −0 into +0.
TEXT ·reluAVX2F32(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	VXORPS Y15, Y15, Y15

reluF32loop:
	CMPQ AX, CX
	JGE  reluF32done
	VMOVUPS (SI)(AX*4), Y0
	VMAXPS Y0, Y15, Y1
	VADDPS Y15, Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP  reluF32loop

reluF32done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func reluGradAVX2F32(d, v, y unsafe.Pointer, n int) int
// sets d[i] = v[i]·sign(y[i]) as reluGrad does (sign 1 for y > 0, −1 for
// y < 0, y itself for ±0 and NaN) for i below n rounded down to 8, and
// returns that count.
TEXT ·reluGradAVX2F32(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	VXORPS Y15, Y15, Y15
	VMOVUPS sgone<>(SB), Y14
	VMOVUPS sgnegone<>(SB), Y13

rgradF32loop:
	CMPQ AX, CX
	JGE  rgradF32done
	VMOVUPS (DX)(AX*4), Y1
	VCMPPS $30, Y15, Y1, Y2
	VCMPPS $17, Y15, Y1, Y3
	VBLENDVPS Y2, Y14, Y1, Y4
	VBLENDVPS Y3, Y13, Y4, Y4
	VMULPS (SI)(AX*4), Y4, Y4
	VMOVUPS Y4, (DI)(AX*4)
	ADDQ $8, AX
	JMP  rgradF32loop

rgradF32done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func reluAVX2F64(d, x unsafe.Pointer, n int) int
// sets d[i] = max(x[i], 0) with Go's semantics (NaN stays NaN, −0 gives +0)
// for i below n rounded down to 4, and returns that count: VMAXPD(0, x)
// returns x for NaN and for ±0, and adding +0 turns −0 into +0.
TEXT ·reluAVX2F64(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	ANDQ $-4, CX
	XORQ AX, AX
	VXORPD Y15, Y15, Y15

reluF64loop:
	CMPQ AX, CX
	JGE  reluF64done
	VMOVUPS (SI)(AX*8), Y0
	VMAXPD Y0, Y15, Y1
	VADDPD Y15, Y1, Y1
	VMOVUPS Y1, (DI)(AX*8)
	ADDQ $4, AX
	JMP  reluF64loop

reluF64done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func reluGradAVX2F64(d, v, y unsafe.Pointer, n int) int
// sets d[i] = v[i]·sign(y[i]) as reluGrad does (sign 1 for y > 0, −1 for
// y < 0, y itself for ±0 and NaN) for i below n rounded down to 4, and
// returns that count.
TEXT ·reluGradAVX2F64(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	ANDQ $-4, CX
	XORQ AX, AX
	VXORPD Y15, Y15, Y15
	VMOVUPS dpone<>(SB), Y14
	VMOVUPS dpnegone<>(SB), Y13

rgradF64loop:
	CMPQ AX, CX
	JGE  rgradF64done
	VMOVUPS (DX)(AX*8), Y1
	VCMPPD $30, Y15, Y1, Y2
	VCMPPD $17, Y15, Y1, Y3
	VBLENDVPD Y2, Y14, Y1, Y4
	VBLENDVPD Y3, Y13, Y4, Y4
	VMULPD (SI)(AX*8), Y4, Y4
	VMOVUPS Y4, (DI)(AX*8)
	ADDQ $4, AX
	JMP  rgradF64loop

rgradF64done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func sigmoidGradAVX2(d, v, x *float32, n int) int
// computes sigmoidGradRun32, d = v·(σ(x)·σ(−x)), on blocks of 8 while every
// |x| ≤ 87 and returns how many elements it wrote (a multiple of 8).
TEXT ·sigmoidGradAVX2(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ v+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	XORQ AX, AX

sggloop:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT  sggdone
	VMOVUPS (SI)(AX*4), Y0
	VANDPS  sgabs<>(SB), Y0, Y1
	VCMPPS  $2, sglim<>(SB), Y1, Y2
	VMOVMSKPS Y2, BX
	CMPL    BX, $0xff
	JNE     sggdone

	VXORPS  sgsign<>(SB), Y1, Y1
	VMULPS  sglog2e<>(SB), Y1, Y2
	VADDPS  sground<>(SB), Y2, Y2
	VSUBPS  sground<>(SB), Y2, Y2
	VMULPS  sgc1<>(SB), Y2, Y3
	VSUBPS  Y3, Y1, Y3
	VMULPS  sgc2<>(SB), Y2, Y4
	VSUBPS  Y4, Y3, Y3
	VMULPS  sgp0<>(SB), Y3, Y4
	VADDPS  sgp1<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp2<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp3<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp4<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp5<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  Y3, Y4, Y4
	VADDPS  sgone<>(SB), Y4, Y4
	VCVTTPS2DQ Y2, Y5
	VPADDD  sg127<>(SB), Y5, Y5
	VPSLLD  $23, Y5, Y5
	VMULPS  Y5, Y4, Y4

	// σ(x) has numerator e where x's sign bit is set, else 1; σ(−x) the
	// other one. Both divide by 1 + e.
	VMOVUPS sgone<>(SB), Y6
	VBLENDVPS Y0, Y4, Y6, Y7
	VBLENDVPS Y0, Y6, Y4, Y8
	VADDPS  sgone<>(SB), Y4, Y9
	VDIVPS  Y9, Y7, Y7
	VDIVPS  Y9, Y8, Y8
	VMULPS  Y8, Y7, Y7
	VMULPS  (DX)(AX*4), Y7, Y7
	VMOVUPS Y7, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     sggloop

sggdone:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

DATA spc3<>+0(SB)/4, $0x3eaaaaab
DATA spc3<>+4(SB)/4, $0x3eaaaaab
DATA spc3<>+8(SB)/4, $0x3eaaaaab
DATA spc3<>+12(SB)/4, $0x3eaaaaab
DATA spc3<>+16(SB)/4, $0x3eaaaaab
DATA spc3<>+20(SB)/4, $0x3eaaaaab
DATA spc3<>+24(SB)/4, $0x3eaaaaab
DATA spc3<>+28(SB)/4, $0x3eaaaaab
GLOBL spc3<>(SB), RODATA|NOPTR, $32

DATA spc5<>+0(SB)/4, $0x3e4ccccd
DATA spc5<>+4(SB)/4, $0x3e4ccccd
DATA spc5<>+8(SB)/4, $0x3e4ccccd
DATA spc5<>+12(SB)/4, $0x3e4ccccd
DATA spc5<>+16(SB)/4, $0x3e4ccccd
DATA spc5<>+20(SB)/4, $0x3e4ccccd
DATA spc5<>+24(SB)/4, $0x3e4ccccd
DATA spc5<>+28(SB)/4, $0x3e4ccccd
GLOBL spc5<>(SB), RODATA|NOPTR, $32

DATA spc7<>+0(SB)/4, $0x3e124925
DATA spc7<>+4(SB)/4, $0x3e124925
DATA spc7<>+8(SB)/4, $0x3e124925
DATA spc7<>+12(SB)/4, $0x3e124925
DATA spc7<>+16(SB)/4, $0x3e124925
DATA spc7<>+20(SB)/4, $0x3e124925
DATA spc7<>+24(SB)/4, $0x3e124925
DATA spc7<>+28(SB)/4, $0x3e124925
GLOBL spc7<>(SB), RODATA|NOPTR, $32

DATA spc9<>+0(SB)/4, $0x3de38e39
DATA spc9<>+4(SB)/4, $0x3de38e39
DATA spc9<>+8(SB)/4, $0x3de38e39
DATA spc9<>+12(SB)/4, $0x3de38e39
DATA spc9<>+16(SB)/4, $0x3de38e39
DATA spc9<>+20(SB)/4, $0x3de38e39
DATA spc9<>+24(SB)/4, $0x3de38e39
DATA spc9<>+28(SB)/4, $0x3de38e39
GLOBL spc9<>(SB), RODATA|NOPTR, $32

DATA spc11<>+0(SB)/4, $0x3dba2e8c
DATA spc11<>+4(SB)/4, $0x3dba2e8c
DATA spc11<>+8(SB)/4, $0x3dba2e8c
DATA spc11<>+12(SB)/4, $0x3dba2e8c
DATA spc11<>+16(SB)/4, $0x3dba2e8c
DATA spc11<>+20(SB)/4, $0x3dba2e8c
DATA spc11<>+24(SB)/4, $0x3dba2e8c
DATA spc11<>+28(SB)/4, $0x3dba2e8c
GLOBL spc11<>(SB), RODATA|NOPTR, $32

DATA spc13<>+0(SB)/4, $0x3d9d89d9
DATA spc13<>+4(SB)/4, $0x3d9d89d9
DATA spc13<>+8(SB)/4, $0x3d9d89d9
DATA spc13<>+12(SB)/4, $0x3d9d89d9
DATA spc13<>+16(SB)/4, $0x3d9d89d9
DATA spc13<>+20(SB)/4, $0x3d9d89d9
DATA spc13<>+24(SB)/4, $0x3d9d89d9
DATA spc13<>+28(SB)/4, $0x3d9d89d9
GLOBL spc13<>(SB), RODATA|NOPTR, $32

DATA spc15<>+0(SB)/4, $0x3d888889
DATA spc15<>+4(SB)/4, $0x3d888889
DATA spc15<>+8(SB)/4, $0x3d888889
DATA spc15<>+12(SB)/4, $0x3d888889
DATA spc15<>+16(SB)/4, $0x3d888889
DATA spc15<>+20(SB)/4, $0x3d888889
DATA spc15<>+24(SB)/4, $0x3d888889
DATA spc15<>+28(SB)/4, $0x3d888889
GLOBL spc15<>(SB), RODATA|NOPTR, $32

// func softplusAVX2(d, x *float32, n int) int
// computes softplus32 = max(x, 0) + log1pUnit32(e^-|x|) on blocks of 8
// while every |x| ≤ 87 (e^-|x| as in sigmoidAVX2) and returns how many
// elements it wrote: a multiple of 8, stopping at the first block holding
// a larger |x| or a NaN, or at the last full block. The operations and
// their order are those of the scalar code, so results match bit for bit.
TEXT ·softplusAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

sploop:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  spdone
	VMOVUPS (SI)(AX*4), Y0
	VANDPS  sgabs<>(SB), Y0, Y1
	VCMPPS  $2, sglim<>(SB), Y1, Y2
	VMOVMSKPS Y2, BX
	CMPL    BX, $0xff
	JNE     spdone

	// e = exp32Core(-|x|), exactly as in sigmoidAVX2
	VXORPS  sgsign<>(SB), Y1, Y1
	VMULPS  sglog2e<>(SB), Y1, Y2
	VADDPS  sground<>(SB), Y2, Y2
	VSUBPS  sground<>(SB), Y2, Y2
	VMULPS  sgc1<>(SB), Y2, Y3
	VSUBPS  Y3, Y1, Y3
	VMULPS  sgc2<>(SB), Y2, Y4
	VSUBPS  Y4, Y3, Y3
	VMULPS  sgp0<>(SB), Y3, Y4
	VADDPS  sgp1<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp2<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp3<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp4<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  sgp5<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  Y3, Y4, Y4
	VADDPS  sgone<>(SB), Y4, Y4
	VCVTTPS2DQ Y2, Y5
	VPADDD  sg127<>(SB), Y5, Y5
	VPSLLD  $23, Y5, Y5
	VMULPS  Y5, Y4, Y4

	// d = 2+e, s = e/d, r = (2−d)+e, s2 = s·s, c = s·(1−s)·r, t = s+s
	VADDPS  thtwo<>(SB), Y4, Y6
	VDIVPS  Y6, Y4, Y7
	VMOVUPS thtwo<>(SB), Y12
	VSUBPS  Y6, Y12, Y12
	VADDPS  Y4, Y12, Y12
	VMULPS  Y7, Y7, Y8
	VMOVUPS sgone<>(SB), Y13
	VSUBPS  Y7, Y13, Y13
	VMULPS  Y13, Y7, Y13
	VMULPS  Y12, Y13, Y13
	VADDPS  Y7, Y7, Y7

	// q = ((((((c15·s2+c13)·s2+c11)·s2+c9)·s2+c7)·s2+c5)·s2 + c3
	VMOVUPS spc15<>(SB), Y9
	VMULPS  Y8, Y9, Y9
	VADDPS  spc13<>(SB), Y9, Y9
	VMULPS  Y8, Y9, Y9
	VADDPS  spc11<>(SB), Y9, Y9
	VMULPS  Y8, Y9, Y9
	VADDPS  spc9<>(SB), Y9, Y9
	VMULPS  Y8, Y9, Y9
	VADDPS  spc7<>(SB), Y9, Y9
	VMULPS  Y8, Y9, Y9
	VADDPS  spc5<>(SB), Y9, Y9
	VMULPS  Y8, Y9, Y9
	VADDPS  spc3<>(SB), Y9, Y9

	// log1p(e) = t + ((t·s2)·q − c); result max(x, 0) + log1p(e)
	VMULPS  Y8, Y7, Y10
	VMULPS  Y9, Y10, Y10
	VSUBPS  Y13, Y10, Y10
	VADDPS  Y10, Y7, Y10
	VXORPS  Y11, Y11, Y11
	VMAXPS  Y11, Y0, Y11
	VADDPS  Y10, Y11, Y11
	VMOVUPS Y11, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     sploop

spdone:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// Constants of exp64Core (tensor/unary.go), four float64 lanes each: the
// range bounds -708 and 709, log2e, 1.5·2⁵², ln2 = ln2hi + ln2lo, the
// FreeBSD e_exp.c coefficients P1..P5, and 2.
DATA e64lo<>+0(SB)/8, $0xc086200000000000
DATA e64lo<>+8(SB)/8, $0xc086200000000000
DATA e64lo<>+16(SB)/8, $0xc086200000000000
DATA e64lo<>+24(SB)/8, $0xc086200000000000
GLOBL e64lo<>(SB), RODATA|NOPTR, $32

DATA e64hi<>+0(SB)/8, $0x4086280000000000
DATA e64hi<>+8(SB)/8, $0x4086280000000000
DATA e64hi<>+16(SB)/8, $0x4086280000000000
DATA e64hi<>+24(SB)/8, $0x4086280000000000
GLOBL e64hi<>(SB), RODATA|NOPTR, $32

DATA e64log2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA e64log2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA e64log2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA e64log2e<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL e64log2e<>(SB), RODATA|NOPTR, $32

DATA e64round<>+0(SB)/8, $0x4338000000000000
DATA e64round<>+8(SB)/8, $0x4338000000000000
DATA e64round<>+16(SB)/8, $0x4338000000000000
DATA e64round<>+24(SB)/8, $0x4338000000000000
GLOBL e64round<>(SB), RODATA|NOPTR, $32

DATA e64ln2hi<>+0(SB)/8, $0x3fe62e42fee00000
DATA e64ln2hi<>+8(SB)/8, $0x3fe62e42fee00000
DATA e64ln2hi<>+16(SB)/8, $0x3fe62e42fee00000
DATA e64ln2hi<>+24(SB)/8, $0x3fe62e42fee00000
GLOBL e64ln2hi<>(SB), RODATA|NOPTR, $32

DATA e64ln2lo<>+0(SB)/8, $0x3dea39ef35793c76
DATA e64ln2lo<>+8(SB)/8, $0x3dea39ef35793c76
DATA e64ln2lo<>+16(SB)/8, $0x3dea39ef35793c76
DATA e64ln2lo<>+24(SB)/8, $0x3dea39ef35793c76
GLOBL e64ln2lo<>(SB), RODATA|NOPTR, $32

DATA e64p1<>+0(SB)/8, $0x3fc5555555555555
DATA e64p1<>+8(SB)/8, $0x3fc5555555555555
DATA e64p1<>+16(SB)/8, $0x3fc5555555555555
DATA e64p1<>+24(SB)/8, $0x3fc5555555555555
GLOBL e64p1<>(SB), RODATA|NOPTR, $32

DATA e64p2<>+0(SB)/8, $0xbf66c16c16bebd93
DATA e64p2<>+8(SB)/8, $0xbf66c16c16bebd93
DATA e64p2<>+16(SB)/8, $0xbf66c16c16bebd93
DATA e64p2<>+24(SB)/8, $0xbf66c16c16bebd93
GLOBL e64p2<>(SB), RODATA|NOPTR, $32

DATA e64p3<>+0(SB)/8, $0x3f11566aaf25de2c
DATA e64p3<>+8(SB)/8, $0x3f11566aaf25de2c
DATA e64p3<>+16(SB)/8, $0x3f11566aaf25de2c
DATA e64p3<>+24(SB)/8, $0x3f11566aaf25de2c
GLOBL e64p3<>(SB), RODATA|NOPTR, $32

DATA e64p4<>+0(SB)/8, $0xbebbbd41c5d26bf1
DATA e64p4<>+8(SB)/8, $0xbebbbd41c5d26bf1
DATA e64p4<>+16(SB)/8, $0xbebbbd41c5d26bf1
DATA e64p4<>+24(SB)/8, $0xbebbbd41c5d26bf1
GLOBL e64p4<>(SB), RODATA|NOPTR, $32

DATA e64p5<>+0(SB)/8, $0x3e66376972bea4d0
DATA e64p5<>+8(SB)/8, $0x3e66376972bea4d0
DATA e64p5<>+16(SB)/8, $0x3e66376972bea4d0
DATA e64p5<>+24(SB)/8, $0x3e66376972bea4d0
GLOBL e64p5<>(SB), RODATA|NOPTR, $32

DATA e64two<>+0(SB)/8, $0x4000000000000000
DATA e64two<>+8(SB)/8, $0x4000000000000000
DATA e64two<>+16(SB)/8, $0x4000000000000000
DATA e64two<>+24(SB)/8, $0x4000000000000000
GLOBL e64two<>(SB), RODATA|NOPTR, $32
// func expAVX2F64(d, x *float64, n int) int
// computes exp64Core on blocks of 4 while every x is in [-708, 709] and
// returns how many elements it wrote: a multiple of 4, stopping at the
// first block holding an x outside that range or a NaN, or at the last
// full block. Every lane performs exp64Core's IEEE operations in the same
// order with the same constants (no FMA), so results match it bit for bit.
// k = round(x·log2e) comes from adding and subtracting 1.5·2⁵², which
// leaves k in the low mantissa bits of t = x·log2e + 1.5·2⁵²; shifting t's
// bits left by 52 puts k in the exponent field, and a 64-bit integer add
// scales y by 2ᵏ. That needs no int64↔double conversion (AVX2 has none).
//
// The main loop interleaves two independent blocks (Y0–Y6 and Y7–Y13) so
// the long dependency chain of one (a division in it) overlaps the other;
// a block of 4 is done alone when fewer than 8 remain or the pair holds a
// bad argument. Per block: x, t, k, hi, lo, r, s in the seven registers,
// p and c reuse x's, r·c and the quotient k's, 2 − c s's.
// Y14 = 1, Y15 = 2.
TEXT ·expAVX2F64(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	VMOVUPD dpone<>(SB), Y14
	VMOVUPD e64two<>(SB), Y15

e64loop8:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  e64loop4
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y7
	VCMPPD  $13, e64lo<>(SB), Y0, Y1
	VCMPPD  $2, e64hi<>(SB), Y0, Y2
	VCMPPD  $13, e64lo<>(SB), Y7, Y8
	VCMPPD  $2, e64hi<>(SB), Y7, Y9
	VANDPD  Y1, Y2, Y1
	VANDPD  Y8, Y9, Y8
	VANDPD  Y1, Y8, Y1
	VMOVMSKPD Y1, BX
	CMPL    BX, $0xf
	JNE     e64loop4

	// t = x·log2e + round; k = t − round; hi = x − k·ln2hi; lo = k·ln2lo;
	// r = hi − lo; s = r·r; p = (((s·p5+p4)·s+p3)·s+p2)·s+p1; c = r − s·p;
	// y = 1 − ((lo − (r·c)/(2 − c)) − hi); y·2ᵏ by adding t's bits << 52.
	VMULPD  e64log2e<>(SB), Y0, Y1
	VMULPD  e64log2e<>(SB), Y7, Y8
	VADDPD  e64round<>(SB), Y1, Y1
	VADDPD  e64round<>(SB), Y8, Y8
	VSUBPD  e64round<>(SB), Y1, Y2
	VSUBPD  e64round<>(SB), Y8, Y9
	VMULPD  e64ln2hi<>(SB), Y2, Y3
	VMULPD  e64ln2hi<>(SB), Y9, Y10
	VSUBPD  Y3, Y0, Y3
	VSUBPD  Y10, Y7, Y10
	VMULPD  e64ln2lo<>(SB), Y2, Y4
	VMULPD  e64ln2lo<>(SB), Y9, Y11
	VSUBPD  Y4, Y3, Y5
	VSUBPD  Y11, Y10, Y12
	VMULPD  Y5, Y5, Y6
	VMULPD  Y12, Y12, Y13
	VMULPD  e64p5<>(SB), Y6, Y0
	VMULPD  e64p5<>(SB), Y13, Y7
	VADDPD  e64p4<>(SB), Y0, Y0
	VADDPD  e64p4<>(SB), Y7, Y7
	VMULPD  Y0, Y6, Y0
	VMULPD  Y7, Y13, Y7
	VADDPD  e64p3<>(SB), Y0, Y0
	VADDPD  e64p3<>(SB), Y7, Y7
	VMULPD  Y0, Y6, Y0
	VMULPD  Y7, Y13, Y7
	VADDPD  e64p2<>(SB), Y0, Y0
	VADDPD  e64p2<>(SB), Y7, Y7
	VMULPD  Y0, Y6, Y0
	VMULPD  Y7, Y13, Y7
	VADDPD  e64p1<>(SB), Y0, Y0
	VADDPD  e64p1<>(SB), Y7, Y7
	VMULPD  Y0, Y6, Y0
	VMULPD  Y7, Y13, Y7
	VSUBPD  Y0, Y5, Y0
	VSUBPD  Y7, Y12, Y7
	VMULPD  Y0, Y5, Y2
	VMULPD  Y7, Y12, Y9
	VSUBPD  Y0, Y15, Y6
	VSUBPD  Y7, Y15, Y13
	VDIVPD  Y6, Y2, Y2
	VDIVPD  Y13, Y9, Y9
	VSUBPD  Y2, Y4, Y2
	VSUBPD  Y9, Y11, Y9
	VSUBPD  Y3, Y2, Y2
	VSUBPD  Y10, Y9, Y9
	VSUBPD  Y2, Y14, Y2
	VSUBPD  Y9, Y14, Y9
	VPSLLQ  $52, Y1, Y1
	VPSLLQ  $52, Y8, Y8
	VPADDQ  Y1, Y2, Y2
	VPADDQ  Y8, Y9, Y9
	VMOVUPD Y2, (DI)(AX*8)
	VMOVUPD Y9, 32(DI)(AX*8)
	ADDQ    $8, AX
	JMP     e64loop8

e64loop4:
	LEAQ 4(AX), DX
	CMPQ DX, CX
	JGT  e64done
	VMOVUPD (SI)(AX*8), Y0
	VCMPPD  $13, e64lo<>(SB), Y0, Y1
	VCMPPD  $2, e64hi<>(SB), Y0, Y2
	VANDPD  Y1, Y2, Y1
	VMOVMSKPD Y1, BX
	CMPL    BX, $0xf
	JNE     e64done
	VMULPD  e64log2e<>(SB), Y0, Y1
	VADDPD  e64round<>(SB), Y1, Y1
	VSUBPD  e64round<>(SB), Y1, Y2
	VMULPD  e64ln2hi<>(SB), Y2, Y3
	VSUBPD  Y3, Y0, Y3
	VMULPD  e64ln2lo<>(SB), Y2, Y4
	VSUBPD  Y4, Y3, Y5
	VMULPD  Y5, Y5, Y6
	VMULPD  e64p5<>(SB), Y6, Y0
	VADDPD  e64p4<>(SB), Y0, Y0
	VMULPD  Y0, Y6, Y0
	VADDPD  e64p3<>(SB), Y0, Y0
	VMULPD  Y0, Y6, Y0
	VADDPD  e64p2<>(SB), Y0, Y0
	VMULPD  Y0, Y6, Y0
	VADDPD  e64p1<>(SB), Y0, Y0
	VMULPD  Y0, Y6, Y0
	VSUBPD  Y0, Y5, Y0
	VMULPD  Y0, Y5, Y2
	VSUBPD  Y0, Y15, Y6
	VDIVPD  Y6, Y2, Y2
	VSUBPD  Y2, Y4, Y2
	VSUBPD  Y3, Y2, Y2
	VSUBPD  Y2, Y14, Y2
	VPSLLQ  $52, Y1, Y1
	VPADDQ  Y1, Y2, Y2
	VMOVUPD Y2, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     e64loop8

e64done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func rotAVX2F64(zi, zj *float64, n int, c, s float64) int
// applies the plane rotation zj ← s·zi + c·zj, zi ← c·zi − s·zj (old zj)
// to i below n rounded down to 4 and returns that count. Each lane does
// the IEEE operations of rotBlocks' scalar loop (no FMA), so the results
// are the same bit for bit.
TEXT ·rotAVX2F64(SB), NOSPLIT, $0-48
	MOVQ zi+0(FP), SI
	MOVQ zj+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSD c+24(FP), Y14
	VBROADCASTSD s+32(FP), Y15
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX

rotavx2f64loop8:
	CMPQ AX, BX
	JGE  rotavx2f64one
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD (DI)(AX*8), Y1
	VMOVUPD 32(SI)(AX*8), Y6
	VMOVUPD 32(DI)(AX*8), Y7
	VMULPD  Y0, Y15, Y2
	VMULPD  Y1, Y14, Y3
	VMULPD  Y6, Y15, Y8
	VMULPD  Y7, Y14, Y9
	VADDPD  Y3, Y2, Y2
	VADDPD  Y9, Y8, Y8
	VMULPD  Y0, Y14, Y4
	VMULPD  Y1, Y15, Y5
	VMULPD  Y6, Y14, Y10
	VMULPD  Y7, Y15, Y11
	VSUBPD  Y5, Y4, Y4
	VSUBPD  Y11, Y10, Y10
	VMOVUPD Y2, (DI)(AX*8)
	VMOVUPD Y4, (SI)(AX*8)
	VMOVUPD Y8, 32(DI)(AX*8)
	VMOVUPD Y10, 32(SI)(AX*8)
	ADDQ    $8, AX
	JMP     rotavx2f64loop8

rotavx2f64one:
	MOVQ CX, BX
	ANDQ $-4, BX

rotavx2f64loop4:
	CMPQ AX, BX
	JGE  rotavx2f64done
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD (DI)(AX*8), Y1
	VMULPD  Y0, Y15, Y2
	VMULPD  Y1, Y14, Y3
	VADDPD  Y3, Y2, Y2
	VMULPD  Y0, Y14, Y4
	VMULPD  Y1, Y15, Y5
	VSUBPD  Y5, Y4, Y4
	VMOVUPD Y2, (DI)(AX*8)
	VMOVUPD Y4, (SI)(AX*8)
	ADDQ    $4, AX
	JMP     rotavx2f64loop4

rotavx2f64done:
	VZEROUPPER
	MOVQ AX, ret+40(FP)
	RET
