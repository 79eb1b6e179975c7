//go:build amd64

package gemm

import "unsafe"

// asmPack is true: the AVX2 packers below serve the AVX2 kernels.
const asmPack = true

// Assembly packing helpers (see pack_amd64.s). Strides are in bytes.

//go:noescape
func packCopy64(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)

//go:noescape
func packCopy24(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)

//go:noescape
func packCopy48(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)

//go:noescape
func packA6S(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)

//go:noescape
func packA6D(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)

//go:noescape
func packBT16S(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)

//go:noescape
func packBT8D(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
