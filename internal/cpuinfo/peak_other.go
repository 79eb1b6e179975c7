//go:build !amd64

package cpuinfo

import "runtime"

var vectorBits = map[bool]int{true: 128}[runtime.GOARCH == "arm64"]

// fmaLoop has no probe outside amd64 yet: PeakGFLOPS reports 0.
func fmaLoop(int, bool) func(int) { return nil }
