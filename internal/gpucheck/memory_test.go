//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

// TestUnreachableTensorsFreed: a loop that makes GPU tensors and drops
// them must not run the device out of memory because the collector,
// paced by the Go heap, has not yet handed their memory back; a device
// filled by live tensors must still fail with a clear error. It runs on
// the fake device (make cuda-fake sets GRADUS_CUDA_FAKE=1), in a child
// process whose device holds 64 MiB (FAKE_CUDA_MEMORY).
func TestUnreachableTensorsFreed(t *testing.T) {
	if os.Getenv("GRADUS_CUDA_FAKE") != "1" {
		t.Skip("needs the fake device's memory cap (make cuda-fake)")
	}
	if os.Getenv("GRADUS_GPUCHECK_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnreachableTensorsFreed$", "-test.v")
		cmd.Env = append(os.Environ(), "GRADUS_GPUCHECK_CHILD=1", "FAKE_CUDA_MEMORY=67108864")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestUnreachableTensorsFreed") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	d := device(t)
	const n = 1 << 20   // 4 MiB of float32
	for i := range 64 { // 256 MiB in all, four times the device
		x := tensor.NewOn(d, tensor.Float32, n)
		if got := tensor.Sum(x, nil, false).Item(); got != 0 {
			t.Fatalf("temporary %d sums to %v, want 0", i, got)
		}
	}
	var live []*tensor.Tensor
	msg := func() (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg = r.(error).Error()
			}
		}()
		for range 32 { // 128 MiB held at once
			live = append(live, tensor.NewOn(d, tensor.Float32, n))
		}
		return ""
	}()
	if !strings.Contains(msg, "NewOn") || !strings.Contains(msg, "[1048576]") || !strings.Contains(msg, "OUT_OF_MEMORY") {
		t.Fatalf("128 MiB of live tensors on a 64 MiB device: error %q, want NewOn's out-of-memory error naming the shape", msg)
	}
	if len(live) < 10 || len(live) > 16 {
		t.Errorf("%d live 4 MiB tensors fitted on a 64 MiB device, want 10-16", len(live))
	}
}
