//go:build linux && (amd64 || arm64)

package cuda

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeDriver builds testdata/fakecuda.c into a libcuda.so.1 with the C
// compiler and returns a search that finds only it. The fake checks, call
// by call, that the calling thread has the context current, so these
// tests exercise the purego bindings, the argument passing and Driver.do
// for real, without a GPU.
func fakeDriver(t *testing.T) Search {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) to build the fake libcuda.so.1")
	}
	// Under qemu (make test-arm64) cc builds for the host, not for the test.
	target, _ := exec.Command(cc, "-dumpmachine").Output()
	if want := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]; !strings.HasPrefix(string(target), want) {
		t.Skipf("cc builds for %s, this test runs on %s", strings.TrimSpace(string(target)), runtime.GOARCH)
	}
	src, err := os.ReadFile("testdata/fakecuda.c")
	if err != nil {
		t.Fatal(err)
	}
	var d driverAPI
	for _, s := range d.symbols() {
		if !strings.Contains(string(src), " "+s.name+"(") {
			t.Fatalf("testdata/fakecuda.c lacks %s", s.name)
		}
	}
	dir := t.TempDir()
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(dir, "libcuda.so.1"), "testdata/fakecuda.c").CombinedOutput()
	if err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return Search{Env: []string{dir}}
}

func TestFakeDriverNoDevice(t *testing.T) {
	s := fakeDriver(t)
	t.Setenv("FAKE_CUINIT", "100")
	_, err := OpenDevice(s, 0)
	if err == nil || !strings.Contains(err.Error(), "cuInit: CUDA_ERROR_NO_DEVICE (100)") || !errors.Is(err, ErrNoDriver) {
		t.Errorf("error = %v, want cuInit: CUDA_ERROR_NO_DEVICE (100) matching ErrNoDriver", err)
	}
	t.Setenv("FAKE_CUINIT", "999")
	_, err = OpenDevice(s, 0)
	if err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_UNKNOWN (999)") || errors.Is(err, ErrNoDriver) {
		t.Errorf("error = %v, want CUDA_ERROR_UNKNOWN (999) not matching ErrNoDriver", err)
	}
	t.Setenv("FAKE_CUINIT", "0")
	if _, err = OpenDevice(s, 1); err == nil || !strings.Contains(err.Error(), "device 1 does not exist: 1 device(s) present") {
		t.Errorf("OpenDevice(1) = %v", err)
	}
}

func TestFakeDriverMemory(t *testing.T) {
	d, err := OpenDevice(fakeDriver(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	major, minor := d.ComputeCapability()
	if d.Name() != "Fake GPU" || major != 9 || minor != 0 || d.TotalMemory() != 80<<30 || d.Version() != 13000 || d.DeviceCount() != 1 {
		t.Errorf("device: %q, %d.%d, %d bytes, version %d, %d devices", d.Name(), major, minor, d.TotalMemory(), d.Version(), d.DeviceCount())
	}
	if free, total, err := d.MemoryInfo(); err != nil || free != 70<<30 || total != 80<<30 {
		t.Errorf("MemoryInfo = %d, %d, %v", free, total, err)
	}
	// Goroutines on any threads: each call must find the context current.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for g := range errs {
		wg.Go(func() { errs[g] = roundTrip(d, g) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	a, _ := d.Alloc(100)
	ptr := a.Ptr()
	d.Release(a)
	if b, _ := d.Alloc(200); b.Ptr() != ptr {
		t.Errorf("Alloc after Release got %#x, want the cached %#x", b.Ptr(), ptr)
	}
	if _, err := d.Alloc(2 << 30); err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_OUT_OF_MEMORY (2)") {
		t.Errorf("Alloc(2 GiB) = %v, want CUDA_ERROR_OUT_OF_MEMORY", err)
	}
	if _, err := d.Alloc(0); err == nil {
		t.Error("Alloc(0) succeeded")
	}
	small, _ := d.Alloc(8)
	if err := Upload(d, small, make([]float64, 1000)); err == nil {
		t.Error("Upload beyond the buffer succeeded")
	}
	if _, err := d.Kernels(); err == nil {
		t.Error("Kernels succeeded without NVRTC")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Synchronize(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Synchronize after Close = %v", err)
	}
}

// roundTrip uploads, copies, zeroes part of and downloads float32 and
// float64 data of a length depending on g.
func roundTrip(d *Driver, g int) error {
	n := 1000 + 37*g
	x32, x64 := make([]float32, n), make([]float64, n)
	for i := range x32 {
		x32[i], x64[i] = float32(i)*0.5-7, float64(i)*0.25+float64(g)
	}
	a, err := d.Alloc(8 * n)
	if err != nil {
		return err
	}
	b, err := d.Alloc(8 * n)
	if err != nil {
		return err
	}
	defer d.Release(a)
	defer d.Release(b)
	if err := Upload(d, a, x32); err != nil {
		return err
	}
	if err := d.CopyDevice(b, a, 4*n); err != nil {
		return err
	}
	if err := d.Zero(b, 4*10); err != nil {
		return err
	}
	y32 := make([]float32, n)
	if err := Download(d, y32, b); err != nil {
		return err
	}
	want32 := slices.Clone(x32)
	clear(want32[:10])
	if !slices.Equal(y32, want32) {
		return errors.New("float32 round trip differs")
	}
	if err := Upload(d, a, x64); err != nil {
		return err
	}
	y64 := make([]float64, n)
	if err := Download(d, y64, a); err != nil {
		return err
	}
	if !slices.Equal(y64, x64) {
		return errors.New("float64 round trip differs")
	}
	return d.Synchronize()
}
