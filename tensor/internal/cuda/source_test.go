package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func TestSourceHasEveryKernel(t *testing.T) {
	src := Source()
	if !strings.HasPrefix(src, "// ---- kernels/common.cu\n") {
		t.Errorf("Source does not start with common.cu: %.40q", src)
	}
	re := regexp.MustCompile(`extern "C" __global__ void (\w+)\(`)
	var defined []string
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		defined = append(defined, m[1])
	}
	// The macros define name##_f32: expand the macro uses too.
	use := regexp.MustCompile(`(?m)^(UNARY|BINARY|SCALAR)\((\w+), \w+\)|^ROWWISE\(\w+, (f32|f64)\)|^GEOM_KERNELS\(\w+, (f32|f64)\)|^OPTIM_KERNELS\(\w+, (f32|f64)\)`)
	for _, m := range use.FindAllStringSubmatch(src, -1) {
		switch {
		case m[2] != "":
			defined = append(defined, m[2]+"_f32", m[2]+"_f64")
		case m[3] != "":
			for _, op := range RowOps {
				defined = append(defined, op+"_"+m[3])
			}
		case m[5] != "":
			for _, op := range UpdateOps {
				defined = append(defined, op+"_"+m[5])
			}
		default:
			for _, op := range ConvOps {
				defined = append(defined, op+"_"+m[4])
			}
		}
	}
	for _, name := range kernelNames() {
		if !slices.Contains(defined, name) {
			t.Errorf("kernel %s is listed but not defined in kernels/*.cu", name)
		}
	}
	for _, name := range defined {
		if !strings.Contains(name, "##") && !slices.Contains(kernelNames(), name) {
			t.Errorf("kernel %s is defined but not listed", name)
		}
	}
}

func TestStridesArg(t *testing.T) {
	if unsafe.Sizeof(stridesArg{}) != 8*(1+3*MaxDims) {
		t.Fatalf("stridesArg is %d bytes; struct Strides has %d", unsafe.Sizeof(stridesArg{}), 8*(1+3*MaxDims))
	}
	s, n, err := newStridesArg([]int{2, 3}, []int{3, 1}, []int{0, 1}, 6, 3)
	if err != nil || n != 6 || s.ndim != 2 || s.shape[1] != 3 || s.a[0] != 3 || s.b[0] != 0 {
		t.Errorf("newStridesArg = %+v, %d, %v", s, n, err)
	}
	if _, n, err := newStridesArg([]int{2, 0}, []int{1, 1}, []int{0, 0}, 0, 1); n != 0 || err != nil {
		t.Errorf("an empty shape: %d elements, %v", n, err)
	}
	for _, c := range []struct{ shape, as, bs []int }{
		{[]int{2, 3}, []int{3, 1}, []int{1}},                                     // stride count
		{[]int{2, 3}, []int{3, 1}, []int{3, 1}},                                  // b too small (3 elements)
		{[]int{2, -1}, []int{1, 1}, []int{0, 0}},                                 // negative size
		{[]int{2, 3}, []int{-3, 1}, []int{0, 1}},                                 // negative stride
		{make([]int, MaxDims+1), make([]int, MaxDims+1), make([]int, MaxDims+1)}, // too many dims
	} {
		if _, _, err := newStridesArg(c.shape, c.as, c.bs, 6, 3); err == nil {
			t.Errorf("newStridesArg(%v, %v, %v) accepted", c.shape, c.as, c.bs)
		}
	}
}

func TestBroadcastStrides(t *testing.T) {
	for _, c := range []struct{ in, out, want []int }{
		{[]int{3, 4, 5}, []int{3, 4, 5}, []int{20, 5, 1}},
		{[]int{4, 1}, []int{3, 4, 5}, []int{0, 1, 0}},
		{[]int{5}, []int{3, 4, 5}, []int{0, 0, 1}},
		{[]int{}, []int{2, 2}, []int{0, 0}},
		{[]int{1, 1}, []int{1, 1}, []int{0, 0}},
	} {
		got, err := BroadcastStrides(c.in, c.out)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("BroadcastStrides(%v, %v) = %v, %v; want %v", c.in, c.out, got, err, c.want)
		}
	}
	for _, c := range [][2][]int{{{3}, {4}}, {{2, 3}, {3}}} {
		if _, err := BroadcastStrides(c[0], c[1]); err == nil {
			t.Errorf("BroadcastStrides(%v, %v) accepted", c[0], c[1])
		}
	}
}

func TestChooseArch(t *testing.T) {
	nvrtc13 := []int{75, 80, 86, 87, 89, 90, 100, 103, 120}
	for _, c := range []struct {
		major, minor int
		archs        []int
		want         int
	}{
		{9, 0, nvrtc13, 90},
		{8, 6, nvrtc13, 86},
		{12, 1, nvrtc13, 120}, // newer than NVRTC knows: its newest, JIT-compiled
		{9, 0, []int{50, 60, 70, 80}, 80},
	} {
		got, err := chooseArch(c.major, c.minor, c.archs)
		if err != nil || got != c.want {
			t.Errorf("chooseArch(%d.%d) = %d, %v; want %d", c.major, c.minor, got, err, c.want)
		}
	}
	if _, err := chooseArch(7, 0, nvrtc13); err == nil || !strings.Contains(err.Error(), "compute_70") {
		t.Errorf("chooseArch(7.0) with NVRTC 13 = %v, want an error naming compute_70", err)
	}
	if o := compileOptions(90); !slices.Equal(o, []string{"--gpu-architecture=compute_90", "--fmad=false"}) {
		t.Errorf("compileOptions(90) = %q", o)
	}
}

func TestPTXCache(t *testing.T) {
	k := cacheKey("src", "13.0", compileOptions(90))
	for _, other := range []string{
		cacheKey("src2", "13.0", compileOptions(90)),
		cacheKey("src", "12.8", compileOptions(90)),
		cacheKey("src", "13.0", compileOptions(80)),
		cacheKey("src", "13.0--gpu-architecture=compute_90", []string{"--fmad=false"}),
	} {
		if other == k {
			t.Errorf("cache keys collide: %s", k)
		}
	}
	c := ptxCache{filepath.Join(t.TempDir(), "gradus", "cuda")}
	if _, ok := c.load(k); ok {
		t.Error("load from an empty cache succeeded")
	}
	ptx := []byte(".version 9.0\n.target sm_90\n")
	if err := c.store(k, ptx); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.load(k); !ok || string(got) != string(ptx) {
		t.Errorf("load = %q, %v", got, ok)
	}
	if err := os.WriteFile(filepath.Join(c.dir, k+".ptx"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.load(k); ok {
		t.Error("a file that is not PTX was loaded")
	}
	entries, _ := os.ReadDir(c.dir)
	if len(entries) != 1 {
		t.Errorf("cache folder holds %d files, want 1 (no temporaries left)", len(entries))
	}
	if err := (ptxCache{}).store(k, ptx); err != nil {
		t.Errorf("storing with no cache folder = %v", err)
	}
	t.Setenv("XDG_CACHE_HOME", "/cache")
	if d := defaultCache().dir; d != "/cache/gradus/cuda" {
		t.Errorf("defaultCache = %q", d)
	}
}
