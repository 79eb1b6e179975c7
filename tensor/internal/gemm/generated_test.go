package gemm

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestGeneratedKernelsCurrent checks that the committed assembly is what
// its generator writes today, so that an edit to one is not lost by the
// next `go generate`.
func TestGeneratedKernelsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	if runtime.GOARCH != "amd64" {
		// Under an emulator (make test-arm64) the go command would build
		// the generators for the emulated architecture; the amd64 run
		// checks both files.
		t.Skip("checked on amd64")
	}
	for _, c := range []struct{ gen, out string }{
		{"gen_kernel_amd64.go", "kernel_amd64.s"},
		{"gen_kernel_arm64.go", "kernel_arm64.s"},
	} {
		got, err := exec.Command("go", "run", c.gen).Output()
		if err != nil {
			t.Fatalf("go run %s: %v", c.gen, err)
		}
		want, err := os.ReadFile(c.out)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is not the output of %s: run go generate", c.out, c.gen)
		}
	}
}
