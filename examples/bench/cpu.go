package main

import (
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// cpuFeatures names the architecture and the vector features that decide
// which kernels run, for the report header.
func cpuFeatures() string {
	var fs []string
	switch runtime.GOARCH {
	case "amd64":
		for _, f := range []struct {
			name string
			has  bool
		}{{"avx2", cpu.X86.HasAVX2}, {"fma", cpu.X86.HasFMA}, {"avx512f", cpu.X86.HasAVX512F}} {
			if f.has {
				fs = append(fs, f.name)
			}
		}
	case "arm64":
		fs = append(fs, "asimd")
	}
	return runtime.GOARCH + " " + strings.Join(fs, ",")
}
