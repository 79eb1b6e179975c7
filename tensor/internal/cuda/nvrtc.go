//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// nvrtcAPI holds the NVRTC functions (NVIDIA, 2025, NVRTC User Guide).
type nvrtcAPI struct {
	path              string
	major, minor      int32
	version           func(major, minor *int32) int32
	numSupportedArchs func(n *int32) int32
	supportedArchs    func(archs *int32) int32
	createProgram     func(prog *uintptr, src, name string, numHeaders int32, headers, includeNames unsafe.Pointer) int32
	compileProgram    func(prog uintptr, numOptions int32, options unsafe.Pointer) int32
	getProgramLogSize func(prog uintptr, n *uintptr) int32
	getProgramLog     func(prog uintptr, log *byte) int32
	getPTXSize        func(prog uintptr, n *uintptr) int32
	getPTX            func(prog uintptr, ptx *byte) int32
	destroyProgram    func(prog *uintptr) int32
	getErrorString    func(r int32) string
}

func (a *nvrtcAPI) symbols() []symbol {
	return []symbol{
		{"nvrtcVersion", &a.version},
		{"nvrtcGetNumSupportedArchs", &a.numSupportedArchs},
		{"nvrtcGetSupportedArchs", &a.supportedArchs},
		{"nvrtcCreateProgram", &a.createProgram}, {"nvrtcCompileProgram", &a.compileProgram},
		{"nvrtcGetProgramLogSize", &a.getProgramLogSize}, {"nvrtcGetProgramLog", &a.getProgramLog},
		{"nvrtcGetPTXSize", &a.getPTXSize}, {"nvrtcGetPTX", &a.getPTX},
		{"nvrtcDestroyProgram", &a.destroyProgram}, {"nvrtcGetErrorString", &a.getErrorString},
	}
}

func (a *nvrtcAPI) check(call string, r int32) error {
	if r == 0 {
		return nil
	}
	return &Error{Call: call, Msg: fmt.Sprintf("%s (%d)", a.getErrorString(r), r)}
}

// loadNVRTC binds NVRTC, found with the Driver's search: the first one
// whose version the driver supports (the PTX of a newer NVRTC would not
// load), with its libnvrtc-builtins preloaded from the same folder. The
// caller holds the Driver's lock.
func (d *Driver) loadNVRTC() (*nvrtcAPI, error) {
	var a *nvrtcAPI
	_, err := openLibrary(libNVRTC, d.search, func(dir string) {
		preload(dir, []string{"libnvrtc-builtins.so.*"})
	}, func(h uintptr, path string) error {
		c := &nvrtcAPI{path: path}
		if err := bind(h, path, c.symbols()); err != nil {
			return err
		}
		if err := c.check("nvrtcVersion", c.version(&c.major, &c.minor)); err != nil {
			return err
		}
		if v := int(1000*c.major + 10*c.minor); v > d.version {
			return fmt.Errorf("%s is NVRTC %d.%d, newer than the driver's CUDA %d.%d", path, c.major, c.minor, d.version/1000, d.version%1000/10)
		}
		a = c
		return nil
	})
	return a, err
}

// NVRTCVersion returns the version of the NVRTC library Compile uses and
// its path, loading it if need be.
func (d *Driver) NVRTCVersion() (version, path string, err error) {
	err = d.do(func() error {
		a, err := d.nvrtcLocked()
		if err == nil {
			version, path = fmt.Sprintf("%d.%d", a.major, a.minor), a.path
		}
		return err
	})
	return version, path, err
}

func (d *Driver) nvrtcLocked() (*nvrtcAPI, error) {
	if d.nvrtc == nil {
		a, err := d.loadNVRTC()
		if err != nil {
			return nil, err
		}
		d.nvrtc = a
	}
	return d.nvrtc, nil
}

// Compile compiles CUDA C++ source to PTX for the device with NVRTC,
// reusing the PTX cached on disk (os.UserCacheDir()/gradus/cuda) for the
// same source, options and NVRTC version. A compilation error returns
// NVRTC's log.
func (d *Driver) Compile(src, name string) (ptx []byte, err error) {
	err = d.do(func() error {
		ptx, err = d.compileLocked(src, name)
		return err
	})
	return ptx, err
}

func (d *Driver) compileLocked(src, name string) ([]byte, error) {
	a, err := d.nvrtcLocked()
	if err != nil {
		return nil, err
	}
	archs, err := a.archs()
	if err != nil {
		return nil, err
	}
	arch, err := chooseArch(d.major, d.minor, archs)
	if err != nil {
		return nil, err
	}
	opts := compileOptions(arch)
	cache := defaultCache()
	key := cacheKey(src, fmt.Sprintf("%d.%d", a.major, a.minor), opts)
	if ptx, ok := cache.load(key); ok {
		return ptx, nil
	}
	ptx, err := a.compile(src, name, opts)
	if err != nil {
		return nil, err
	}
	_ = cache.store(key, ptx) // a cache that cannot be written only costs time
	return ptx, nil
}

// archs returns the virtual architectures NVRTC supports, e.g. 75 … 120.
func (a *nvrtcAPI) archs() ([]int, error) {
	var n int32
	if err := a.check("nvrtcGetNumSupportedArchs", a.numSupportedArchs(&n)); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("cuda: NVRTC %s reports no supported architecture", a.path)
	}
	raw := make([]int32, n)
	if err := a.check("nvrtcGetSupportedArchs", a.supportedArchs(&raw[0])); err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i, v := range raw {
		out[i] = int(v)
	}
	return out, nil
}

// compile runs NVRTC on src with opts and returns the PTX text.
func (a *nvrtcAPI) compile(src, name string, opts []string) (ptx []byte, err error) {
	var prog uintptr
	if err := a.check("nvrtcCreateProgram", a.createProgram(&prog, src, name, 0, nil, nil)); err != nil {
		return nil, err
	}
	defer func() {
		if derr := a.check("nvrtcDestroyProgram", a.destroyProgram(&prog)); err == nil {
			err = derr
		}
	}()
	// The options are an array of C strings in Go memory: the array holds
	// Go pointers, so every string and the array are pinned for the call.
	var pin runtime.Pinner
	defer pin.Unpin()
	cs := make([]*byte, len(opts))
	for i, o := range opts {
		b := append([]byte(o), 0)
		pin.Pin(&b[0])
		cs[i] = &b[0]
	}
	pin.Pin(&cs[0])
	if r := a.compileProgram(prog, int32(len(cs)), unsafe.Pointer(&cs[0])); r != 0 {
		msg := a.check("nvrtcCompileProgram", r).Error()
		return nil, fmt.Errorf("%s with %s; log:\n%s", msg, strings.Join(opts, " "), a.log(prog))
	}
	var n uintptr
	if err := a.check("nvrtcGetPTXSize", a.getPTXSize(prog, &n)); err != nil {
		return nil, err
	}
	ptx = make([]byte, n+1)
	if err := a.check("nvrtcGetPTX", a.getPTX(prog, &ptx[0])); err != nil {
		return nil, err
	}
	return []byte(cString(ptx)), nil // the size counts the terminating NUL
}

// log returns the program's compilation log.
func (a *nvrtcAPI) log(prog uintptr) string {
	var n uintptr
	if a.getProgramLogSize(prog, &n) != 0 || n <= 1 {
		return "(no log)"
	}
	b := make([]byte, n)
	if a.getProgramLog(prog, &b[0]) != 0 {
		return "(no log)"
	}
	return cString(b)
}

// loadModule loads PTX (cuModuleLoadData) and returns the module. The
// caller holds the Driver's lock on a thread with its context current.
func (d *Driver) loadModule(ptx []byte) (uintptr, error) {
	img := make([]byte, 0, len(ptx)+1)
	img = append(append(img, ptx...), 0)
	if i := strings.IndexByte(string(ptx), 0); i >= 0 {
		img = img[:i+1]
	}
	var m uintptr
	r := d.api.moduleLoadData(&m, unsafe.Pointer(&img[0]))
	if err := check("cuModuleLoadData", r); err != nil {
		return 0, fmt.Errorf("%w (driver supports CUDA %d.%d)", err, d.version/1000, d.version%1000/10)
	}
	return m, nil
}
