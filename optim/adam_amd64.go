//go:build amd64 && !purego

package optim

import (
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/gradus-ml/gradus/tensor"
)

// hasAVX2 reports whether adamAVX2F32 can run here.
var hasAVX2 = cpu.X86.HasAVX2

// adamAVX2F32 is implemented in adam_amd64.s: adamPlain on float32 blocks
// of 8, returning how many leading elements it updated.
//
//go:noescape
func adamAVX2F32(p, grad, mom, sq *float32, n int, k *adamConsts[float32]) int

// adamBlocks runs the vector Adam update over the leading elements of the
// float32 slices (all as long as p) and returns how many it updated.
func adamBlocks[T tensor.Float](p, g, m, v []T, k *adamConsts[T]) int {
	if !hasAVX2 || len(p) < 8 {
		return 0
	}
	if _, ok := any(k).(*adamConsts[float32]); !ok {
		return 0
	}
	f := func(s []T) *float32 { return (*float32)(unsafe.Pointer(unsafe.SliceData(s))) }
	return adamAVX2F32(f(p), f(g), f(m), f(v), len(p), (*adamConsts[float32])(unsafe.Pointer(k)))
}
