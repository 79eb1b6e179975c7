//go:build amd64 && !purego

#include "textflag.h"

// func adamAVX2F32(p, grad, mom, sq *float32, n int, k *adamConsts[float32]) int
// performs adamPlain on blocks of 8 with the same operations in the same
// order (no fused multiply-add), so results match the Go loop bit for bit:
//
//	m ← m + w1·(g − m);  v ← v·b2 + (w2·g)·g;  p ← p·decay + step·(m / (√v·c + eps))
//
// It returns how many leading elements it updated, a multiple of 8.
TEXT ·adamAVX2F32(SB), NOSPLIT, $0-56
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ mom+16(FP), R8
	MOVQ sq+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ k+40(FP), R10
	VBROADCASTSS 0(R10), Y10  // w1
	VBROADCASTSS 4(R10), Y11  // b2
	VBROADCASTSS 8(R10), Y12  // w2
	VBROADCASTSS 12(R10), Y13 // stepSize
	VBROADCASTSS 16(R10), Y14 // c
	VBROADCASTSS 20(R10), Y15 // eps
	VBROADCASTSS 24(R10), Y9  // decay
	XORQ AX, AX

adloop:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  addone
	VMOVUPS (SI)(AX*4), Y0 // g
	VMOVUPS (R8)(AX*4), Y1 // m
	VMOVUPS (R9)(AX*4), Y2 // v

	// m + w1·(g − m)
	VSUBPS  Y1, Y0, Y4
	VMULPS  Y4, Y10, Y4
	VADDPS  Y4, Y1, Y1
	VMOVUPS Y1, (R8)(AX*4)

	// v·b2 + (w2·g)·g
	VMULPS  Y11, Y2, Y5
	VMULPS  Y0, Y12, Y6
	VMULPS  Y0, Y6, Y6
	VADDPS  Y6, Y5, Y2
	VMOVUPS Y2, (R9)(AX*4)

	// p·decay + step·(m / (√v·c + eps))
	VSQRTPS Y2, Y7
	VMULPS  Y14, Y7, Y7
	VADDPS  Y15, Y7, Y7
	VDIVPS  Y7, Y1, Y8
	VMULPS  Y8, Y13, Y8
	VMOVUPS (DI)(AX*4), Y3
	VMULPS  Y9, Y3, Y3
	VADDPS  Y8, Y3, Y3
	VMOVUPS Y3, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     adloop

addone:
	VZEROUPPER
	MOVQ AX, ret+48(FP)
	RET
