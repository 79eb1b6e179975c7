#include "textflag.h"

// FMA12 is twelve independent FMAs, OP A, B into each of the twelve
// accumulators D4 … D15: enough chains in flight to hide the FMA latency
// on both ports.
#define FMA3(OP, A, B, D0, D1, D2) OP A, B, D0; OP A, B, D1; OP A, B, D2
#define FMA12Y(OP) FMA3(OP, Y0, Y1, Y4, Y5, Y6); FMA3(OP, Y0, Y1, Y7, Y8, Y9); FMA3(OP, Y0, Y1, Y10, Y11, Y12); FMA3(OP, Y0, Y1, Y13, Y14, Y15)
#define FMA12Z(OP) FMA3(OP, Z0, Z1, Z4, Z5, Z6); FMA3(OP, Z0, Z1, Z7, Z8, Z9); FMA3(OP, Z0, Z1, Z10, Z11, Z12); FMA3(OP, Z0, Z1, Z13, Z14, Z15)

// FMALOOP is the body of a probe: zero the inputs A and B with XOR, then
// n iterations of 48 independent FMAs (four FMA12 blocks).
#define FMALOOP(XOR, A, B, FMA12) \
	MOVQ n+0(FP), CX; \
	XOR A, A, A; \
	XOR B, B, B; \
loop: \
	FMA12; FMA12; FMA12; FMA12; \
	DECQ CX; \
	JNZ  loop; \
	VZEROUPPER; \
	RET

// func fmaLoopPS(n int) — n iterations of 48 independent 8-wide FMAs.
TEXT ·fmaLoopPS(SB), NOSPLIT, $0-8
	FMALOOP(VXORPS, Y0, Y1, FMA12Y(VFMADD231PS))

// func fmaLoopPD(n int) — n iterations of 48 independent 4-wide FMAs.
TEXT ·fmaLoopPD(SB), NOSPLIT, $0-8
	FMALOOP(VXORPD, Y0, Y1, FMA12Y(VFMADD231PD))

// func fmaLoopPS512(n int) — n iterations of 48 independent 16-wide FMAs
// (AVX-512F).
TEXT ·fmaLoopPS512(SB), NOSPLIT, $0-8
	FMALOOP(VPXORD, Z0, Z1, FMA12Z(VFMADD231PS))

// func fmaLoopPD512(n int) — n iterations of 48 independent 8-wide FMAs.
TEXT ·fmaLoopPD512(SB), NOSPLIT, $0-8
	FMALOOP(VPXORD, Z0, Z1, FMA12Z(VFMADD231PD))
