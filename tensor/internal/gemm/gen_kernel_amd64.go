//go:build ignore

// This program writes kernel_amd64.s, the x86-64 micro-kernels:
//
//	go run gen_kernel_amd64.go > kernel_amd64.s
//
// All four share one shape: a 6-row tile of two vectors per row held in
// twelve accumulators, one step per depth index (load two B vectors, then
// per row broadcast one A value and issue two FMAs), unrolled four times,
// and an epilogue that scales by alpha and adds beta·C unless beta is zero
// (then C is not read). They differ in the vector width (YMM for AVX2+FMA,
// ZMM for AVX-512F) and the element size.
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
	mov := "VMOVUP" + s.suffix()[1:]
	bc := "VBROADCASTSS"
	if s.double {
		bc = "VBROADCASTSD"
	}
	fmt.Fprintf(b, "\t%s %d(DI), %s\n", mov, bo, s.reg(0))
	fmt.Fprintf(b, "\t%s %d(DI), %s\n", mov, bo+s.vec(), s.reg(1))
	for r := 0; r < mr; r++ {
		a := s.reg(2 + r%s.bcastRegs())
		fmt.Fprintf(b, "\t%s %d(SI), %s\n", bc, ao+r*s.es(), a)
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

func (s spec) kernel(b *strings.Builder) {
	t := "float32"
	argEnd, betaOff, shift := 48, 44, 2
	if s.double {
		t, argEnd, betaOff, shift = "float64", 56, 48, 3
	}
	l := s.label
	aStep, bStep := mr*s.es(), 2*s.vec()
	fmt.Fprintf(b, "// func %s(k int, a, b, c *%s, ldc int, alpha, beta %s)\n", s.name, t, t)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", s.name, argEnd)
	fmt.Fprintf(b, "\tMOVQ k+0(FP), CX\n\tMOVQ a+8(FP), SI\n\tMOVQ b+16(FP), DI\n\tMOVQ c+24(FP), DX\n")
	fmt.Fprintf(b, "\tMOVQ ldc+32(FP), R8\n\tSHLQ $%d, R8\n\tLEAQ (R8)(R8*2), R9\n\tLEAQ (DX)(R8*4), R10\n", shift)
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
	for u := 0; u < 4; u++ {
		if off, ok := prefetch[u]; ok {
			fmt.Fprintf(b, "\tPREFETCHT0 %d(SI)\n", off)
		}
		s.step(b, u*aStep, u*bStep)
	}
	fmt.Fprintf(b, "\tADDQ $%d, SI\n\tADDQ $%d, DI\n\tDECQ BX\n\tJNZ  %sloop4\n\n", 4*aStep, 4*bStep, l)
	fmt.Fprintf(b, "%stail:\n\tANDQ $3, CX\n\tJZ   %sdone\n\n%sloop1:\n", l, l, l)
	s.step(b, 0, 0)
	fmt.Fprintf(b, "\tADDQ $%d, SI\n\tADDQ $%d, DI\n\tDECQ CX\n\tJNZ  %sloop1\n\n%sdone:\n", aStep, bStep, l, l)

	// Epilogue: vector 0 = alpha, vector 1 = beta; -0 counts as zero.
	bc := "VBROADCASTSS"
	if s.double {
		bc = "VBROADCASTSD"
		fmt.Fprintf(b, "\t%s alpha+40(FP), %s\n\tMOVQ beta+%d(FP), AX\n\tSHLQ $1, AX\n\tJZ   %sbeta0\n", bc, s.reg(0), betaOff, l)
	} else {
		fmt.Fprintf(b, "\t%s alpha+40(FP), %s\n\tMOVL beta+%d(FP), AX\n\tANDL $0x7fffffff, AX\n\tJZ   %sbeta0\n", bc, s.reg(0), betaOff, l)
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
	os.Stdout.WriteString(b.String())
}
