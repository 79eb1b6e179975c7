package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// chooseArch picks the virtual architecture to compile for on a device of
// compute capability major.minor: the device's own (90 for 9.0) when
// NVRTC supports it, else the newest older one NVRTC supports, whose PTX
// the driver compiles for the device at load time. supported lists
// NVRTC's architectures (nvrtcGetSupportedArchs), in any order.
func chooseArch(major, minor int, supported []int) (int, error) {
	cc := 10*major + minor
	best := -1
	for _, a := range supported {
		if a <= cc && a > best {
			best = a
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("cuda: NVRTC supports none of the architectures up to compute_%d (it has %v)", cc, supported)
	}
	return best, nil
}

// compileOptions are NVRTC's options for arch. --fmad=false keeps a·b + c
// two roundings, as the CPU kernels compute it (docs/design.md: no FMA
// contraction in elementwise kernels), so the GPU's elementwise results
// equal the CPU's wherever the operations are correctly rounded.
func compileOptions(arch int) []string {
	return []string{fmt.Sprintf("--gpu-architecture=compute_%d", arch), "--fmad=false"}
}

// ptxCache keeps compiled PTX on disk, one file per key; dir "" disables
// it.
type ptxCache struct{ dir string }

// defaultCache is os.UserCacheDir()/gradus/cuda, or no cache where the
// user has no cache directory.
func defaultCache() ptxCache {
	d, err := os.UserCacheDir()
	if err != nil {
		return ptxCache{}
	}
	return ptxCache{filepath.Join(d, "gradus", "cuda")}
}

// cacheKey identifies the PTX of src compiled with opts by the NVRTC
// version given: a SHA-256 of all three, in hex.
func cacheKey(src, nvrtcVersion string, opts []string) string {
	h := sha256.New()
	for _, s := range slices.Concat([]string{src, nvrtcVersion}, opts) {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// load returns the cached PTX of key, if any.
func (c ptxCache) load(key string) ([]byte, bool) {
	if c.dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, key+".ptx"))
	if err != nil || !strings.Contains(string(b), ".version") {
		return nil, false
	}
	return b, true
}

// store writes ptx under key atomically (a temporary file renamed into
// place), so a concurrent reader never sees half a file.
func (c ptxCache) store(key string, ptx []byte) error {
	if c.dir == "" {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, key+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(ptx)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(c.dir, key+".ptx"))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
