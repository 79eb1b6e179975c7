package cuda

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// makeTree creates the directories and empty files of paths (a path
// ending in "/" is a directory) under root.
func makeTree(t *testing.T, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStandardDirs(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root,
		"usr/local/cuda/lib64/",
		"usr/local/cuda/targets/x86_64-linux/lib/",
		"usr/local/cuda-12.9/lib64/",
		"usr/local/cuda-12.10/lib64/",
		"usr/lib/x86_64-linux-gnu/",
		"usr/local/lib/python3.11/dist-packages/nvidia/cublas/lib/",
		"usr/local/lib/python3.11/dist-packages/nvidia/cu13/lib/",
		"usr/local/lib/python3.11/dist-packages/nvidia/cudnn/include/", // not a lib folder
		"usr/local/lib/python3.11/dist-packages/torch/lib/",
		"venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/",
		"home/u/.local/lib/python3.10/site-packages/nvidia/cublas/lib/",
		"usr/lib64", // a file, not a directory
	)
	env := map[string]string{"VIRTUAL_ENV": filepath.Join(root, "venv"), "HOME": filepath.Join(root, "home/u")}
	got := standardDirs(root, func(k string) string { return env[k] })
	want := []string{
		"usr/local/cuda/lib64",
		"usr/local/cuda/targets/x86_64-linux/lib",
		"usr/local/cuda-12.10/lib64", // newest first
		"usr/local/cuda-12.9/lib64",
		"usr/lib/x86_64-linux-gnu",
		"usr/local/lib/python3.11/dist-packages/nvidia/cublas/lib",
		"usr/local/lib/python3.11/dist-packages/nvidia/cu13/lib",
		"usr/local/lib/python3.11/dist-packages/torch/lib",
		"venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib",
		"home/u/.local/lib/python3.10/site-packages/nvidia/cublas/lib",
	}
	for i := range want {
		want[i] = filepath.Join(root, want[i])
	}
	if !slices.Equal(got, want) {
		t.Errorf("standardDirs:\n got %q\nwant %q", got, want)
	}
}

func TestCandidates(t *testing.T) {
	root := t.TempDir()
	env, std := filepath.Join(root, "env"), filepath.Join(root, "std")
	makeTree(t, root,
		"env/libcublas.so.12.8.4.1", "env/libcublas.so.12", "env/libcublasLt.so.12",
		"std/libcublas.so.13", "std/libcublas.so.11.0", "std/libcublas.so.13.1.0.3",
		"std/libnvrtc.so.13", "std/libnvrtc-builtins.so.13.0",
	)
	s := Search{Env: []string{env, filepath.Join(root, "missing")}, Loader: true, Standard: []string{std}}
	var got []string
	for _, c := range candidates(libBLAS, s) {
		if c.loader {
			got = append(got, "loader:"+c.path)
		} else {
			got = append(got, strings.TrimPrefix(c.path, root+"/"))
		}
	}
	want := []string{
		"env/libcublas.so.12", "env/libcublas.so.12.8.4.1",
		"loader:libcublas.so.13", "loader:libcublas.so.12",
		"std/libcublas.so.13", "std/libcublas.so.13.1.0.3", "std/libcublas.so.11.0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("cuBLAS candidates:\n got %q\nwant %q", got, want)
	}
	nv := candidates(libNVRTC, Search{Standard: []string{std}})
	if len(nv) != 1 || nv[0].path != filepath.Join(std, "libnvrtc.so.13") {
		t.Errorf("NVRTC candidates = %v, want only std/libnvrtc.so.13 (not the builtins)", nv)
	}
	if c := candidates(libDriver, Search{Env: []string{env}}); len(c) != 0 {
		t.Errorf("driver candidates in a folder without libcuda: %v", c)
	}
}

func TestEnvDirs(t *testing.T) {
	if got := envDirs("/a::/b:"); !slices.Equal(got, []string{"/a", "/b"}) {
		t.Errorf("envDirs = %q", got)
	}
	t.Setenv(EnvPath, "/x/lib:/y")
	if got := DefaultSearch(); !slices.Equal(got.Env, []string{"/x/lib", "/y"}) || !got.Loader {
		t.Errorf("DefaultSearch = %+v", got)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		sign int
	}{
		{"cuda-12.10", "cuda-12.9", 1},
		{"libcublas.so.13", "libcublas.so.12.8.4.1", 1},
		{"python3.9", "python3.12", -1},
		{"a", "a", 0},
		{"lib.so.1", "lib.so.01", 0},
		{"abc", "abd", -1},
		{"x1", "x1a", -1},
	} {
		got := compareVersions(c.a, c.b)
		if (got > 0) != (c.sign > 0) || (got < 0) != (c.sign < 0) {
			t.Errorf("compareVersions(%q, %q) = %d, want sign %d", c.a, c.b, got, c.sign)
		}
	}
}

func TestNotFoundMessage(t *testing.T) {
	msg := notFound(libDriver, Search{Env: []string{"/e"}, Loader: true, Standard: []string{"/s1", "/s2"}})
	want := "libcuda.so.1 (CUDA driver) not found in GRADUS_CUDA_PATH=[/e], by the dynamic loader or in [/s1 /s2]"
	if msg != want {
		t.Errorf("notFound =\n%q, want\n%q", msg, want)
	}
}
