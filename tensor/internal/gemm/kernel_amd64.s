//go:build amd64

#include "textflag.h"

// Register use in both micro-kernels:
//   SI  packed A micro-panel (MR=6 values per k step)
//   DI  packed B micro-panel (two YMM vectors per k step)
//   CX  remaining k iterations
//   DX  C tile (row 0); R8 = ldc in bytes; R9 = 3*ldc; R10 = row 4
//   Y0, Y1   B vectors;  Y2, Y3  broadcast A values
//   Y4..Y15  accumulators, row r in Y(4+2r), Y(5+2r)

// SSTEP performs one rank-1 update of the 6x16 float32 tile.
#define SSTEP(ao, bo) \
	VMOVUPS bo(DI), Y0; \
	VMOVUPS bo+32(DI), Y1; \
	VBROADCASTSS ao(SI), Y2; \
	VFMADD231PS Y0, Y2, Y4; \
	VFMADD231PS Y1, Y2, Y5; \
	VBROADCASTSS ao+4(SI), Y3; \
	VFMADD231PS Y0, Y3, Y6; \
	VFMADD231PS Y1, Y3, Y7; \
	VBROADCASTSS ao+8(SI), Y2; \
	VFMADD231PS Y0, Y2, Y8; \
	VFMADD231PS Y1, Y2, Y9; \
	VBROADCASTSS ao+12(SI), Y3; \
	VFMADD231PS Y0, Y3, Y10; \
	VFMADD231PS Y1, Y3, Y11; \
	VBROADCASTSS ao+16(SI), Y2; \
	VFMADD231PS Y0, Y2, Y12; \
	VFMADD231PS Y1, Y2, Y13; \
	VBROADCASTSS ao+20(SI), Y3; \
	VFMADD231PS Y0, Y3, Y14; \
	VFMADD231PS Y1, Y3, Y15

// DSTEP performs one rank-1 update of the 6x8 float64 tile.
#define DSTEP(ao, bo) \
	VMOVUPD bo(DI), Y0; \
	VMOVUPD bo+32(DI), Y1; \
	VBROADCASTSD ao(SI), Y2; \
	VFMADD231PD Y0, Y2, Y4; \
	VFMADD231PD Y1, Y2, Y5; \
	VBROADCASTSD ao+8(SI), Y3; \
	VFMADD231PD Y0, Y3, Y6; \
	VFMADD231PD Y1, Y3, Y7; \
	VBROADCASTSD ao+16(SI), Y2; \
	VFMADD231PD Y0, Y2, Y8; \
	VFMADD231PD Y1, Y2, Y9; \
	VBROADCASTSD ao+24(SI), Y3; \
	VFMADD231PD Y0, Y3, Y10; \
	VFMADD231PD Y1, Y3, Y11; \
	VBROADCASTSD ao+32(SI), Y2; \
	VFMADD231PD Y0, Y2, Y12; \
	VFMADD231PD Y1, Y2, Y13; \
	VBROADCASTSD ao+40(SI), Y3; \
	VFMADD231PD Y0, Y3, Y14; \
	VFMADD231PD Y1, Y3, Y15

// Epilogue helpers: Y0 = alpha, Y1 = beta (broadcast).
#define SROW_BETA(r0, r1, m0, m1) \
	VMULPS Y0, r0, r0; \
	VMULPS Y0, r1, r1; \
	VFMADD231PS m0, Y1, r0; \
	VFMADD231PS m1, Y1, r1; \
	VMOVUPS r0, m0; \
	VMOVUPS r1, m1

#define SROW_ZERO(r0, r1, m0, m1) \
	VMULPS Y0, r0, r0; \
	VMULPS Y0, r1, r1; \
	VMOVUPS r0, m0; \
	VMOVUPS r1, m1

#define DROW_BETA(r0, r1, m0, m1) \
	VMULPD Y0, r0, r0; \
	VMULPD Y0, r1, r1; \
	VFMADD231PD m0, Y1, r0; \
	VFMADD231PD m1, Y1, r1; \
	VMOVUPD r0, m0; \
	VMOVUPD r1, m1

#define DROW_ZERO(r0, r1, m0, m1) \
	VMULPD Y0, r0, r0; \
	VMULPD Y0, r1, r1; \
	VMOVUPD r0, m0; \
	VMOVUPD r1, m1

#define ZERO_ACC \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11; \
	VXORPS Y12, Y12, Y12; \
	VXORPS Y13, Y13, Y13; \
	VXORPS Y14, Y14, Y14; \
	VXORPS Y15, Y15, Y15

#define PREFETCH_C \
	PREFETCHT0 (DX); \
	PREFETCHT0 63(DX); \
	PREFETCHT0 (DX)(R8*1); \
	PREFETCHT0 63(DX)(R8*1); \
	PREFETCHT0 (DX)(R8*2); \
	PREFETCHT0 63(DX)(R8*2); \
	PREFETCHT0 (DX)(R9*1); \
	PREFETCHT0 63(DX)(R9*1); \
	PREFETCHT0 (R10); \
	PREFETCHT0 63(R10); \
	PREFETCHT0 (R10)(R8*1); \
	PREFETCHT0 63(R10)(R8*1)

// func sgemmKernel6x16(k int, a, b, c *float32, ldc int, alpha, beta float32)
TEXT ·sgemmKernel6x16(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (DX)(R8*4), R10
	ZERO_ACC
	PREFETCH_C

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   stail

sloop4:
	PREFETCHT0 256(SI)
	SSTEP(0, 0)
	SSTEP(24, 64)
	PREFETCHT0 320(SI)
	SSTEP(48, 128)
	SSTEP(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	DECQ BX
	JNZ  sloop4

stail:
	ANDQ $3, CX
	JZ   sdone

sloop1:
	SSTEP(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  sloop1

sdone:
	VBROADCASTSS alpha+40(FP), Y0
	MOVL beta+44(FP), AX
	ANDL $0x7fffffff, AX
	JZ   sbeta0
	VBROADCASTSS beta+44(FP), Y1
	SROW_BETA(Y4, Y5, (DX), 32(DX))
	SROW_BETA(Y6, Y7, (DX)(R8*1), 32(DX)(R8*1))
	SROW_BETA(Y8, Y9, (DX)(R8*2), 32(DX)(R8*2))
	SROW_BETA(Y10, Y11, (DX)(R9*1), 32(DX)(R9*1))
	SROW_BETA(Y12, Y13, (R10), 32(R10))
	SROW_BETA(Y14, Y15, (R10)(R8*1), 32(R10)(R8*1))
	VZEROUPPER
	RET

sbeta0:
	SROW_ZERO(Y4, Y5, (DX), 32(DX))
	SROW_ZERO(Y6, Y7, (DX)(R8*1), 32(DX)(R8*1))
	SROW_ZERO(Y8, Y9, (DX)(R8*2), 32(DX)(R8*2))
	SROW_ZERO(Y10, Y11, (DX)(R9*1), 32(DX)(R9*1))
	SROW_ZERO(Y12, Y13, (R10), 32(R10))
	SROW_ZERO(Y14, Y15, (R10)(R8*1), 32(R10)(R8*1))
	VZEROUPPER
	RET

// func dgemmKernel6x8(k int, a, b, c *float64, ldc int, alpha, beta float64)
TEXT ·dgemmKernel6x8(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (DX)(R8*4), R10
	ZERO_ACC
	PREFETCH_C

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   dtail

dloop4:
	PREFETCHT0 384(SI)
	DSTEP(0, 0)
	PREFETCHT0 448(SI)
	DSTEP(48, 64)
	PREFETCHT0 512(SI)
	DSTEP(96, 128)
	DSTEP(144, 192)
	ADDQ $192, SI
	ADDQ $256, DI
	DECQ BX
	JNZ  dloop4

dtail:
	ANDQ $3, CX
	JZ   ddone

dloop1:
	DSTEP(0, 0)
	ADDQ $48, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  dloop1

ddone:
	VBROADCASTSD alpha+40(FP), Y0
	MOVQ beta+48(FP), AX
	SHLQ $1, AX
	JZ   dbeta0
	VBROADCASTSD beta+48(FP), Y1
	DROW_BETA(Y4, Y5, (DX), 32(DX))
	DROW_BETA(Y6, Y7, (DX)(R8*1), 32(DX)(R8*1))
	DROW_BETA(Y8, Y9, (DX)(R8*2), 32(DX)(R8*2))
	DROW_BETA(Y10, Y11, (DX)(R9*1), 32(DX)(R9*1))
	DROW_BETA(Y12, Y13, (R10), 32(R10))
	DROW_BETA(Y14, Y15, (R10)(R8*1), 32(R10)(R8*1))
	VZEROUPPER
	RET

dbeta0:
	DROW_ZERO(Y4, Y5, (DX), 32(DX))
	DROW_ZERO(Y6, Y7, (DX)(R8*1), 32(DX)(R8*1))
	DROW_ZERO(Y8, Y9, (DX)(R8*2), 32(DX)(R8*2))
	DROW_ZERO(Y10, Y11, (DX)(R9*1), 32(DX)(R9*1))
	DROW_ZERO(Y12, Y13, (R10), 32(R10))
	DROW_ZERO(Y14, Y15, (R10)(R8*1), 32(R10)(R8*1))
	VZEROUPPER
	RET
