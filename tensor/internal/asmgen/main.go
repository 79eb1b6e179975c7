// Command asmgen writes tensor/simd_amd64.s, the AVX2 elementwise kernels
// (and AVX-512 forms of the float32 transcendental ones),
// with avo (github.com/mmcloughlin/avo):
//
//	go generate ./tensor    (runs: go run -C internal/asmgen . -out ../../simd_amd64.s)
//
// It lives in a module of its own so that the tensor package, and every
// program built on it, never depends on avo: only the generated file is
// compiled into the library.
//
// Every lane of a kernel performs the IEEE operations of tensor's scalar Go
// code, in the same order and with the same constants (no FMA), so results
// are bit-identical to it; tensor's tests check that. The exceptions are
// symvColsAVX2F64 and symvColsAVX2F32 (the symmetric matrix-vector product
// of the factorisations, and tensor's matrix-vector products), which fuse
// their multiply-adds and sum in their own order.
//
// The kernels name physical registers, as the hand-written file did, and
// emit exactly its instructions in the same order: what the generator
// removes is the copying (one exp32 body for four kernels, one template
// for the add/sub/mul and relu kernels of both widths, one step list for
// each unrolled loop, lane-replicated constants from one value).
// objcode_test.go checks it: every symbol of the generated file assembles
// to the same bytes as the hand-written file did (hashes in testdata).
package main

import (
	"flag"
	"go/types"
	"math"
	"os"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// a is the file being built. The kernels build it through a context of
// their own rather than avo's global one because only a context can take
// a signature made with go/types (see textPointers).
var a = build.NewContext()

func main() {
	// avo's global context has registered the same flags on the default set.
	fs := flag.NewFlagSet("asmgen", flag.ExitOnError)
	flags := build.NewFlags(fs)
	fs.Parse(os.Args[1:])
	a.ConstraintExpr("amd64,!purego")
	// In the order of the hand-written file; a constant is defined by the
	// first kernel that uses it (exp64 uses relu's float64 one).
	exp32Kernels()
	binaryKernels()
	reluKernels()
	sigmoidGradKernel()
	softplusKernel()
	exp64Kernel()
	rotKernel()
	symvKernel(false)
	geluKernels()
	expShiftKernel(false)
	leakyKernels()
	finiteKernels()
	tanhGradKernel()
	symvKernel(true)
	expShiftKernel(true)
	maxKernel()
	rowKernels()
	colsKernels(false)
	colsKernels(true)
	// The float32 transcendental kernels again, at AVX-512's width (vec.go).
	w = avx512
	exp32Kernels()
	sigmoidGradKernel()
	softplusKernel()
	geluKernels()
	expShiftKernel(false)
	tanhGradKernel()
	expShiftKernel(true)
	w = avx2
	os.Exit(build.Main(flags.Config(), a))
}

// text starts the NOSPLIT function name with the signature sig (a Go
// function type).
func text(name, sig string) {
	a.Function(name)
	a.Attributes(build.NOSPLIT)
	if sig != "" {
		a.SignatureExpr(sig)
	}
}

// splat32 defines a 32-byte read-only constant holding x in all 8 float32
// lanes; splat32Bits the same for a bit pattern.
func splat32(name string, x float32) Mem { return splat32Bits(name, math.Float32bits(x)) }

func splat32Bits(name string, bits uint32) Mem {
	m := a.StaticGlobal(name)
	a.DataAttributes(build.RODATA | build.NOPTR)
	for i := 0; i < 8; i++ {
		a.AddDatum(4*i, U32(bits))
	}
	return m
}

// splat64 defines a 32-byte read-only constant holding x in all 4 float64
// lanes.
func splat64(name string, x float64) Mem {
	m := a.StaticGlobal(name)
	a.DataAttributes(build.RODATA | build.NOPTR)
	for i := 0; i < 4; i++ {
		a.AddDatum(8*i, U64(math.Float64bits(x)))
	}
	return m
}

// at addresses element AX of the array at base, plus disp bytes.
func at(base Register, elem uint8, disp int) Mem {
	return Mem{Base: base, Index: RAX, Scale: elem, Disp: disp}
}

// block is one vector's worth of registers in an unrolled loop, and the
// byte offset of its vector from element AX.
type block struct {
	y   []VecPhysical
	off int
}

// blocks returns n blocks of width registers each, numbered upwards from
// Y0, with offsets 32 bytes apart.
func blocks(n, width int) []block {
	all := []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}
	out := make([]block, n)
	for i := range out {
		out[i] = block{y: all[i*width : (i+1)*width], off: 32 * i}
	}
	return out
}

// unrolled emits a loop body written for one block: each step for every
// block before the next step, so independent blocks overlap in the
// pipeline.
func unrolled(bs []block, steps ...func(block)) {
	for _, step := range steps {
		for _, b := range bs {
			step(b)
		}
	}
}

// countedLoop emits the loop over AX in steps of step elements up to n
// (CX) rounded down to a multiple of step: BX holds the bound, and the
// loop exits to exit.
func countedLoop(name, exit string, step int, body func()) {
	a.MOVQ(RCX, RBX)
	a.ANDQ(I32(-step), RBX)
	a.Label(name)
	a.CMPQ(RAX, RBX)
	a.JGE(LabelRef(exit))
	body()
	a.ADDQ(U32(step), RAX)
	a.JMP(LabelRef(name))
}

// done emits the exit every kernel shares: clear the upper halves of the
// vector registers (avoiding the SSE transition penalty in Go code that
// follows) and return the count of elements written.
func done(label string) {
	a.Label(label)
	a.VZEROUPPER()
	a.Store(RAX, a.ReturnIndex(0))
	a.RET()
}

// textPointers starts the NOSPLIT function name with the signature
// func(names... unsafe.Pointer, n int) int, made with go/types because
// avo's signature expressions cannot name unsafe.Pointer.
func textPointers(name string, names ...string) {
	text(name, "")
	var params []*types.Var
	for _, n := range names {
		params = append(params, types.NewParam(0, nil, n, types.Typ[types.UnsafePointer]))
	}
	params = append(params, types.NewParam(0, nil, "n", types.Typ[types.Int]))
	result := types.NewParam(0, nil, "", types.Typ[types.Int])
	sig := types.NewSignatureType(nil, nil, nil, types.NewTuple(params...), types.NewTuple(result), false)
	a.Signature(gotypes.NewSignature(nil, sig))
}

// loadPointer loads the unsafe.Pointer argument name into r (avo's Load
// cannot choose a move for unsafe.Pointer).
func loadPointer(name string, r Register) { a.MOVQ(addr(a.Param(name)), r) }

// addr is the stack address of an argument.
func addr(c gotypes.Component) Mem {
	b, err := c.Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}
