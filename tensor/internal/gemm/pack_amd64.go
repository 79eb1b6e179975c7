//go:build amd64

package gemm

import "unsafe"

// asmPack is true: the packers below serve the AVX2 kernels (64-byte B rows)
// and the AVX-512 ones (128-byte B rows).
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

//go:noescape
func packCopy128(n int, src unsafe.Pointer, ld int, dst unsafe.Pointer)

//go:noescape
func packBT32S(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)

//go:noescape
func packBT16D(n4 int, src unsafe.Pointer, ld int, dst unsafe.Pointer)
