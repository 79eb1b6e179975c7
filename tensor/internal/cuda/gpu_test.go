//go:build linux && (amd64 || arm64)

package cuda_test

// The checks a GPU session runs (make gpu-check; docs/gpu.md). Each test
// opens the driver and skips, saying why, only when Open reports that the
// machine has no driver or no device (cuda.ErrNoDriver); with
// GRADUS_CUDA_REQUIRE=1, as out/gpu/run.sh sets it, that fails instead, so
// a GPU run never passes by skipping.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

var (
	openOnce sync.Once
	driver   *cuda.Driver
	openErr  error
)

// device returns the shared Driver, skipping the test on a machine
// without CUDA.
func device(tb testing.TB) *cuda.Driver {
	tb.Helper()
	openOnce.Do(func() { driver, openErr = cuda.Open() })
	if errors.Is(openErr, cuda.ErrNoDriver) && os.Getenv("GRADUS_CUDA_REQUIRE") == "" {
		tb.Skipf("no CUDA driver or device on this machine: %v", openErr)
	}
	if openErr != nil {
		tb.Fatalf("cuda.Open: %v", openErr)
	}
	return driver
}

func kernels(tb testing.TB) (*cuda.Driver, *cuda.Kernels) {
	d := device(tb)
	k, err := d.Kernels()
	if err != nil {
		tb.Fatalf("compiling and loading the kernels: %v", err)
	}
	return d, k
}

// dt maps a tensor dtype to the kernels'.
func dt(t tensor.DType) cuda.DType {
	if t == tensor.Float32 {
		return cuda.F32
	}
	return cuda.F64
}

// upload copies a contiguous tensor to a new device buffer.
func upload(tb testing.TB, d *cuda.Driver, x *tensor.Tensor) *cuda.Buffer {
	tb.Helper()
	x = x.Contiguous()
	b, err := d.Alloc(max(x.Size(), 1) * x.DType().Size())
	if err == nil {
		if x.DType() == tensor.Float32 {
			err = cuda.Upload(d, b, x.Float32s())
		} else {
			err = cuda.Upload(d, b, x.Float64s())
		}
	}
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// download copies a device buffer into a new tensor of the shape given;
// it waits for the queued kernels and reports their failures.
func download(tb testing.TB, d *cuda.Driver, b *cuda.Buffer, t tensor.DType, shape ...int) *tensor.Tensor {
	tb.Helper()
	out := tensor.New(t, shape...)
	var err error
	if t == tensor.Float32 {
		err = cuda.Download(d, out.Float32s(), b)
	} else {
		err = cuda.Download(d, out.Float64s(), b)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// tol is a comparison's tolerance: |got − want| ≤ atol + rtol·|want|.
// Zero is bit-for-bit (NaN equal to NaN).
type tol struct{ rtol, atol float64 }

var exact = tol{}

// Tolerances. float32: the CUDA Math API's expf, logf, tanhf, erfcf are
// within 1 to 4 ulp (2⁻²⁴ ≈ 6e-8 relative) and so are the CPU's kernels,
// so 2e-6 (about 32 ulp) is "within float32 rounding" with margin; sums
// over a row in a different order add about √cols ulp. float64 likewise
// with 2⁻⁵³.
var (
	tolMath = map[tensor.DType]tol{tensor.Float32: {2e-6, 1e-7}, tensor.Float64: {1e-13, 1e-15}}
	tolRow  = map[tensor.DType]tol{tensor.Float32: {1e-5, 1e-7}, tensor.Float64: {1e-12, 1e-15}}
)

// compare fails the test at the first element of got outside tl of want.
func compare(tb testing.TB, what string, got, want *tensor.Tensor, tl tol) {
	tb.Helper()
	w := want.Contiguous().Values()
	bound := make([]float64, len(w))
	for i := range w {
		bound[i] = tl.atol + tl.rtol*math.Abs(w[i])
	}
	compareBound(tb, what, got, want, bound)
}

// compareBound fails the test at the first element i of got farther than
// bound[i] from want (NaN equals NaN).
func compareBound(tb testing.TB, what string, got, want *tensor.Tensor, bound []float64) {
	tb.Helper()
	g, w := got.Values(), want.Contiguous().Values()
	if len(g) != len(w) {
		tb.Fatalf("%s: %d values, want %d", what, len(g), len(w))
	}
	worst := 0.0
	for i := range g {
		if math.IsNaN(w[i]) && math.IsNaN(g[i]) || g[i] == w[i] {
			continue
		}
		d := math.Abs(g[i] - w[i])
		if !(d <= bound[i]) {
			tb.Fatalf("%s: element %d = %v, want %v (|Δ| %.3g > %.3g)", what, i, g[i], w[i], d, bound[i])
		}
		worst = max(worst, d/bound[i])
	}
	tb.Logf("%s: ok (worst |Δ| at %.2f of the tolerance)", what, worst)
}

// sample returns n values of dtype t spread over [lo, hi] in a scrambled
// order, deterministically.
func sample(t tensor.DType, n int, lo, hi float64, shape ...int) *tensor.Tensor {
	v := make([]float64, n)
	for i := range v {
		j := (i*7919 + 13) % n
		v[i] = lo + (hi-lo)*float64(j)/float64(max(n-1, 1))
	}
	return tensor.FromValues(t, v, shape...)
}

var dtypes = []tensor.DType{tensor.Float32, tensor.Float64}

func TestDeviceInfo(t *testing.T) {
	d := device(t)
	major, minor := d.ComputeCapability()
	free, total, err := d.MemoryInfo()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device %d of %d: %s, compute capability %d.%d, %.1f GiB (%.1f GiB free); driver CUDA %d.%d at %s",
		d.Ordinal(), d.DeviceCount(), d.Name(), major, minor, float64(total)/(1<<30), float64(free)/(1<<30),
		d.Version()/1000, d.Version()%1000/10, d.LibraryPath())
	if v, path, err := d.NVRTCVersion(); err != nil {
		t.Errorf("NVRTC: %v", err)
	} else {
		t.Logf("NVRTC %s at %s", v, path)
	}
	if b, err := d.BLAS(); err != nil {
		t.Errorf("cuBLAS: %v", err)
	} else {
		v, path := b.Version()
		t.Logf("cuBLAS %d at %s", v, path)
	}
	if d.Name() == "" || major < 3 || d.TotalMemory() <= 0 || free <= 0 || free > total {
		t.Errorf("implausible device: %q, %d.%d, %d bytes (%d of %d free)", d.Name(), major, minor, d.TotalMemory(), free, total)
	}
}

func TestMemoryRoundTrip(t *testing.T) {
	d := device(t)
	for _, ty := range dtypes {
		x := sample(ty, 100003, -5, 5, 100003)
		b := upload(t, d, x)
		c, err := d.Alloc(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if err := d.CopyDevice(c, b, x.Size()*ty.Size()); err != nil {
			t.Fatal(err)
		}
		if err := d.Zero(c, 5*ty.Size()); err != nil {
			t.Fatal(err)
		}
		want := x.Clone()
		for i := range 5 {
			want.SetAt(0, i)
		}
		compare(t, fmt.Sprintf("upload, copy, zero, download %v", ty), download(t, d, c, ty, x.Size()), want, exact)
		ptr := c.Ptr()
		d.Release(c)
		if e, _ := d.Alloc(b.Bytes()); e.Ptr() != ptr {
			t.Errorf("Alloc after Release: %#x, want the cached %#x", e.Ptr(), ptr)
		}
		d.Release(b)
	}
	if err := d.Trim(); err != nil || d.Cached() != 0 {
		t.Errorf("Trim: %v, %d bytes still cached", err, d.Cached())
	}
}

// TestCompileError: NVRTC's log comes back with a compilation error.
func TestCompileError(t *testing.T) {
	d := device(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, err := d.Compile(`extern "C" __global__ void broken(float* x) { x[0] = undefined_name; }`, "broken.cu")
	if err == nil || !strings.Contains(err.Error(), "nvrtcCompileProgram") || !strings.Contains(err.Error(), "undefined_name") {
		t.Errorf("Compile(broken) = %v, want NVRTC's log naming undefined_name", err)
	}
	src := `extern "C" __global__ void ok(float* x) { x[0] = 1; }`
	if _, err := d.Compile(src, "ok.cu"); err != nil {
		t.Fatal(err)
	}
	dir, _ := os.UserCacheDir()
	if es, _ := os.ReadDir(dir + "/gradus/cuda"); len(es) != 1 {
		t.Errorf("the PTX cache holds %d files after one compilation, want 1", len(es))
	}
	if _, err := d.Compile(src, "ok.cu"); err != nil {
		t.Errorf("Compile from the cache: %v", err)
	}
}
