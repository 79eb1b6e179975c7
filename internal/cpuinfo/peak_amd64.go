package cpuinfo

import "golang.org/x/sys/cpu"

// The probes of fma_amd64.s: n iterations of 48 independent FMAs.
func fmaLoopPS(n int)
func fmaLoopPD(n int)
func fmaLoopPS512(n int)
func fmaLoopPD512(n int)

var vectorBits = func() int {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasFMA:
		return 512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return 256
	}
	return 0
}()

// fmaLoop returns the probe for the width and precision, nil if the CPU
// lacks it.
func fmaLoop(bits int, f64 bool) func(int) {
	switch {
	case bits == 256 && vectorBits >= 256 && f64:
		return fmaLoopPD
	case bits == 256 && vectorBits >= 256:
		return fmaLoopPS
	case bits == 512 && vectorBits >= 512 && f64:
		return fmaLoopPD512
	case bits == 512 && vectorBits >= 512:
		return fmaLoopPS512
	}
	return nil
}
