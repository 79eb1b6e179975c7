//go:build !amd64

package gemm

import "unsafe"

// Stubs: the assembly packers are only reached with the amd64 kernels
// (mr == 6), which do not exist on this architecture.

func packCopy64(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)  { panic("unreachable") }
func packCopy24(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)  { panic("unreachable") }
func packCopy48(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)  { panic("unreachable") }
func packA6S(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)    { panic("unreachable") }
func packA6D(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)    { panic("unreachable") }
func packBT16S(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)  { panic("unreachable") }
func packBT8D(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)   { panic("unreachable") }
func packCopy128(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer) { panic("unreachable") }
func packBT32S(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)  { panic("unreachable") }
func packBT16D(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)  { panic("unreachable") }

// asmPack is false: packing runs in Go.
const asmPack = false
