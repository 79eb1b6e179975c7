//go:build amd64

#include "textflag.h"

// AVX-512 micro-kernels: the AVX2 kernels' 6-row tile, twice as wide, in ZMM
// registers (6×32 float32, 6×16 float64). They read the same 6-row packed A
// panels and 128-byte packed B rows.
//
//   SI  packed A micro-panel (6 values per k step)
//   DI  packed B micro-panel (two ZMM vectors per k step)
//   CX  remaining k iterations
//   DX  C tile (row 0); R8 = ldc in bytes; R9 = 3*ldc; R10 = row 4
//   Z0, Z1   B vectors;  Z2..Z7  broadcast A values
//   Z8..Z19  accumulators, row r in Z(8+2r), Z(9+2r)

#define ZSSTEP(ao, bo) \
	VMOVUPS bo(DI), Z0; \
	VMOVUPS bo+64(DI), Z1; \
	VBROADCASTSS ao(SI), Z2; \
	VBROADCASTSS ao+4(SI), Z3; \
	VFMADD231PS Z0, Z2, Z8; \
	VFMADD231PS Z1, Z2, Z9; \
	VBROADCASTSS ao+8(SI), Z4; \
	VFMADD231PS Z0, Z3, Z10; \
	VFMADD231PS Z1, Z3, Z11; \
	VBROADCASTSS ao+12(SI), Z5; \
	VFMADD231PS Z0, Z4, Z12; \
	VFMADD231PS Z1, Z4, Z13; \
	VBROADCASTSS ao+16(SI), Z6; \
	VFMADD231PS Z0, Z5, Z14; \
	VFMADD231PS Z1, Z5, Z15; \
	VBROADCASTSS ao+20(SI), Z7; \
	VFMADD231PS Z0, Z6, Z16; \
	VFMADD231PS Z1, Z6, Z17; \
	VFMADD231PS Z0, Z7, Z18; \
	VFMADD231PS Z1, Z7, Z19

#define ZDSTEP(ao, bo) \
	VMOVUPD bo(DI), Z0; \
	VMOVUPD bo+64(DI), Z1; \
	VBROADCASTSD ao(SI), Z2; \
	VBROADCASTSD ao+8(SI), Z3; \
	VFMADD231PD Z0, Z2, Z8; \
	VFMADD231PD Z1, Z2, Z9; \
	VBROADCASTSD ao+16(SI), Z4; \
	VFMADD231PD Z0, Z3, Z10; \
	VFMADD231PD Z1, Z3, Z11; \
	VBROADCASTSD ao+24(SI), Z5; \
	VFMADD231PD Z0, Z4, Z12; \
	VFMADD231PD Z1, Z4, Z13; \
	VBROADCASTSD ao+32(SI), Z6; \
	VFMADD231PD Z0, Z5, Z14; \
	VFMADD231PD Z1, Z5, Z15; \
	VBROADCASTSD ao+40(SI), Z7; \
	VFMADD231PD Z0, Z6, Z16; \
	VFMADD231PD Z1, Z6, Z17; \
	VFMADD231PD Z0, Z7, Z18; \
	VFMADD231PD Z1, Z7, Z19

// Epilogue helpers: Z0 = alpha, Z1 = beta (broadcast).
#define ZSROW_BETA(r0, r1, m0, m1) \
	VMULPS Z0, r0, r0; \
	VMULPS Z0, r1, r1; \
	VFMADD231PS m0, Z1, r0; \
	VFMADD231PS m1, Z1, r1; \
	VMOVUPS r0, m0; \
	VMOVUPS r1, m1

#define ZSROW_ZERO(r0, r1, m0, m1) \
	VMULPS Z0, r0, r0; \
	VMULPS Z0, r1, r1; \
	VMOVUPS r0, m0; \
	VMOVUPS r1, m1

#define ZDROW_BETA(r0, r1, m0, m1) \
	VMULPD Z0, r0, r0; \
	VMULPD Z0, r1, r1; \
	VFMADD231PD m0, Z1, r0; \
	VFMADD231PD m1, Z1, r1; \
	VMOVUPD r0, m0; \
	VMOVUPD r1, m1

#define ZDROW_ZERO(r0, r1, m0, m1) \
	VMULPD Z0, r0, r0; \
	VMULPD Z0, r1, r1; \
	VMOVUPD r0, m0; \
	VMOVUPD r1, m1

#define ZZERO_ACC \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19

// A C row of the tile is 128 bytes: two cache lines.
#define ZPREFETCH_C \
	PREFETCHT0 (DX); \
	PREFETCHT0 127(DX); \
	PREFETCHT0 (DX)(R8*1); \
	PREFETCHT0 127(DX)(R8*1); \
	PREFETCHT0 (DX)(R8*2); \
	PREFETCHT0 127(DX)(R8*2); \
	PREFETCHT0 (DX)(R9*1); \
	PREFETCHT0 127(DX)(R9*1); \
	PREFETCHT0 (R10); \
	PREFETCHT0 127(R10); \
	PREFETCHT0 (R10)(R8*1); \
	PREFETCHT0 127(R10)(R8*1)

// func sgemmKernel6x32(k int, a, b, c *float32, ldc int, alpha, beta float32)
TEXT ·sgemmKernel6x32(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (DX)(R8*4), R10
	ZZERO_ACC
	ZPREFETCH_C

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   zstail

zsloop4:
	PREFETCHT0 256(SI)
	ZSSTEP(0, 0)
	ZSSTEP(24, 128)
	PREFETCHT0 320(SI)
	ZSSTEP(48, 256)
	ZSSTEP(72, 384)
	ADDQ $96, SI
	ADDQ $512, DI
	DECQ BX
	JNZ  zsloop4

zstail:
	ANDQ $3, CX
	JZ   zsdone

zsloop1:
	ZSSTEP(0, 0)
	ADDQ $24, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  zsloop1

zsdone:
	VBROADCASTSS alpha+40(FP), Z0
	MOVL beta+44(FP), AX
	ANDL $0x7fffffff, AX
	JZ   zsbeta0
	VBROADCASTSS beta+44(FP), Z1
	ZSROW_BETA(Z8, Z9, (DX), 64(DX))
	ZSROW_BETA(Z10, Z11, (DX)(R8*1), 64(DX)(R8*1))
	ZSROW_BETA(Z12, Z13, (DX)(R8*2), 64(DX)(R8*2))
	ZSROW_BETA(Z14, Z15, (DX)(R9*1), 64(DX)(R9*1))
	ZSROW_BETA(Z16, Z17, (R10), 64(R10))
	ZSROW_BETA(Z18, Z19, (R10)(R8*1), 64(R10)(R8*1))
	VZEROUPPER
	RET

zsbeta0:
	ZSROW_ZERO(Z8, Z9, (DX), 64(DX))
	ZSROW_ZERO(Z10, Z11, (DX)(R8*1), 64(DX)(R8*1))
	ZSROW_ZERO(Z12, Z13, (DX)(R8*2), 64(DX)(R8*2))
	ZSROW_ZERO(Z14, Z15, (DX)(R9*1), 64(DX)(R9*1))
	ZSROW_ZERO(Z16, Z17, (R10), 64(R10))
	ZSROW_ZERO(Z18, Z19, (R10)(R8*1), 64(R10)(R8*1))
	VZEROUPPER
	RET

// func dgemmKernel6x16(k int, a, b, c *float64, ldc int, alpha, beta float64)
TEXT ·dgemmKernel6x16(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R9
	LEAQ (DX)(R8*4), R10
	ZZERO_ACC
	ZPREFETCH_C

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   zdtail

zdloop4:
	PREFETCHT0 384(SI)
	ZDSTEP(0, 0)
	PREFETCHT0 448(SI)
	ZDSTEP(48, 128)
	PREFETCHT0 512(SI)
	ZDSTEP(96, 256)
	ZDSTEP(144, 384)
	ADDQ $192, SI
	ADDQ $512, DI
	DECQ BX
	JNZ  zdloop4

zdtail:
	ANDQ $3, CX
	JZ   zddone

zdloop1:
	ZDSTEP(0, 0)
	ADDQ $48, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  zdloop1

zddone:
	VBROADCASTSD alpha+40(FP), Z0
	MOVQ beta+48(FP), AX
	SHLQ $1, AX
	JZ   zdbeta0
	VBROADCASTSD beta+48(FP), Z1
	ZDROW_BETA(Z8, Z9, (DX), 64(DX))
	ZDROW_BETA(Z10, Z11, (DX)(R8*1), 64(DX)(R8*1))
	ZDROW_BETA(Z12, Z13, (DX)(R8*2), 64(DX)(R8*2))
	ZDROW_BETA(Z14, Z15, (DX)(R9*1), 64(DX)(R9*1))
	ZDROW_BETA(Z16, Z17, (R10), 64(R10))
	ZDROW_BETA(Z18, Z19, (R10)(R8*1), 64(R10)(R8*1))
	VZEROUPPER
	RET

zdbeta0:
	ZDROW_ZERO(Z8, Z9, (DX), 64(DX))
	ZDROW_ZERO(Z10, Z11, (DX)(R8*1), 64(DX)(R8*1))
	ZDROW_ZERO(Z12, Z13, (DX)(R8*2), 64(DX)(R8*2))
	ZDROW_ZERO(Z14, Z15, (DX)(R9*1), 64(DX)(R9*1))
	ZDROW_ZERO(Z16, Z17, (R10), 64(R10))
	ZDROW_ZERO(Z18, Z19, (R10)(R8*1), 64(R10)(R8*1))
	VZEROUPPER
	RET
