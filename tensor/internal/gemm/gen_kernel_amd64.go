//go:build ignore

// This program writes kernel_amd64.s, the x86-64 micro-kernels:
//
//	go run gen_kernel_amd64.go > kernel_amd64.s
//
// The tile kernels share one shape: a 6-row tile of two vectors per row
// held in twelve accumulators, one step per depth index (load two B
// vectors, then per row broadcast one A value and issue two FMAs),
// unrolled four times, and an epilogue that scales by alpha and adds
// beta·C unless beta is zero (then C is not read). They differ in the
// vector width (YMM for AVX2+FMA, ZMM for AVX-512F), the element size,
// and where A's values are read: from packed micro-panels, or, for the
// AVX2 kernels' N and T forms, in place from a row-major A or Aᵀ
// (kernelA). The rank-1 kernels follow.
package main

import (
	"fmt"
	"os"
	"strings"
)

// spec is one kernel.
type spec struct {
	name, label string // TEXT symbol, prefix of its labels
	double, zmm bool
}

func (s spec) es() int { // element size in bytes
	if s.double {
		return 8
	}
	return 4
}

func (s spec) vec() int { // vector size in bytes
	if s.zmm {
		return 64
	}
	return 32
}

func (s spec) reg(i int) string {
	if s.zmm {
		return fmt.Sprintf("Z%d", i)
	}
	return fmt.Sprintf("Y%d", i)
}

// suffix is the packed instruction suffix: PS or PD.
func (s spec) suffix() string {
	if s.double {
		return "PD"
	}
	return "PS"
}

// Register use: SI packed A (6 values per step), DI packed B (two vectors
// per step), CX and BX step counters, DX C's row 0, R8 ldc in bytes, R9
// 3·ldc, R10 C's row 4. Vectors 0 and 1 hold B, the next ones (two on YMM,
// six on ZMM) the broadcast A values, and the twelve after them the
// accumulators, row r in acc+2r and acc+2r+1.
const mr = 6

func (s spec) bcastRegs() int {
	if s.zmm {
		return 6
	}
	return 2
}

func (s spec) acc() int { return 2 + s.bcastRegs() }

// step writes one rank-1 update at A offset ao and B offset bo (bytes).
func (s spec) step(b *strings.Builder, ao, bo int) {
	s.stepAt(b, func(r int) string { return fmt.Sprintf("%d(SI)", ao+r*s.es()) }, bo)
}

// stepAt writes one rank-1 update with row r's A value at the memory
// operand aAt(r) and B at offset bo (bytes).
func (s spec) stepAt(b *strings.Builder, aAt func(r int) string, bo int) {
	mov := "VMOVUP" + s.suffix()[1:]
	bc := "VBROADCASTSS"
	if s.double {
		bc = "VBROADCASTSD"
	}
	fmt.Fprintf(b, "\t%s %d(DI), %s\n", mov, bo, s.reg(0))
	fmt.Fprintf(b, "\t%s %d(DI), %s\n", mov, bo+s.vec(), s.reg(1))
	for r := 0; r < mr; r++ {
		a := s.reg(2 + r%s.bcastRegs())
		fmt.Fprintf(b, "\t%s %s, %s\n", bc, aAt(r), a)
		for j := 0; j < 2; j++ {
			fmt.Fprintf(b, "\tVFMADD231%s %s, %s, %s\n", s.suffix(), s.reg(j), a, s.reg(s.acc()+2*r+j))
		}
	}
}

// rowAddr is the memory operand of C's row r at byte offset off.
func rowAddr(r, off int) string {
	o := ""
	if off != 0 {
		o = fmt.Sprint(off)
	}
	switch r {
	case 0:
		return o + "(DX)"
	case 1:
		return o + "(DX)(R8*1)"
	case 2:
		return o + "(DX)(R8*2)"
	case 3:
		return o + "(DX)(R9*1)"
	case 4:
		return o + "(R10)"
	}
	return o + "(R10)(R8*1)"
}

// A's layouts: packed micro-panels (6 values per step), or read in place
// from a row-major matrix with row stride lda: rowsA when op(A) is A
// (row r of the tile at r·lda, steps one element apart), colsA when op(A)
// is Aᵀ (the tile's rows one element apart, steps lda apart).
const (
	packedA = iota
	rowsA
	colsA
)

func (s spec) kernel(b *strings.Builder) { s.kernelA(b, packedA) }

// kernelA writes the tile kernel reading A in layout mode. The in-place
// forms take lda after a (func(k int, a *T, lda int, b, c *T, ldc int,
// alpha, beta T)) and keep it in bytes in R11, 3·lda in R12 and, for
// rowsA, row 4's address in R13; they issue the same FMAs in the same
// order as the packed form, so a tile's bits do not depend on whether A
// was packed.
func (s spec) kernelA(b *strings.Builder, mode int) {
	t := "float32"
	argEnd, betaOff, shift := 48, 44, 2
	if s.double {
		t, argEnd, betaOff, shift = "float64", 56, 48, 3
	}
	name, l := s.name, s.label
	off := 0 // extra argument bytes before b: lda
	if mode != packedA {
		off = 8
		argEnd += 8
		betaOff += 8
		name += map[int]string{rowsA: "N", colsA: "T"}[mode]
		l += map[int]string{rowsA: "n", colsA: "t"}[mode]
	}
	aStep, bStep := mr*s.es(), 2*s.vec()
	if mode == packedA {
		fmt.Fprintf(b, "// func %s(k int, a, b, c *%s, ldc int, alpha, beta %s)\n", name, t, t)
	} else {
		fmt.Fprintf(b, "// func %s(k int, a *%s, lda int, b, c *%s, ldc int, alpha, beta %s)\n", name, t, t, t)
	}
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", name, argEnd)
	fmt.Fprintf(b, "\tMOVQ k+0(FP), CX\n\tMOVQ a+8(FP), SI\n\tMOVQ b+%d(FP), DI\n\tMOVQ c+%d(FP), DX\n", 16+off, 24+off)
	if mode != packedA {
		fmt.Fprintf(b, "\tMOVQ lda+16(FP), R11\n\tSHLQ $%d, R11\n\tLEAQ (R11)(R11*2), R12\n", shift)
		if mode == rowsA {
			fmt.Fprintf(b, "\tLEAQ (SI)(R11*4), R13\n")
		}
	}
	fmt.Fprintf(b, "\tMOVQ ldc+%d(FP), R8\n\tSHLQ $%d, R8\n\tLEAQ (R8)(R8*2), R9\n\tLEAQ (DX)(R8*4), R10\n", 32+off, shift)
	for i := 0; i < 2*mr; i++ {
		r := s.reg(s.acc() + i)
		if s.zmm {
			fmt.Fprintf(b, "\tVPXORD %s, %s, %s\n", r, r, r)
		} else {
			fmt.Fprintf(b, "\tVXORPS %s, %s, %s\n", r, r, r)
		}
	}
	// Prefetch the C tile: each row spans 2·vec bytes.
	for r := 0; r < mr; r++ {
		fmt.Fprintf(b, "\tPREFETCHT0 %s\n\tPREFETCHT0 %s\n", rowAddr(r, 0), rowAddr(r, 2*s.vec()-1))
	}
	fmt.Fprintf(b, "\n\tMOVQ CX, BX\n\tSHRQ $2, BX\n\tJZ   %stail\n\n%sloop4:\n", l, l)
	// Prefetch A about ten steps ahead, one cache line per prefetch:
	// before steps 0 and 2 (float32, 96 bytes per four steps) or 0, 1
	// and 2 (float64, 192 bytes).
	prefetch := map[int]int{0: 256, 2: 320}
	if s.double {
		prefetch = map[int]int{0: 384, 1: 448, 2: 512}
	}
	// aAt is row r's A operand at step u of an unrolled group; advance
	// moves A on by steps steps.
	aAt := func(u, r int) string { return fmt.Sprintf("%d(SI)", u*aStep+r*s.es()) }
	advance := func(steps int) string { return fmt.Sprintf("\tADDQ $%d, SI\n", steps*aStep) }
	switch mode {
	case rowsA:
		rows := []string{"(SI)", "(SI)(R11*1)", "(SI)(R11*2)", "(SI)(R12*1)", "(R13)", "(R13)(R11*1)"}
		aAt = func(u, r int) string { return fmt.Sprint(u*s.es()) + rows[r] }
		advance = func(steps int) string {
			return fmt.Sprintf("\tADDQ $%d, SI\n\tADDQ $%d, R13\n", steps*s.es(), steps*s.es())
		}
	case colsA:
		steps := []string{"(SI)", "(SI)(R11*1)", "(SI)(R11*2)", "(SI)(R12*1)"}
		aAt = func(u, r int) string { return fmt.Sprint(r*s.es()) + steps[u] }
		advance = func(n int) string {
			if n == 4 {
				return "\tLEAQ (SI)(R11*4), SI\n"
			}
			return "\tADDQ R11, SI\n"
		}
	}
	for u := 0; u < 4; u++ {
		if off, ok := prefetch[u]; ok && mode == packedA {
			fmt.Fprintf(b, "\tPREFETCHT0 %d(SI)\n", off)
		}
		s.stepAt(b, func(r int) string { return aAt(u, r) }, u*bStep)
	}
	fmt.Fprintf(b, "%s\tADDQ $%d, DI\n\tDECQ BX\n\tJNZ  %sloop4\n\n", advance(4), 4*bStep, l)
	fmt.Fprintf(b, "%stail:\n\tANDQ $3, CX\n\tJZ   %sdone\n\n%sloop1:\n", l, l, l)
	s.stepAt(b, func(r int) string { return aAt(0, r) }, 0)
	fmt.Fprintf(b, "%s\tADDQ $%d, DI\n\tDECQ CX\n\tJNZ  %sloop1\n\n%sdone:\n", advance(1), bStep, l, l)

	// Epilogue: vector 0 = alpha, vector 1 = beta; -0 counts as zero.
	bc := "VBROADCASTSS"
	if s.double {
		bc = "VBROADCASTSD"
		fmt.Fprintf(b, "\t%s alpha+%d(FP), %s\n\tMOVQ beta+%d(FP), AX\n\tSHLQ $1, AX\n\tJZ   %sbeta0\n", bc, 40+off, s.reg(0), betaOff, l)
	} else {
		fmt.Fprintf(b, "\t%s alpha+%d(FP), %s\n\tMOVL beta+%d(FP), AX\n\tANDL $0x7fffffff, AX\n\tJZ   %sbeta0\n", bc, 40+off, s.reg(0), betaOff, l)
	}
	fmt.Fprintf(b, "\t%s beta+%d(FP), %s\n", bc, betaOff, s.reg(1))
	mov := "VMOVUP" + s.suffix()[1:]
	store := func(beta bool) {
		for r := 0; r < mr; r++ {
			for j := 0; j < 2; j++ {
				acc := s.reg(s.acc() + 2*r + j)
				fmt.Fprintf(b, "\tVMUL%s %s, %s, %s\n", s.suffix(), s.reg(0), acc, acc)
			}
			for j := 0; j < 2 && beta; j++ {
				acc := s.reg(s.acc() + 2*r + j)
				fmt.Fprintf(b, "\tVFMADD231%s %s, %s, %s\n", s.suffix(), rowAddr(r, j*s.vec()), s.reg(1), acc)
			}
			for j := 0; j < 2; j++ {
				fmt.Fprintf(b, "\t%s %s, %s\n", mov, s.reg(s.acc()+2*r+j), rowAddr(r, j*s.vec()))
			}
		}
		fmt.Fprintf(b, "\tVZEROUPPER\n\tRET\n")
	}
	store(true)
	fmt.Fprintf(b, "\n%sbeta0:\n", l)
	store(false)
	b.WriteString("\n")
}

// outer writes the rank-1 kernel (GEMM with k = 1): for each of m rows,
// C's row = a[i]·b, or C's row + a[i]·b, with b contiguous. It keeps the
// broadcast a[i] in vector 0 and streams b four vectors at a time, so each
// row of C is written once with full-width stores. The product is rounded
// before it is added, as the tile kernels do with alpha = 1 and beta = 1.
//
// Modes: 0 stores normally, 1 stores non-temporally (VMOVNTP*: the line is
// written without being read first and bypasses the caches; the stores
// need aligned addresses, so each row starts with scalar steps up to a
// 64-byte boundary, and an SFENCE orders them before the return), 2 adds
// to C. Registers: R11 rows left, R12 n, SI a, R13 a's stride in bytes,
// DI b, DX C's row, R8 ldc in bytes, R9 mode; per row AX walks C, BX b and
// CX counts the columns left.
func (s spec) outer(b *strings.Builder) {
	t, shift := "float32", 2
	if s.double {
		t, shift = "float64", 3
	}
	l, sfx := s.label, s.suffix()
	ss := "S" + sfx[1:] // scalar suffix: SS or SD
	bc := "VBROADCASTSS"
	if s.double {
		bc = "VBROADCASTSD"
	}
	v, lanes := s.vec(), s.vec()/s.es()
	fmt.Fprintf(b, "// func %s(m, n int, a *%s, inca int, b, c *%s, ldc, mode int)\n", s.name, t, t)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-64\n", s.name)
	fmt.Fprintf(b, "\tMOVQ m+0(FP), R11\n\tMOVQ n+8(FP), R12\n\tMOVQ a+16(FP), SI\n\tMOVQ inca+24(FP), R13\n\tSHLQ $%d, R13\n", shift)
	fmt.Fprintf(b, "\tMOVQ b+32(FP), DI\n\tMOVQ c+40(FP), DX\n\tMOVQ ldc+48(FP), R8\n\tSHLQ $%d, R8\n\tMOVQ mode+56(FP), R9\n", shift)
	fmt.Fprintf(b, "\tTESTQ R11, R11\n\tJZ   %sdone\n\n%srow:\n", l, l)
	fmt.Fprintf(b, "\t%s (SI), %s\n\tMOVQ DX, AX\n\tMOVQ DI, BX\n\tMOVQ R12, CX\n", bc, s.reg(0))
	fmt.Fprintf(b, "\tCMPQ R9, $1\n\tJB   %sstore4\n\tJA   %sadd4\n\n", l, l)
	// Streaming: scalar steps up to a cache-line boundary.
	fmt.Fprintf(b, "%shead:\n\tTESTQ $63, AX\n\tJZ   %sstream4\n\tTESTQ CX, CX\n\tJZ   %snext\n", l, l, l)
	fmt.Fprintf(b, "\tVMUL%s (BX), X0, X1\n\tVMOV%s X1, (AX)\n", ss, ss)
	fmt.Fprintf(b, "\tADDQ $%d, AX\n\tADDQ $%d, BX\n\tDECQ CX\n\tJMP  %shead\n\n", s.es(), s.es(), l)
	loop := func(name, store string, add bool) {
		one := func(off, r int) {
			fmt.Fprintf(b, "\tVMUL%s %d(BX), %s, %s\n", sfx, off, s.reg(0), s.reg(r))
			if add {
				fmt.Fprintf(b, "\tVADD%s %d(AX), %s, %s\n", sfx, off, s.reg(r), s.reg(r))
			}
			fmt.Fprintf(b, "\t%s %s, %d(AX)\n", store, s.reg(r), off)
		}
		fmt.Fprintf(b, "%s%s4:\n\tCMPQ CX, $%d\n\tJB   %s%s1\n", l, name, 4*lanes, l, name)
		for u := 0; u < 4; u++ {
			one(u*v, 1+u)
		}
		fmt.Fprintf(b, "\tADDQ $%d, AX\n\tADDQ $%d, BX\n\tSUBQ $%d, CX\n\tJMP  %s%s4\n", 4*v, 4*v, 4*lanes, l, name)
		fmt.Fprintf(b, "%s%s1:\n\tCMPQ CX, $%d\n\tJB   %stail\n", l, name, lanes, l)
		one(0, 1)
		fmt.Fprintf(b, "\tADDQ $%d, AX\n\tADDQ $%d, BX\n\tSUBQ $%d, CX\n\tJMP  %s%s1\n\n", v, v, lanes, l, name)
	}
	loop("stream", "VMOVNTP"+sfx[1:], false)
	loop("store", "VMOVUP"+sfx[1:], false)
	loop("add", "VMOVUP"+sfx[1:], true)
	// The last columns one at a time (mode 2 adds).
	fmt.Fprintf(b, "%stail:\n\tTESTQ CX, CX\n\tJZ   %snext\n\tVMUL%s (BX), X0, X1\n", l, l, ss)
	fmt.Fprintf(b, "\tCMPQ R9, $2\n\tJNE  %stailstore\n\tVADD%s (AX), X1, X1\n%stailstore:\n\tVMOV%s X1, (AX)\n", l, ss, l, ss)
	fmt.Fprintf(b, "\tADDQ $%d, AX\n\tADDQ $%d, BX\n\tDECQ CX\n\tJMP  %stail\n\n", s.es(), s.es(), l)
	fmt.Fprintf(b, "%snext:\n\tADDQ R13, SI\n\tADDQ R8, DX\n\tDECQ R11\n\tJNZ  %srow\n", l, l)
	fmt.Fprintf(b, "\tSFENCE\n\n%sdone:\n\tVZEROUPPER\n\tRET\n\n", l)
}

func main() {
	var b strings.Builder
	b.WriteString("// Code generated by gen_kernel_amd64.go; DO NOT EDIT.\n\n//go:build amd64\n\n#include \"textflag.h\"\n\n")
	for _, s := range []spec{
		{"sgemmKernel6x16", "s", false, false},
		{"dgemmKernel6x8", "d", true, false},
		{"sgemmKernel6x32", "zs", false, true},
		{"dgemmKernel6x16", "zd", true, true},
	} {
		s.kernel(&b)
	}
	// The AVX2 kernels again, reading A in place (see kernelA).
	for _, s := range []spec{{"sgemmKernel6x16", "s", false, false}, {"dgemmKernel6x8", "d", true, false}} {
		s.kernelA(&b, rowsA)
		s.kernelA(&b, colsA)
	}
	for _, s := range []spec{
		{"souterKernel8", "os", false, false},
		{"douterKernel4", "od", true, false},
		{"souterKernel16", "ozs", false, true},
		{"douterKernel8", "ozd", true, true},
	} {
		s.outer(&b)
	}
	os.Stdout.WriteString(b.String())
}
