package cuda

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// EnvPath names the environment variable whose colon-separated directories
// are searched first for the CUDA libraries.
const EnvPath = "GRADUS_CUDA_PATH"

// A library is one shared object the package binds: what it is, for
// messages, and the file names it may have, preferred first. Names ending
// in ".*" are globbed in each directory (newest version first) and never
// passed to the dynamic loader.
type library struct {
	what  string
	names []string
}

var (
	libDriver = library{"CUDA driver", []string{"libcuda.so.1"}}
	libBLAS   = library{"cuBLAS", []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.*"}}
	libBLASLt = library{"cuBLASLt", []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.*"}}
	libNVRTC  = library{"NVRTC", []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.*"}}

	// cuSOLVER (solver.go) and what it links against besides cuBLAS:
	// CUDA 13's libcusolver.so.12, CUDA 12's libcusolver.so.11.
	libSolver    = library{"cuSOLVER", []string{"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so.*"}}
	libSparse    = library{"cuSPARSE", []string{"libcusparse.so.12", "libcusparse.so.*"}}
	libNVJitLink = library{"nvJitLink", []string{"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so.*"}}
)

// Search says where Open looks for the libraries, in this order: the
// directories of Env, the dynamic loader (LD_LIBRARY_PATH, the loader's
// cache, its default directories) when Loader is set, then Standard.
type Search struct {
	Env      []string // from GRADUS_CUDA_PATH
	Loader   bool     // ask the dynamic loader by file name
	Standard []string // where CUDA installations usually put them
}

// DefaultSearch is the search Open uses: GRADUS_CUDA_PATH, the dynamic
// loader and the standard directories of the running system.
func DefaultSearch() Search {
	return Search{Env: envDirs(os.Getenv(EnvPath)), Loader: true, Standard: standardDirs("/", os.Getenv)}
}

// envDirs splits a colon-separated list of directories, dropping empty
// entries.
func envDirs(v string) []string {
	var dirs []string
	for _, d := range strings.Split(v, ":") {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// standardDirs lists the directories where CUDA libraries are usually
// installed, under root ("/" on a real system; tests pass a fake tree): the
// toolkit's lib64 and targets/*/lib, the distributions' library
// directories, and the lib folders of NVIDIA's pip wheels (nvidia/*/lib,
// which PyTorch depends on) and of PyTorch itself in every site-packages
// found. Only directories that exist are returned, each once, in search
// order. getenv supplies VIRTUAL_ENV, CONDA_PREFIX and HOME.
func standardDirs(root string, getenv func(string) string) []string {
	patterns := []string{
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/*/lib",
		"/usr/local/cuda-*/lib64",
		"/usr/local/cuda-*/targets/*/lib",
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib/aarch64-linux-gnu",
		"/usr/lib64",
		"/usr/lib/wsl/lib",
		"/opt/conda/lib",
	}
	sites := []string{
		"/usr/local/lib/python3*/dist-packages",
		"/usr/local/lib/python3*/site-packages",
		"/usr/lib/python3/dist-packages",
		"/usr/lib/python3*/site-packages",
		"/opt/conda/lib/python3*/site-packages",
	}
	for i, p := range patterns {
		patterns[i] = filepath.Join(root, p)
	}
	for i, p := range sites {
		sites[i] = filepath.Join(root, p)
	}
	// The environment's prefixes are real paths, never under root.
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := getenv(v); p != "" {
			sites = append(sites, filepath.Join(p, "lib/python3*/site-packages"))
		}
	}
	if h := getenv("HOME"); h != "" {
		sites = append(sites, filepath.Join(h, ".local/lib/python3*/site-packages"))
	}
	for _, s := range sites {
		patterns = append(patterns, s+"/nvidia/*/lib", s+"/torch/lib")
	}
	var dirs []string
	for _, p := range patterns {
		matches, _ := filepath.Glob(p) // the patterns are well formed
		// Newest first: cuda-13.0 before cuda-12.4, python3.12 before 3.10.
		slices.SortStableFunc(matches, func(a, b string) int { return compareVersions(b, a) })
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() && !slices.Contains(dirs, m) {
				dirs = append(dirs, m)
			}
		}
	}
	return dirs
}

// compareVersions orders strings as text except that runs of digits
// compare as numbers, so "cuda-12.10" sorts after "cuda-12.9".
func compareVersions(a, b string) int {
	for a != "" && b != "" {
		na, ra := leadingDigits(a)
		nb, rb := leadingDigits(b)
		if na != "" && nb != "" {
			if c := numCompare(na, nb); c != 0 {
				return c
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// numCompare compares two decimal digit strings by value.
func numCompare(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// candidate is one place to try: a file path, or a bare name for the
// dynamic loader.
type candidate struct {
	path   string
	loader bool
}

// candidates lists, in order, the files to dlopen for lib under s: every
// existing file of lib's names in the Env directories, then lib's plain
// names for the loader, then the files in the Standard directories.
func candidates(lib library, s Search) []candidate {
	var out []candidate
	inDirs := func(dirs []string) {
		for _, d := range dirs {
			for _, p := range filesIn(d, lib.names) {
				out = append(out, candidate{path: p})
			}
		}
	}
	inDirs(s.Env)
	if s.Loader {
		for _, n := range lib.names {
			if !strings.HasSuffix(n, "*") {
				out = append(out, candidate{path: n, loader: true})
			}
		}
	}
	inDirs(s.Standard)
	return out
}

// filesIn returns the files of dir matching names, in the names' order,
// each glob's matches newest version first.
func filesIn(dir string, names []string) []string {
	var out []string
	for _, n := range names {
		matches, _ := filepath.Glob(filepath.Join(dir, n))
		slices.SortStableFunc(matches, func(a, b string) int { return compareVersions(b, a) })
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && !st.IsDir() && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// notFound describes a failed search for lib: the first name and every
// place searched.
func notFound(lib library, s Search) string {
	msg := lib.names[0] + " (" + lib.what + ") not found in " + EnvPath + "=[" + strings.Join(s.Env, " ") + "]"
	if s.Loader {
		msg += ", by the dynamic loader"
	}
	return msg + " or in [" + strings.Join(s.Standard, " ") + "]"
}
