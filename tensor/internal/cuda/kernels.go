//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"unsafe"
)

// block is the threads per block of every launch (BLOCK in
// kernels/common.cu); maxGrid caps the blocks of an elementwise launch,
// whose grid-stride loops cover any size.
const (
	block   = 256
	maxGrid = 1 << 20
)

// Kernels is the module of the package's own kernels (kernels/*.cu),
// compiled by NVRTC for the Driver's device and loaded into its context.
// Launches are queued on the device's default stream; Download (or
// Driver.Synchronize) waits for them, and reports a kernel's failure.
type Kernels struct {
	d       *Driver
	module  uintptr
	fns     map[fnKey]uintptr
	scratch *launchScratch // the arguments of the launch in progress
}

// fnKey names a kernel as its op and the dtype whose suffix its name
// carries, so that finding a loaded kernel builds no string.
type fnKey struct {
	op string
	dt DType
}

// Kernels compiles (or takes from the disk cache) and loads the kernels
// on first use.
func (d *Driver) Kernels() (*Kernels, error) {
	err := d.do(func() error {
		if d.kernels != nil {
			return nil
		}
		ptx, err := d.compileLocked(Source(), "gradus_kernels.cu")
		if err != nil {
			return err
		}
		m, err := d.loadModule(ptx)
		if err != nil {
			return err
		}
		d.kernels = &Kernels{d: d, module: m, fns: map[fnKey]uintptr{}, scratch: new(launchScratch)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d.kernels, nil
}

// function returns the kernel op+dt.suffix(); the caller holds the lock.
func (k *Kernels) function(op string, dt DType) (uintptr, error) {
	key := fnKey{op, dt}
	if f, ok := k.fns[key]; ok {
		return f, nil
	}
	name := op + dt.suffix()
	var f uintptr
	if err := check("cuModuleGetFunction("+name+")", k.d.api.moduleGetFunction(&f, k.module, name)); err != nil {
		return 0, err
	}
	k.fns[key] = f
	return f, nil
}

// maxLaunchArgs is the most arguments a kernel of the package takes;
// launchBlob is room for the by-value structures among them.
const (
	maxLaunchArgs = 16
	launchBlob    = 1024
)

// launchScratch holds one launch's argument values and the array of
// pointers to them that cuLaunchKernel reads. It is the Kernels' own,
// used under the Driver's lock, so that a launch allocates nothing for
// its arguments (a launch used to make ten allocations of them).
type launchScratch struct {
	slots [maxLaunchArgs]uint64
	ptrs  [maxLaunchArgs]unsafe.Pointer
	blob  [launchBlob]byte // copies of the *stridesArg, *strides3Arg and *geomArg arguments
	pin   runtime.Pinner
}

// launch queues kernel op+dt.suffix() on grid blocks of block threads.
// Each argument is a *Buffer (its device address), an int (passed as
// long long), a float32, a float64, a *stridesArg, a *strides3Arg or a
// *geomArg (passed by value).
//
// cuLaunchKernel takes an array of pointers to the argument values. The
// array and the values are in the Kernels' scratch, which is pinned
// (runtime.Pinner) for the call, as the cgo rules that purego follows
// require of Go memory holding Go pointers.
func (k *Kernels) launch(op string, dt DType, grid int, args ...any) error {
	if grid <= 0 || grid > math.MaxInt32 {
		return fmt.Errorf("cuda: %s%s: %d blocks are out of range", op, dt.suffix(), grid)
	}
	if len(args) > maxLaunchArgs {
		return fmt.Errorf("cuda: %s%s: %d arguments, at most %d", op, dt.suffix(), len(args), maxLaunchArgs)
	}
	if err := k.d.lock(); err != nil {
		return err
	}
	defer k.d.unlock()
	sc := k.scratch
	used := 0
	for i, a := range args {
		sc.ptrs[i] = unsafe.Pointer(&sc.slots[i])
		var src unsafe.Pointer
		var size int
		switch v := a.(type) {
		case *Buffer:
			sc.slots[i] = 0 // nil is a null pointer: an absent operand
			if v != nil {
				sc.slots[i] = v.ptr
			}
		case int:
			sc.slots[i] = uint64(int64(v))
		case float32:
			sc.slots[i] = uint64(math.Float32bits(v)) // the low 4 bytes: both targets are little-endian
		case float64:
			sc.slots[i] = math.Float64bits(v)
		case *stridesArg:
			src, size = unsafe.Pointer(v), int(unsafe.Sizeof(*v))
		case *strides3Arg:
			src, size = unsafe.Pointer(v), int(unsafe.Sizeof(*v))
		case *geomArg:
			src, size = unsafe.Pointer(v), int(unsafe.Sizeof(*v))
		default:
			return fmt.Errorf("cuda: %s%s: argument %d has an unsupported type", op, dt.suffix(), i)
		}
		if src != nil {
			if used+size > launchBlob {
				return fmt.Errorf("cuda: %s%s: by-value arguments over %d bytes", op, dt.suffix(), launchBlob)
			}
			dst := unsafe.Pointer(&sc.blob[used])
			copy(unsafe.Slice((*byte)(dst), size), unsafe.Slice((*byte)(src), size))
			sc.ptrs[i] = dst
			used += (size + 7) &^ 7
		}
	}
	f, err := k.function(op, dt)
	if err != nil {
		return err
	}
	sc.pin.Pin(sc)
	r := k.d.api.launch(f, uint32(grid), block, unsafe.Pointer(&sc.ptrs[0]))
	sc.pin.Unpin()
	if r != 0 {
		return check("cuLaunchKernel("+op+dt.suffix()+")", r)
	}
	return nil
}

// elemGrid is the grid of an elementwise launch over n elements.
func elemGrid(n int) int { return min((n+block-1)/block, maxGrid) }

// fits checks that every buffer holds n elements of dt and starts at a
// multiple of dt's size (a Buffer.Slice view may not; the device faults on
// a misaligned load).
func fits(op string, dt DType, n int, bufs ...*Buffer) error {
	if !dt.valid() {
		return fmt.Errorf("cuda: %s: invalid dtype %d", op, dt)
	}
	for i, b := range bufs {
		if b == nil || b.size < n*dt.Size() {
			have := 0
			if b != nil {
				have = b.size
			}
			return fmt.Errorf("cuda: %s: operand %d needs %d bytes, its buffer has %d", op, i, n*dt.Size(), have)
		}
		if b.ptr%uint64(dt.Size()) != 0 {
			return fmt.Errorf("cuda: %s: operand %d starts at %#x, not a multiple of the %d-byte element (a Buffer.Slice offset?)", op, i, b.ptr, dt.Size())
		}
	}
	return nil
}

// Unary sets dst[i] = op(x[i]) for i < n; op is one of UnaryOps. dst may
// be x.
func (k *Kernels) Unary(op string, dt DType, n int, dst, x *Buffer) error {
	if !slices.Contains(UnaryOps, op) {
		return fmt.Errorf("cuda: Unary: no kernel %q (have %v)", op, UnaryOps)
	}
	if err := fits(op, dt, n, dst, x); err != nil || n == 0 {
		return err
	}
	return k.launch(op, dt, elemGrid(n), n, dst, x)
}

// Binary sets the contiguous dst of shape to op(a, b) elementwise, a and
// b read with the strides given (0 broadcasts; BroadcastStrides makes
// them for contiguous operands); op is one of BinaryOps.
func (k *Kernels) Binary(op string, dt DType, shape []int, dst, a *Buffer, aStrides []int, b *Buffer, bStrides []int) error {
	if !slices.Contains(BinaryOps, op) {
		return fmt.Errorf("cuda: Binary: no kernel %q (have %v)", op, BinaryOps)
	}
	if !dt.valid() || a == nil || b == nil {
		return fmt.Errorf("cuda: %s: invalid dtype or nil operand", op)
	}
	s, n, err := newStridesSpan(shape, aStrides, bStrides, spanOf(a, dt), spanOf(b, dt))
	if err != nil {
		return err
	}
	if err := fits(op+" (a, b)", dt, 0, a, b); err != nil { // their alignment
		return err
	}
	if err := fits(op, dt, n, dst); err != nil || n == 0 {
		return err
	}
	return k.launch(op, dt, elemGrid(n), n, dst, a, b, s)
}

// rows launches a row kernel (RowOps) over rows × cols matrices.
func (k *Kernels) rows(op string, dt DType, rows, cols int, out *Buffer, outElems int, in ...*Buffer) error {
	if rows < 0 || cols <= 0 {
		return fmt.Errorf("cuda: %s: %d×%d: cols must be positive", op, rows, cols)
	}
	if err := fits(op, dt, outElems, out); err != nil {
		return err
	}
	if err := fits(op, dt, rows*cols, in...); err != nil || rows == 0 {
		return err
	}
	args := []any{cols, out}
	for _, b := range in {
		args = append(args, b)
	}
	return k.launch(op, dt, rows, args...)
}

// Softmax sets each row of the rows × cols matrix dst to the softmax of
// that row of x, or with log set to the log-softmax.
func (k *Kernels) Softmax(dt DType, rows, cols int, dst, x *Buffer, log bool) error {
	op := "softmax"
	if log {
		op = "log_softmax"
	}
	return k.rows(op, dt, rows, cols, dst, rows*cols, x)
}

// SoftmaxGrad sets dst to the vector-Jacobian product of the row-wise
// softmax with v: y ⊙ (v − Σⱼ v⊙y) per row, y the softmax's output. With
// log set, y is the log-softmax's output and dst = v − exp(y)·Σⱼ v.
func (k *Kernels) SoftmaxGrad(dt DType, rows, cols int, dst, y, v *Buffer, log bool) error {
	op := "softmax_grad"
	if log {
		op = "log_softmax_grad"
	}
	return k.rows(op, dt, rows, cols, dst, rows*cols, y, v)
}

// SumLast sets dst[r] to the sum of row r of the rows × cols matrix x.
func (k *Kernels) SumLast(dt DType, rows, cols int, dst, x *Buffer) error {
	return k.rows("sum_last", dt, rows, cols, dst, rows, x)
}

// Cast writes the n elements of x, of the other dtype, into dst as to:
// float64 to float32 rounded to nearest (as Go's float32(v)), float32 to
// float64 exactly.
func (k *Kernels) Cast(to DType, n int, dst, x *Buffer) error {
	from := F32
	if to == F32 {
		from = F64
	}
	if err := fits("cast", to, n, dst); err != nil {
		return err
	}
	if err := fits("cast", from, n, x); err != nil || n == 0 {
		return err
	}
	return k.launch("cast", to, elemGrid(n), n, dst, x)
}

// Update applies one step of an optimiser's update (one of UpdateOps:
// "adam", "sgd", "rmsprop", "adagrad"; kernels/adam.cu gives each rule)
// in place to the n parameters p with gradients g, state buffers state
// (nil where the rule's option is off) and the scalars h, worked out on
// the host as package optim does and rounded to the dtype once:
//
//   - adam: state m, v, vm (AMSGrad's running maximum, or nil); h = 1−β₁,
//     β₂, 1−β₂, −lr/(1−β₁ᵗ), 1/√(1−β₂ᵗ), ε, decoupled decay factor, L2.
//   - sgd: state momentum buffer (or nil); h = lr, μ, 1−dampening, λ,
//     first step (1 or 0), Nesterov (1 or 0).
//   - rmsprop: state square average, centred average (or nil), momentum
//     buffer (or nil); h = −lr, α, 1−α, ε, μ, λ.
//   - adagrad: state sum; h = −lr, ε, λ.
func (k *Kernels) Update(rule string, dt DType, n int, p, g *Buffer, state [3]*Buffer, h [8]float64) error {
	if !slices.Contains(UpdateOps, rule) {
		return fmt.Errorf("cuda: Update: unknown rule %q", rule)
	}
	if err := fits(rule, dt, n, p, g); err != nil || n == 0 {
		return err
	}
	args := []any{n, p, g}
	for _, b := range state {
		if b != nil {
			if err := fits(rule, dt, n, b); err != nil {
				return err
			}
		}
		args = append(args, b)
	}
	for _, x := range h {
		if dt == F32 {
			args = append(args, float32(x))
		} else {
			args = append(args, x)
		}
	}
	return k.launch(rule, dt, elemGrid(n), args...)
}
