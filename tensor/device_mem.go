package tensor

import (
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

// deviceStore is the device memory holding a GPU tensor's elements; a
// tensor's views share it, as CPU views share the backing slice.
type deviceStore struct {
	device Device
	be     devices.Backend
	h      *memHandle
}

// memHandle owns an allocation. The garbage collector hands it back when
// no tensor refers to its store any more (runtime.AddCleanup); ops free
// their scratch tensors at once with release instead, since device
// memory does not press on the Go heap that paces the collector.
type memHandle struct {
	be    devices.Backend
	mem   devices.Mem
	freed atomic.Bool
}

func (h *memHandle) free() {
	if h.freed.CompareAndSwap(false, true) {
		h.be.Free(h.mem)
	}
}

// Device returns the device t lives on: CPU, or a CUDA GPU for tensors
// made with NewOn or To.
func (t *Tensor) Device() Device {
	if t.dev == nil {
		return CPU
	}
	return t.dev.device
}

// backendOf returns the backend of an open CUDA device.
func backendOf(op string, d Device) devices.Backend {
	cudaDevices.Lock()
	be := cudaDevices.backends[d.ordinal]
	cudaDevices.Unlock()
	if be == nil {
		Fail(op, "device %v is not open: get it from tensor.CUDA", d)
	}
	return be
}

func devDType(dt DType) devices.DType {
	if dt == Float64 {
		return devices.F64
	}
	return devices.F32
}

// NewOn returns a zero-filled contiguous tensor of the given dtype and
// shape on device d (New for the CPU). A CUDA device must come from
// tensor.CUDA. It panics with a *Error if the device cannot allocate.
func NewOn(d Device, dt DType, shape ...int) *Tensor {
	t := newUninitOn("NewOn", d, dt, shape...)
	if t.dev != nil {
		t.Fill(0)
	}
	return t
}

// newUninitOn is NewOn without zeroing device memory (CPU memory is
// always zeroed).
func newUninitOn(op string, d Device, dt DType, shape ...int) *Tensor {
	if d.kind == CPUKind {
		return New(dt, shape...)
	}
	if dt != Float32 && dt != Float64 {
		Fail(op, "unknown dtype %v", dt)
	}
	n := checkShape(op, shape)
	be := backendOf(op, d)
	mem, err := be.Alloc(devDType(dt), max(n, 1))
	if err != nil {
		// The device may be full of tensors the program no longer
		// reaches, whose memory the collector has not handed back yet:
		// it paces itself by the Go heap, where a GPU tensor is a few
		// hundred bytes. Collect them and try once more.
		collectDeviceGarbage()
		mem, err = be.Alloc(devDType(dt), max(n, 1))
	}
	if err != nil {
		Fail(op, "%v tensor of shape %v on %v: %v", dt, shape, d, err)
	}
	h := &memHandle{be: be, mem: mem}
	s := &deviceStore{device: d, be: be, h: h}
	runtime.AddCleanup(s, (*memHandle).free, h)
	return &Tensor{dtype: dt, shape: cloneInts(shape), strides: rowMajorStrides(shape), dev: s}
}

// collectDeviceGarbage runs the collector and waits, up to a second, for
// the cleanups it queued to free their device memory: a sentinel's
// cleanup, queued by a second collection after theirs, says when.
func collectDeviceGarbage() {
	runtime.GC()
	done := make(chan struct{})
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(c chan struct{}) { close(c) }, done)
	sentinel = nil
	runtime.GC()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}

// release hands a scratch tensor's device memory back at once; t and its
// views must not be used after. It does nothing on the CPU.
func (t *Tensor) release() {
	if t.dev != nil {
		t.dev.h.free()
	}
}

// mem is the device memory of t's first element.
func (t *Tensor) mem() devices.Mem {
	m := t.dev.h.mem
	if t.offset != 0 {
		m = t.dev.be.Slice(m, devDType(t.dtype), t.offset)
	}
	return m
}

// view is t as a strided device operand.
func (t *Tensor) view() devices.View { return devices.View{Mem: t.mem(), Strides: t.strides} }

// To returns t on device d: t itself when it is there already, else a
// contiguous copy made there (the GPU's queued work finishes first when
// the copy comes back to the CPU). It panics with a *Error if d is not
// open or the copy fails.
func (t *Tensor) To(d Device) *Tensor {
	const op = "To"
	defer alive(t)
	if t.Device() == d {
		return t
	}
	if t.dev != nil && d.kind != CPUKind {
		return t.To(CPU).To(d) // between GPUs, through the host
	}
	if t.dev == nil { // to a GPU
		c := t.Contiguous()
		out := newUninitOn(op, d, t.dtype, t.shape...)
		if t.Size() == 0 {
			return out
		}
		var src any
		if c.dtype == Float32 {
			src = c.f32[c.offset : c.offset+c.Size()]
		} else {
			src = c.f64[c.offset : c.offset+c.Size()]
		}
		if err := out.dev.be.Upload(out.mem(), src); err != nil {
			Fail(op, "%v tensor of shape %v to %v: %v", t.dtype, t.shape, d, err)
		}
		return out
	}
	c := t.deviceContiguous(op) // to the CPU
	out := New(t.dtype, t.shape...)
	if t.Size() == 0 {
		return out
	}
	var dst any = out.f64
	if t.dtype == Float32 {
		dst = out.f32
	}
	if err := c.dev.be.Download(dst, c.mem()); err != nil {
		Fail(op, "%v tensor of shape %v from %v: %v", t.dtype, t.shape, t.Device(), err)
	}
	if c != t {
		c.release()
	}
	return out
}

// deviceContiguous returns the GPU tensor t, or a contiguous copy of it
// on its device when it is a strided view.
func (t *Tensor) deviceContiguous(op string) *Tensor {
	defer alive(t)
	if t.IsContiguous() {
		return t
	}
	c := newUninitOn(op, t.Device(), t.dtype, t.shape...)
	gpuCheck(op, c.dev.be.Copy(devDType(t.dtype), t.shape, devices.View{Mem: c.mem()}, t.view()))
	return c
}

// gpuCheck panics naming op when a device call failed.
func gpuCheck(op string, err error) {
	if err != nil {
		Fail(op, "%v", err)
	}
}

// noHostMemory panics for an operation that reached a CPU kernel with a
// GPU tensor: the op has no GPU kernel yet. It names the outermost
// exported function of package tensor on the stack (the op the caller
// asked for) and the caller above it.
func noHostMemory(t *Tensor) {
	op, caller := callerOp()
	via := ""
	if caller != "" && !strings.HasPrefix(op, "Tensor.") && !exportedName(op) {
		via = " (reached from " + caller + ")"
	}
	Fail(op, "no GPU kernel yet for the %v tensor of shape %v on %v%s; move it with To(tensor.CPU)", t.dtype, t.shape, t.Device(), via)
}

// hostOnly panics for an accessor that shares or writes host memory
// (Float32s, Float64s, SetAt) called on a GPU tensor.
func hostOnly(op string, t *Tensor) {
	Fail(op, "the %v tensor of shape %v lives on %v: read its elements with Values, or copy it to the host with To(tensor.CPU)", t.dtype, t.shape, t.Device())
}

// callerOp names the operation that reached a CPU kernel with a GPU
// tensor, and the function outside package tensor that called into it
// (opFromFrames on the call stack).
func callerOp() (op, caller string) {
	pc := make([]uintptr, 64)
	n := runtime.Callers(3, pc)
	frames := runtime.CallersFrames(pc[:n])
	var fns []string
	for {
		f, more := frames.Next()
		fns = append(fns, f.Function)
		if !more {
			break
		}
	}
	return opFromFrames(fns)
}

// opFromFrames picks, from the functions of a call stack (innermost
// first, as runtime reports them), the exported function of package
// tensor nearest the top of the stack's run of tensor frames (the op the
// caller asked for) and the first function outside tensor (its caller).
// When no exported tensor function is on the stack (an unexported path
// such as graph's kernels reached tensor's storage), the op is the
// innermost exported function outside tensor further out, such as the
// graph constructor ("graph.LSTMCell") that ran the op's Forward; failing
// that, "this operation".
func opFromFrames(fns []string) (op, caller string) {
	const pkg = modulePath + "tensor."
	i := 0
	for ; i < len(fns); i++ {
		name, inTensor := strings.CutPrefix(fns[i], pkg)
		if inTensor && !strings.Contains(name, "/") {
			if exportedName(name) {
				op = strings.Replace(name, "(*Tensor).", "Tensor.", 1)
			}
			continue
		}
		if fns[i] != "" && !strings.HasPrefix(fns[i], "runtime.") {
			caller = strings.TrimPrefix(fns[i], modulePath)
			break
		}
	}
	if op != "" {
		return op, caller
	}
	for ; i < len(fns); i++ {
		if strings.HasPrefix(fns[i], "runtime.") || strings.HasPrefix(fns[i], "testing.") {
			continue
		}
		if name := exportedFunc(fns[i]); name != "" {
			return name, caller
		}
	}
	return "this operation", caller
}

// exportedFunc returns fn, a function name as runtime reports it
// ("github.com/gradus-ml/gradus/graph.LSTMCell", "….(*Graph).Var",
// "….LSTMCell.func1"), as "graph.LSTMCell" when it is an exported
// function or a method of an exported type (a closure counts as the
// function around it), and "" otherwise.
func exportedFunc(fn string) string {
	rest := fn
	if k := strings.LastIndex(fn, "/"); k >= 0 {
		rest = fn[k+1:]
	}
	dot := strings.Index(rest, ".")
	if dot < 0 {
		return ""
	}
	pkgName := rest[:dot]
	parts := strings.Split(strings.ReplaceAll(rest[dot+1:], "[...]", ""), ".")
	for len(parts) > 1 && (strings.HasPrefix(parts[len(parts)-1], "func") || strings.HasPrefix(parts[len(parts)-1], "gowrap")) {
		parts = parts[:len(parts)-1]
	}
	for j, p := range parts {
		p = strings.Trim(p, "(*)")
		if p == "" || p[0] < 'A' || p[0] > 'Z' {
			return ""
		}
		parts[j] = p
	}
	return pkgName + "." + strings.Join(parts, ".")
}

// exportedName says whether a function name as runtime reports it
// ("Add", "(*Tensor).Sum", "foo[...]") is exported.
func exportedName(name string) bool {
	name = strings.TrimPrefix(strings.TrimPrefix(name, "(*Tensor)."), "Tensor.")
	return name != "" && name[0] >= 'A' && name[0] <= 'Z'
}

// alive keeps tensors reachable until the deferred call runs: a GPU
// function holds only the raw device memory of its operands once it has
// read it, and the garbage collector could otherwise hand a temporary
// operand's memory back before the kernel reading it is queued.
func alive(ts ...*Tensor) { runtime.KeepAlive(ts) }
