//go:build amd64

#include "textflag.h"

// Packing helpers. All strides are in bytes; n counts depth steps (copies)
// or groups of four depth steps (gathers). They use AVX (VEX) encodings and
// are only called when the AVX2+FMA kernels are active.

// func packCopy64(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// copies 64 bytes from src+i*ld to dst+i*64 for i < n.
TEXT ·packCopy64(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	TESTQ CX, CX
	JZ   c64done

c64loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ R8, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  c64loop

c64done:
	VZEROUPPER
	RET

// func packCopy24(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// copies 24 bytes from src+i*ld to dst+i*24 for i < n.
TEXT ·packCopy24(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	TESTQ CX, CX
	JZ   c24done

c24loop:
	VMOVUPS (SI), X0
	MOVQ 16(SI), AX
	VMOVUPS X0, (DI)
	MOVQ AX, 16(DI)
	ADDQ R8, SI
	ADDQ $24, DI
	DECQ CX
	JNZ  c24loop

c24done:
	RET

// func packCopy48(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// copies 48 bytes from src+i*ld to dst+i*48 for i < n.
TEXT ·packCopy48(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	TESTQ CX, CX
	JZ   c48done

c48loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), X1
	VMOVUPS Y0, (DI)
	VMOVUPS X1, 32(DI)
	ADDQ R8, SI
	ADDQ $48, DI
	DECQ CX
	JNZ  c48loop

c48done:
	VZEROUPPER
	RET

// func packA6S(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// gathers 6 float32 rows (stride ld bytes), 4 depth steps per iteration, into
// dst[p*6+i].
TEXT ·packA6S(SB), NOSPLIT, $0-32
	MOVQ n4+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	TESTQ CX, CX
	JZ   a6sdone

a6sloop:
	VMOVUPS (SI), X0
	VMOVUPS (SI)(R8*1), X1
	VMOVUPS (SI)(R8*2), X2
	VMOVUPS (SI)(R9*1), X3
	VMOVUPS (R10), X4
	VMOVUPS (R10)(R8*1), X5
	VUNPCKLPS X1, X0, X6
	VUNPCKHPS X1, X0, X7
	VUNPCKLPS X3, X2, X8
	VUNPCKHPS X3, X2, X9
	VMOVLHPS X8, X6, X10
	VMOVHLPS X6, X8, X11
	VMOVLHPS X9, X7, X12
	VMOVHLPS X7, X9, X13
	VUNPCKLPS X5, X4, X14
	VUNPCKHPS X5, X4, X15
	VMOVUPS X10, (DI)
	VMOVLPS X14, 16(DI)
	VMOVUPS X11, 24(DI)
	VMOVHPS X14, 40(DI)
	VMOVUPS X12, 48(DI)
	VMOVLPS X15, 64(DI)
	VMOVUPS X13, 72(DI)
	VMOVHPS X15, 88(DI)
	ADDQ $16, SI
	ADDQ $16, R10
	ADDQ $96, DI
	DECQ CX
	JNZ  a6sloop

a6sdone:
	RET

// func packA6D(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// gathers 6 float64 rows (stride ld bytes), 4 depth steps per iteration, into
// dst[p*6+i].
TEXT ·packA6D(SB), NOSPLIT, $0-32
	MOVQ n4+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	TESTQ CX, CX
	JZ   a6ddone

a6dloop:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R8*1), Y1
	VMOVUPD (SI)(R8*2), Y2
	VMOVUPD (SI)(R9*1), Y3
	VMOVUPD (R10), Y4
	VMOVUPD (R10)(R8*1), Y5
	VUNPCKLPD Y1, Y0, Y6
	VUNPCKHPD Y1, Y0, Y7
	VUNPCKLPD Y3, Y2, Y8
	VUNPCKHPD Y3, Y2, Y9
	VPERM2F128 $0x20, Y8, Y6, Y10
	VPERM2F128 $0x20, Y9, Y7, Y11
	VPERM2F128 $0x31, Y8, Y6, Y12
	VPERM2F128 $0x31, Y9, Y7, Y13
	VUNPCKLPD Y5, Y4, Y14
	VUNPCKHPD Y5, Y4, Y15
	VMOVUPD Y10, (DI)
	VMOVUPD X14, 32(DI)
	VMOVUPD Y11, 48(DI)
	VMOVUPD X15, 80(DI)
	VMOVUPD Y12, 96(DI)
	VEXTRACTF128 $1, Y14, 128(DI)
	VMOVUPD Y13, 144(DI)
	VEXTRACTF128 $1, Y15, 176(DI)
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ $192, DI
	DECQ CX
	JNZ  a6dloop

a6ddone:
	VZEROUPPER
	RET

// TR4S transposes the 4×4 float32 block at rows base..base+3 (stride R8,
// R9 = 3*R8) and stores its four columns at off, off+row, off+2*row and
// off+3*row: row is the packed B row in bytes (64 for the AVX2 kernels, 128
// for the AVX-512 ones).
#define TR4S(base, off, row) \
	VMOVUPS (base), X0; \
	VMOVUPS (base)(R8*1), X1; \
	VMOVUPS (base)(R8*2), X2; \
	VMOVUPS (base)(R9*1), X3; \
	VUNPCKLPS X1, X0, X4; \
	VUNPCKHPS X1, X0, X5; \
	VUNPCKLPS X3, X2, X6; \
	VUNPCKHPS X3, X2, X7; \
	VMOVLHPS X6, X4, X8; \
	VMOVHLPS X4, X6, X9; \
	VMOVLHPS X7, X5, X10; \
	VMOVHLPS X5, X7, X11; \
	VMOVUPS X8, off(DI); \
	VMOVUPS X9, off+row(DI); \
	VMOVUPS X10, off+2*row(DI); \
	VMOVUPS X11, off+3*row(DI)

// func packBT16S(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// gathers 16 float32 rows (stride ld bytes), 4 depth steps per iteration,
// into dst[p*16+j].
TEXT ·packBT16S(SB), NOSPLIT, $0-32
	MOVQ n4+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	LEAQ (R10)(R8*4), R11
	LEAQ (R11)(R8*4), R12
	TESTQ CX, CX
	JZ   bt16done

bt16loop:
	TR4S(SI, 0, 64)
	TR4S(R10, 16, 64)
	TR4S(R11, 32, 64)
	TR4S(R12, 48, 64)
	ADDQ $16, SI
	ADDQ $16, R10
	ADDQ $16, R11
	ADDQ $16, R12
	ADDQ $256, DI
	DECQ CX
	JNZ  bt16loop

bt16done:
	RET

// TR4D transposes the 4×4 float64 block at rows base..base+3 and stores its
// four columns as TR4S does.
#define TR4D(base, off, row) \
	VMOVUPD (base), Y0; \
	VMOVUPD (base)(R8*1), Y1; \
	VMOVUPD (base)(R8*2), Y2; \
	VMOVUPD (base)(R9*1), Y3; \
	VUNPCKLPD Y1, Y0, Y4; \
	VUNPCKHPD Y1, Y0, Y5; \
	VUNPCKLPD Y3, Y2, Y6; \
	VUNPCKHPD Y3, Y2, Y7; \
	VPERM2F128 $0x20, Y6, Y4, Y8; \
	VPERM2F128 $0x20, Y7, Y5, Y9; \
	VPERM2F128 $0x31, Y6, Y4, Y10; \
	VPERM2F128 $0x31, Y7, Y5, Y11; \
	VMOVUPD Y8, off(DI); \
	VMOVUPD Y9, off+row(DI); \
	VMOVUPD Y10, off+2*row(DI); \
	VMOVUPD Y11, off+3*row(DI)

// func packBT8D(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// gathers 8 float64 rows (stride ld bytes), 4 depth steps per iteration,
// into dst[p*8+j].
TEXT ·packBT8D(SB), NOSPLIT, $0-32
	MOVQ n4+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	TESTQ CX, CX
	JZ   bt8done

bt8loop:
	TR4D(SI, 0, 64)
	TR4D(R10, 32, 64)
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ $256, DI
	DECQ CX
	JNZ  bt8loop

bt8done:
	VZEROUPPER
	RET

// Packers for the AVX-512 kernels' 128-byte B rows (32 float32 or 16
// float64 columns). They use VEX encodings like the ones above.

// func packCopy128(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// copies 128 bytes from src+i*ld to dst+i*128 for i < n.
TEXT ·packCopy128(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	TESTQ CX, CX
	JZ   c128done

c128loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ R8, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  c128loop

c128done:
	VZEROUPPER
	RET

// func packBT32S(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// gathers 32 float32 rows (stride ld bytes), 4 depth steps per iteration,
// into dst[p*32+j].
TEXT ·packBT32S(SB), NOSPLIT, $0-32
	MOVQ n4+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	LEAQ (R10)(R8*4), R11
	LEAQ (R11)(R8*4), R12
	LEAQ (R12)(R8*4), R13
	LEAQ (R13)(R8*4), R14
	LEAQ (R14)(R8*4), AX
	LEAQ (AX)(R8*4), BX
	TESTQ CX, CX
	JZ   bt32done

bt32loop:
	TR4S(SI, 0, 128)
	TR4S(R10, 16, 128)
	TR4S(R11, 32, 128)
	TR4S(R12, 48, 128)
	TR4S(R13, 64, 128)
	TR4S(R14, 80, 128)
	TR4S(AX, 96, 128)
	TR4S(BX, 112, 128)
	ADDQ $16, SI
	ADDQ $16, R10
	ADDQ $16, R11
	ADDQ $16, R12
	ADDQ $16, R13
	ADDQ $16, R14
	ADDQ $16, AX
	ADDQ $16, BX
	ADDQ $512, DI
	DECQ CX
	JNZ  bt32loop

bt32done:
	RET

// func packBT16D(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
// gathers 16 float64 rows (stride ld bytes), 4 depth steps per iteration,
// into dst[p*16+j].
TEXT ·packBT16D(SB), NOSPLIT, $0-32
	MOVQ n4+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R9
	LEAQ (SI)(R8*4), R10
	LEAQ (R10)(R8*4), R11
	LEAQ (R11)(R8*4), R12
	TESTQ CX, CX
	JZ   bt16ddone

bt16dloop:
	TR4D(SI, 0, 128)
	TR4D(R10, 32, 128)
	TR4D(R11, 64, 128)
	TR4D(R12, 96, 128)
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, R12
	ADDQ $512, DI
	DECQ CX
	JNZ  bt16dloop

bt16ddone:
	VZEROUPPER
	RET
