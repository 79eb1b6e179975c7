//go:build linux && (amd64 || arm64)

package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenNotFound forces a search that cannot find the driver (an empty
// GRADUS_CUDA_PATH folder, no loader, no standard folders) on any
// machine: the error names the library and the folder searched, and
// matches ErrNoDriver.
func TestOpenNotFound(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvPath, dir)
	s := DefaultSearch()
	s.Loader, s.Standard = false, nil
	d, err := OpenDevice(s, 0)
	if d != nil || err == nil {
		t.Fatalf("OpenDevice found a driver in an empty folder: %v", d)
	}
	want := "cuda unavailable: libcuda.so.1 (CUDA driver) not found in GRADUS_CUDA_PATH=[" + dir + "] or in []"
	if err.Error() != want {
		t.Errorf("error =\n%q, want\n%q", err, want)
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Error("the error does not match ErrNoDriver")
	}
}

// TestOpenBadLibrary: a libcuda.so.1 that is not a shared object is a
// fault to report with the loader's reason, not a missing driver.
func TestOpenBadLibrary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "libcuda.so.1")
	if err := os.WriteFile(path, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenDevice(Search{Env: []string{dir}}, 0)
	if err == nil || !strings.Contains(err.Error(), "found but not usable") || !strings.Contains(err.Error(), path) {
		t.Errorf("error = %v, want one naming %s and the loader's reason", err, path)
	}
	if errors.Is(err, ErrNoDriver) {
		t.Error("a broken library matches ErrNoDriver")
	}
}
