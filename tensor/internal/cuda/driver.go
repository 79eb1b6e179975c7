//go:build linux && (amd64 || arm64)

package cuda

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// driverAPI holds the CUDA driver functions the package calls, bound by
// name from libcuda.so.1 (NVIDIA, 2025, CUDA Driver API reference). Sizes
// (size_t) are uintptr, CUdeviceptr is uint64, handles are uintptr.
type driverAPI struct {
	init               func(flags uint32) int32
	driverGetVersion   func(v *int32) int32
	deviceGetCount     func(n *int32) int32
	deviceGet          func(dev *int32, ordinal int32) int32
	deviceGetName      func(name *byte, n int32, dev int32) int32
	deviceTotalMem     func(bytes *uint64, dev int32) int32
	deviceGetAttribute func(v *int32, attr int32, dev int32) int32
	primaryCtxRetain   func(ctx *uintptr, dev int32) int32
	primaryCtxRelease  func(dev int32) int32
	ctxSetCurrent      uintptr // called through setCurrent, as launchKernel
	ctxSynchronize     func() int32
	memAlloc           func(p *uint64, n uintptr) int32
	memFree            func(p uint64) int32
	memcpyHtoD         func(dst uint64, src unsafe.Pointer, n uintptr) int32
	memcpyDtoH         func(dst unsafe.Pointer, src uint64, n uintptr) int32
	memcpyDtoD         func(dst, src uint64, n uintptr) int32
	memsetD8           func(dst uint64, v uint8, n uintptr) int32
	memGetInfo         func(free, total *uintptr) int32
	moduleLoadData     func(m *uintptr, image unsafe.Pointer) int32
	moduleUnload       func(m uintptr) int32
	moduleGetFunction  func(f *uintptr, m uintptr, name string) int32
	// launchKernel is cuLaunchKernel's address, called through
	// purego.SyscallN (launch): the registered-function path builds its
	// arguments with reflection, about five allocations a call, and this
	// is the call every op makes.
	launchKernel uintptr
}

// setCurrent calls cuCtxSetCurrent(ctx), which every call to the
// device makes first.
func (a *driverAPI) setCurrent(ctx uintptr) int32 {
	r, _, _ := purego.SyscallN(a.ctxSetCurrent, ctx)
	return int32(r)
}

// launch calls cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream 0,
// params, nil).
func (a *driverAPI) launch(f uintptr, grid, block uint32, params unsafe.Pointer) int32 {
	r, _, _ := purego.SyscallN(a.launchKernel, f, uintptr(grid), 1, 1, uintptr(block), 1, 1, 0, 0, uintptr(params), 0)
	return int32(r)
}

func (a *driverAPI) symbols() []symbol {
	return []symbol{
		{"cuInit", &a.init}, {"cuDriverGetVersion", &a.driverGetVersion},
		{"cuDeviceGetCount", &a.deviceGetCount}, {"cuDeviceGet", &a.deviceGet},
		{"cuDeviceGetName", &a.deviceGetName}, {"cuDeviceTotalMem_v2", &a.deviceTotalMem},
		{"cuDeviceGetAttribute", &a.deviceGetAttribute},
		{"cuDevicePrimaryCtxRetain", &a.primaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &a.primaryCtxRelease},
		{"cuCtxSetCurrent", &a.ctxSetCurrent}, {"cuCtxSynchronize", &a.ctxSynchronize},
		{"cuMemAlloc_v2", &a.memAlloc}, {"cuMemFree_v2", &a.memFree},
		{"cuMemcpyHtoD_v2", &a.memcpyHtoD}, {"cuMemcpyDtoH_v2", &a.memcpyDtoH},
		{"cuMemcpyDtoD_v2", &a.memcpyDtoD}, {"cuMemsetD8_v2", &a.memsetD8},
		{"cuMemGetInfo_v2", &a.memGetInfo},
		{"cuModuleLoadData", &a.moduleLoadData}, {"cuModuleUnload", &a.moduleUnload},
		{"cuModuleGetFunction", &a.moduleGetFunction}, {"cuLaunchKernel", &a.launchKernel},
	}
}

// A symbol is a C function's name and the Go function variable to bind it
// to, or a *uintptr to hold its address for purego.SyscallN.
type symbol struct {
	name string
	fn   any
}

// bind looks every symbol up in the library handle h and registers it;
// a missing one is an error naming it and the library.
func bind(h uintptr, path string, syms []symbol) error {
	for _, s := range syms {
		p, err := purego.Dlsym(h, s.name)
		if err != nil || p == 0 {
			return fmt.Errorf("cuda: %s has no symbol %s (a library too old?)", path, s.name)
		}
		if addr, ok := s.fn.(*uintptr); ok {
			*addr = p
			continue
		}
		purego.RegisterFunc(s.fn, p)
	}
	return nil
}

// openLibrary dlopens the first candidate of lib under s that loads and
// that accept (if not nil) takes: accept binds the library's symbols and
// may turn it down with a reason. prepare, if not nil, is called with a
// candidate file's folder before it is opened, to load its companions
// from there. A library that is nowhere to be found is reported with every
// place searched; one that is found but fails to load or is turned down,
// with the reasons.
func openLibrary(lib library, s Search, prepare func(dir string), accept func(h uintptr, path string) error) (path string, err error) {
	var failures []string
	for _, c := range candidates(lib, s) {
		if prepare != nil && !c.loader {
			prepare(filepath.Dir(c.path))
		}
		h, err := dlopen(c.path)
		if err != nil {
			// dlerror is per thread: an empty message means it was lost
			// (another thread read it), which for a name the loader
			// searches is taken as not found, as its message would say.
			if !c.loader || !(strings.Contains(err.Error(), "No such file") || strings.TrimSpace(err.Error()) == "") {
				failures = append(failures, err.Error())
			}
			continue
		}
		if accept != nil {
			if err := accept(h, c.path); err != nil {
				failures = append(failures, err.Error())
				continue
			}
		}
		return c.path, nil
	}
	if len(failures) > 0 {
		return "", fmt.Errorf("cuda: %s (%s) found but not usable: %s", lib.names[0], lib.what, strings.Join(failures, "; "))
	}
	return "", unavailable(notFound(lib, s))
}

// dlopen opens path with its OS thread locked, so that on failure purego
// reads dlerror, which is thread-local, on the thread dlopen set it on.
func dlopen(path string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// preload dlopens the newest file of names in dir, if any, so that a
// library opened next from dir finds it loaded (the loader matches
// sonames of loaded objects) even where its own search would miss dir.
func preload(dir string, names []string) {
	if f := filesIn(dir, names); len(f) > 0 {
		_, _ = dlopen(f[0])
	}
}

// A Driver is the CUDA driver bound at run time with one device's primary
// context.
//
// CUDA makes a context current per OS thread, and Go moves goroutines
// between threads. Every call into the driver, cuBLAS or a kernel goes
// through Driver.do, which holds the Driver's lock, locks the goroutine
// to its thread (runtime.LockOSThread) and makes the context current
// (cuCtxSetCurrent, a thread-local store costing well under a
// microsecond) before it calls, so any goroutine may use a Driver and the
// calls are serialised, as they are on the device's default stream anyway.
type Driver struct {
	mu      sync.Mutex
	api     driverAPI
	search  Search
	libPath string
	version int // the driver's CUDA version, 1000·major + 10·minor
	count   int // devices present
	ordinal int
	dev     int32
	ctx     uintptr
	name    string
	major   int
	minor   int
	memory  int64
	pool    pool
	nvrtc   *nvrtcAPI
	blas    *BLAS
	kernels *Kernels
	solver  *Solver // solver.go
	dnn     *DNN    // dnn.go
	dnnErr  error   // why cuDNN did not load
}

// Open binds the driver found by DefaultSearch and makes device 0's
// primary context ready. See OpenDevice.
func Open() (*Driver, error) { return OpenDevice(DefaultSearch(), 0) }

// OpenDevice finds libcuda.so.1 under s, initialises the driver and
// retains the primary context of device ordinal. It never panics: every
// failure is an error saying why, and errors.Is(err, ErrNoDriver) holds
// when the machine has no driver or no device.
func OpenDevice(s Search, ordinal int) (*Driver, error) {
	d := &Driver{search: s, ordinal: ordinal}
	path, err := openLibrary(libDriver, s, nil, func(h uintptr, path string) error {
		return bind(h, path, d.api.symbols())
	})
	if err != nil {
		return nil, err
	}
	d.libPath = path
	if r := Result(d.api.init(0)); r != Success {
		msg := fmt.Sprintf("cuInit: %s (driver %s)", r, path)
		if r == NoDevice || r == StubLibrary {
			return nil, unavailable(msg)
		}
		return nil, errors.New("cuda: " + msg)
	}
	var v, n int32
	if err := check("cuDriverGetVersion", d.api.driverGetVersion(&v)); err != nil {
		return nil, err
	}
	if err := check("cuDeviceGetCount", d.api.deviceGetCount(&n)); err != nil {
		return nil, err
	}
	d.version, d.count = int(v), int(n)
	if n == 0 {
		return nil, unavailable("cuDeviceGetCount: no device (driver " + path + ")")
	}
	if ordinal < 0 || ordinal >= int(n) {
		return nil, fmt.Errorf("cuda: device %d does not exist: %d device(s) present", ordinal, n)
	}
	if err := d.initDevice(); err != nil {
		return nil, err
	}
	d.pool = newPool(d.rawAlloc, d.rawFree)
	return d, nil
}

// CUdevice_attribute values (cuda.h).
const (
	attrCCMajor = 75
	attrCCMinor = 76
)

func (d *Driver) initDevice() error {
	a := &d.api
	if err := check("cuDeviceGet", a.deviceGet(&d.dev, int32(d.ordinal))); err != nil {
		return err
	}
	var name [256]byte
	if err := check("cuDeviceGetName", a.deviceGetName(&name[0], int32(len(name)), d.dev)); err != nil {
		return err
	}
	d.name = cString(name[:])
	var mem uint64
	if err := check("cuDeviceTotalMem", a.deviceTotalMem(&mem, d.dev)); err != nil {
		return err
	}
	d.memory = int64(mem)
	var major, minor int32
	if err := check("cuDeviceGetAttribute(major)", a.deviceGetAttribute(&major, attrCCMajor, d.dev)); err != nil {
		return err
	}
	if err := check("cuDeviceGetAttribute(minor)", a.deviceGetAttribute(&minor, attrCCMinor, d.dev)); err != nil {
		return err
	}
	d.major, d.minor = int(major), int(minor)
	return check("cuDevicePrimaryCtxRetain", a.primaryCtxRetain(&d.ctx, d.dev))
}

// cString returns the text of a NUL-terminated byte buffer.
func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// do runs f with the Driver's lock held, on a locked OS thread whose
// current context is the Driver's (see Driver).
func (d *Driver) do(f func() error) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.unlock()
	return f()
}

// lock takes the Driver's lock and locks the goroutine to its OS thread
// with the Driver's context current there, as do does, for callers that
// would otherwise allocate a closure on every call (launches); unlock
// undoes it. On an error nothing is held.
func (d *Driver) lock() error {
	d.mu.Lock()
	if d.ctx == 0 {
		d.mu.Unlock()
		return errors.New("cuda: the driver is closed")
	}
	runtime.LockOSThread()
	if r := d.api.setCurrent(d.ctx); r != 0 {
		d.unlock()
		return check("cuCtxSetCurrent", r)
	}
	return nil
}

// unlock releases what lock took.
func (d *Driver) unlock() {
	runtime.UnlockOSThread()
	d.mu.Unlock()
}

// Name returns the device's name, e.g. "NVIDIA H100 80GB HBM3".
func (d *Driver) Name() string { return d.name }

// Ordinal returns the device's ordinal.
func (d *Driver) Ordinal() int { return d.ordinal }

// DeviceCount returns how many CUDA devices the driver sees.
func (d *Driver) DeviceCount() int { return d.count }

// ComputeCapability returns the device's compute capability, e.g. 9, 0
// for an H100.
func (d *Driver) ComputeCapability() (major, minor int) { return d.major, d.minor }

// TotalMemory returns the device's memory in bytes.
func (d *Driver) TotalMemory() int64 { return d.memory }

// Version returns the CUDA version the driver supports, 1000·major +
// 10·minor (13000 for CUDA 13.0).
func (d *Driver) Version() int { return d.version }

// LibraryPath returns the libcuda file that was loaded.
func (d *Driver) LibraryPath() string { return d.libPath }

// Synchronize waits until the device has finished all work.
func (d *Driver) Synchronize() error {
	return d.do(func() error { return check("cuCtxSynchronize", d.api.ctxSynchronize()) })
}

// MemoryInfo returns the device memory free and in total, in bytes.
func (d *Driver) MemoryInfo() (free, total int64, err error) {
	err = d.do(func() error {
		var f, t uintptr
		err := check("cuMemGetInfo", d.api.memGetInfo(&f, &t))
		free, total = int64(f), int64(t)
		return err
	})
	return free, total, err
}

// Close frees the cached buffers, the cuBLAS handle and the kernels'
// module and releases the primary context. Buffers still held become
// invalid. The library stays loaded: libcuda cannot be unloaded safely.
func (d *Driver) Close() error {
	err := d.do(func() error {
		var errs []error
		if d.dnn != nil { // first: its workspace goes back to the pool
			errs = append(errs, d.dnn.destroy())
		}
		errs = append(errs, d.pool.trim())
		if d.solver != nil {
			errs = append(errs, d.solver.destroy())
		}
		if d.blas != nil {
			errs = append(errs, d.blas.destroy())
		}
		if d.kernels != nil {
			errs = append(errs, check("cuModuleUnload", d.api.moduleUnload(d.kernels.module)))
		}
		return errors.Join(errs...)
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx != 0 {
		err = errors.Join(err, check("cuDevicePrimaryCtxRelease", d.api.primaryCtxRelease(d.dev)))
		d.ctx = 0
	}
	return err
}
