package tensor

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
)

// Tensor is a dense n-dimensional array of float32 or float64. It is a view
// onto storage that other tensors may share; see the package doc.
//
// A Tensor's shape and strides must not be modified through the slices
// returned by Shape and Strides.
type Tensor struct {
	dtype   DType
	shape   []int
	strides []int // in elements; 0 along broadcast (expanded) axes
	offset  int
	f32     []float32
	f64     []float64
	dev     *deviceStore // nil on the CPU; views share it
}

// New returns a zero-filled contiguous tensor of the given dtype and shape.
// A tensor with no dimensions is a scalar holding one element.
func New(dt DType, shape ...int) *Tensor {
	n := checkShape("New", shape)
	t := &Tensor{dtype: dt, shape: cloneInts(shape), strides: rowMajorStrides(shape)}
	switch dt {
	case Float32:
		t.f32 = make([]float32, n)
	case Float64:
		t.f64 = make([]float64, n)
	default:
		Fail("New", "unknown dtype %v", dt)
	}
	return t
}

// Zeros is New: a zero-filled tensor.
func Zeros(dt DType, shape ...int) *Tensor { return New(dt, shape...) }

// Ones returns a tensor filled with ones.
func Ones(dt DType, shape ...int) *Tensor { return Full(dt, 1, shape...) }

// Full returns a tensor filled with v (rounded to float32 for Float32).
func Full(dt DType, v float64, shape ...int) *Tensor {
	t := New(dt, shape...)
	t.Fill(v)
	return t
}

// Scalar returns a 0-dimensional tensor holding v.
func Scalar(dt DType, v float64) *Tensor { return Full(dt, v) }

// ZerosLike returns a zero-filled contiguous tensor with t's dtype and
// shape, on t's device.
func ZerosLike(t *Tensor) *Tensor { return NewOn(t.Device(), t.dtype, t.shape...) }

// FromFloat32s wraps data (without copying) as a contiguous tensor of the
// given shape. It panics if len(data) does not equal the shape's size.
func FromFloat32s(data []float32, shape ...int) *Tensor {
	if shape == nil {
		shape = []int{len(data)}
	}
	n := checkShape("FromFloat32s", shape)
	if n != len(data) {
		Fail("FromFloat32s", "%d values do not fill shape %v (size %d)", len(data), shape, n)
	}
	return &Tensor{dtype: Float32, shape: cloneInts(shape), strides: rowMajorStrides(shape), f32: data}
}

// FromFloat64s wraps data (without copying) as a contiguous tensor of the
// given shape; with no shape it is 1-D. It panics if len(data) does not
// equal the shape's size.
func FromFloat64s(data []float64, shape ...int) *Tensor {
	if shape == nil {
		shape = []int{len(data)}
	}
	n := checkShape("FromFloat64s", shape)
	if n != len(data) {
		Fail("FromFloat64s", "%d values do not fill shape %v (size %d)", len(data), shape, n)
	}
	return &Tensor{dtype: Float64, shape: cloneInts(shape), strides: rowMajorStrides(shape), f64: data}
}

// FromValues copies float64 values into a new tensor of dtype dt.
func FromValues(dt DType, data []float64, shape ...int) *Tensor {
	if shape == nil {
		shape = []int{len(data)}
	}
	t := New(dt, shape...)
	if len(data) != t.Size() {
		Fail("FromValues", "%d values do not fill shape %v (size %d)", len(data), shape, t.Size())
	}
	if dt == Float32 {
		for i, v := range data {
			t.f32[i] = float32(v)
		}
	} else {
		copy(t.f64, data)
	}
	return t
}

// Arange returns the values start, start+step, ... below stop (above stop
// for a negative step) as a 1-D tensor.
func Arange(dt DType, start, stop, step float64) *Tensor {
	if step == 0 {
		Fail("Arange", "step is 0")
	}
	count := math.Ceil((stop - start) / step)
	if math.IsNaN(count) || count > 1<<48 {
		Fail("Arange", "start %g, stop %g, step %g do not give a finite number of values", start, stop, step)
	}
	n := int(count)
	if n < 0 {
		n = 0
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = start + float64(i)*step
	}
	return FromValues(dt, vals, n)
}

// Linspace returns n evenly spaced values from start to stop inclusive.
func Linspace(dt DType, start, stop float64, n int) *Tensor {
	if n < 0 {
		Fail("Linspace", "negative count %d", n)
	}
	vals := make([]float64, n)
	for i := range vals {
		if n == 1 {
			vals[i] = start
		} else {
			vals[i] = start + (stop-start)*float64(i)/float64(n-1)
		}
	}
	return FromValues(dt, vals, n)
}

// Eye returns the n×n identity matrix.
func Eye(dt DType, n int) *Tensor {
	t := New(dt, n, n)
	for i := 0; i < n; i++ {
		t.setFlat(i*n+i, 1)
	}
	return t
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns the dimensions. The slice must not be modified.
func (t *Tensor) Shape() []int { return t.shape }

// Strides returns the strides in elements. The slice must not be modified.
func (t *Tensor) Strides() []int { return t.strides }

// Offset returns the index of the first element in the storage.
func (t *Tensor) Offset() int { return t.offset }

// Dim returns the number of dimensions (0 for a scalar).
func (t *Tensor) Dim() int { return len(t.shape) }

// Size returns the number of elements.
func (t *Tensor) Size() int { return shapeSize(t.shape) }

// IsContiguous reports whether the elements are laid out row-major without
// gaps, so Float32s/Float64s can expose them directly.
func (t *Tensor) IsContiguous() bool {
	want := 1
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] != 1 && t.strides[i] != want {
			return false
		}
		want *= t.shape[i]
	}
	return true
}

// Float32s returns the elements of a contiguous float32 tensor, sharing
// memory. It panics for float64 or non-contiguous tensors (use Contiguous).
func (t *Tensor) Float32s() []float32 {
	if t.dev != nil {
		hostOnly("Float32s", t)
	}
	if t.dtype != Float32 {
		Fail("Float32s", "tensor is %v", t.dtype)
	}
	if !t.IsContiguous() {
		Fail("Float32s", "tensor of shape %v strides %v is not contiguous", t.shape, t.strides)
	}
	return t.f32[t.offset : t.offset+t.Size()]
}

// Float64s returns the elements of a contiguous float64 tensor, sharing
// memory. It panics for float32 or non-contiguous tensors (use Contiguous).
func (t *Tensor) Float64s() []float64 {
	if t.dev != nil {
		hostOnly("Float64s", t)
	}
	if t.dtype != Float64 {
		Fail("Float64s", "tensor is %v", t.dtype)
	}
	if !t.IsContiguous() {
		Fail("Float64s", "tensor of shape %v strides %v is not contiguous", t.shape, t.strides)
	}
	return t.f64[t.offset : t.offset+t.Size()]
}

// Values returns a copy of the elements in row-major order as float64
// (from a GPU tensor, after the work queued on the device).
func (t *Tensor) Values() []float64 {
	if t.dev != nil {
		return t.To(CPU).Values()
	}
	c := t.Contiguous()
	out := make([]float64, c.Size())
	if c.dtype == Float32 {
		for i, v := range c.Float32s() {
			out[i] = float64(v)
		}
	} else {
		copy(out, c.Float64s())
	}
	return out
}

// At returns the element at the given index as float64.
func (t *Tensor) At(idx ...int) float64 {
	off := t.flatIndex("At", idx)
	if t.dev != nil {
		return t.deviceElement("At", off)
	}
	if t.dtype == Float32 {
		return float64(t.f32[off])
	}
	return t.f64[off]
}

// SetAt stores v at the given index.
func (t *Tensor) SetAt(v float64, idx ...int) {
	t.setFlat(t.flatIndex("SetAt", idx), v)
}

// Item returns the single element of a tensor of size 1.
func (t *Tensor) Item() float64 {
	if t.Size() != 1 {
		Fail("Item", "tensor of shape %v has %d elements, not 1", t.shape, t.Size())
	}
	if t.dev != nil {
		return t.deviceElement("Item", t.offset)
	}
	if t.dtype == Float32 {
		return float64(t.f32[t.offset])
	}
	return t.f64[t.offset]
}

// Fill sets every element to v.
func (t *Tensor) Fill(v float64) {
	if t.dev != nil {
		t.deviceFill(v)
		return
	}
	if t.dtype == Float32 {
		fillT(t, float32(v))
	} else {
		fillT(t, v)
	}
}

func fillT[T Float](t *Tensor, v T) {
	if t.IsContiguous() {
		d := storage[T](t)[t.offset : t.offset+t.Size()]
		for i := range d {
			d[i] = v
		}
		return
	}
	forEachRow1(t, func(d []T, off, stride, n int) {
		for i := 0; i < n; i++ {
			d[off+i*stride] = v
		}
	})
}

// Contiguous returns t if it is contiguous, else a contiguous copy.
func (t *Tensor) Contiguous() *Tensor {
	if t.IsContiguous() {
		return t
	}
	return t.Clone()
}

// Clone returns a contiguous copy of t, on t's device.
func (t *Tensor) Clone() *Tensor {
	out := newUninitOn("Clone", t.Device(), t.dtype, t.shape...)
	CopyInto(out, t)
	return out
}

// CopyInto copies src into dst elementwise; src is broadcast to dst's shape.
// The dtypes must match. dst and src may live on different devices: the
// copy then moves the elements between the CPU and the GPU, as PyTorch's
// copy_ does.
func CopyInto(dst, src *Tensor) {
	sameDType("CopyInto", dst, src)
	copyTrusted(dst, src.broadcastTo("CopyInto", dst.shape))
}

// copyTrusted is CopyInto after validation, the trusted kernel graph calls
// (internal/unchecked): s has dst's dtype and shape.
func copyTrusted(dst, s *Tensor) {
	if dst.dev != nil || s.dev != nil {
		gpuCopy("Copy", dst, s)
		return
	}
	if n := dst.Size(); n >= 2*parallelElemMin && len(dst.shape) > 1 && dst.shape[0] > 1 &&
		!(dst.IsContiguous() && s.IsContiguous()) && runtime.GOMAXPROCS(0) > 1 {
		// A strided copy (a permuted view made contiguous) walks short runs
		// that the elementwise splitting never sees: split the outer axis.
		rows := dst.shape[0]
		parallelRange(rows, max(1, rows*parallelElemMin/n), func(lo, hi int) {
			copySerial(sliceTrusted(dst, 0, lo, hi, 1), sliceTrusted(s, 0, lo, hi, 1))
		})
		return
	}
	copySerial(dst, s)
}

// copySerial is copyTrusted on the calling goroutine (contiguous runs long
// enough are still split by unaryApply).
func copySerial(dst, s *Tensor) {
	if dst.dtype == Float32 {
		unaryApply[float32](dst, s, func(d, a []float32) { copy(d, a) }, func(x float32) float32 { return x })
	} else {
		unaryApply[float64](dst, s, func(d, a []float64) { copy(d, a) }, func(x float64) float64 { return x })
	}
}

// Cast returns a copy of t converted to dtype dt (t itself if it already
// has that dtype).
func (t *Tensor) Cast(dt DType) *Tensor {
	if t.dtype == dt {
		return t
	}
	if t.dev != nil {
		return t.deviceCast(newUninitOn("Cast", t.Device(), dt, t.shape...))
	}
	out := New(dt, t.shape...)
	c := t.Contiguous()
	if dt == Float64 {
		for i, v := range c.Float32s() {
			out.f64[i] = float64(v)
		}
	} else {
		for i, v := range c.Float64s() {
			out.f32[i] = float32(v)
		}
	}
	return out
}

// CastTo writes t converted to dst's dtype into dst, which must have t's
// shape, be contiguous and live on t's device, and returns dst.
func CastTo(dst, t *Tensor) *Tensor {
	const op = "CastTo"
	if dst == nil || t == nil {
		Fail(op, "nil operand")
	}
	if !slices.Equal(dst.shape, t.shape) || !dst.IsContiguous() {
		Fail(op, "destination %v must be contiguous with the shape of %v", describe(dst), describe(t))
	}
	if dst.dtype == t.dtype {
		CopyInto(dst, t)
		return dst
	}
	if dst.dev != nil || t.dev != nil {
		sameDevice(op, dst, t)
		return t.deviceCast(dst)
	}
	CopyInto(dst, t.Cast(dst.dtype))
	return dst
}

// String formats small tensors in full and large ones by shape.
func (t *Tensor) String() string {
	if t.Size() > 64 {
		return fmt.Sprintf("Tensor(%v, shape=%v)", t.dtype, t.shape)
	}
	var b strings.Builder
	vals := t.Values()
	var rec func(dim, off int)
	rec = func(dim, off int) {
		if dim == len(t.shape) {
			fmt.Fprintf(&b, "%.6g", vals[off])
			return
		}
		b.WriteByte('[')
		inner := shapeSize(t.shape[dim+1:])
		for i := 0; i < t.shape[dim]; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			rec(dim+1, off+i*inner)
		}
		b.WriteByte(']')
	}
	rec(0, 0)
	return b.String()
}

// storage returns the whole backing slice of t as []T; T must match the
// dtype (guaranteed by callers dispatching on DType).
func storage[T Float](t *Tensor) []T {
	if t.dev != nil {
		noHostMemory(t)
	}
	var z T
	if _, ok := any(z).(float32); ok {
		return any(t.f32).([]T)
	}
	return any(t.f64).([]T)
}

// dtypeOf returns the DType for the Go type T.
func dtypeOf[T Float]() DType {
	var z T
	if _, ok := any(z).(float32); ok {
		return Float32
	}
	return Float64
}

func (t *Tensor) setFlat(off int, v float64) {
	if t.dev != nil {
		hostOnly("SetAt", t)
	}
	if t.dtype == Float32 {
		t.f32[off] = float32(v)
	} else {
		t.f64[off] = v
	}
}

func (t *Tensor) flatIndex(op string, idx []int) int {
	if len(idx) != len(t.shape) {
		Fail(op, "%d indices for a tensor of shape %v", len(idx), t.shape)
	}
	off := t.offset
	for i, j := range idx {
		if j < 0 || j >= t.shape[i] {
			Fail(op, "index %v out of range for shape %v", idx, t.shape)
		}
		off += j * t.strides[i]
	}
	return off
}

// maxElements caps the element count of a shape. It is far above any
// allocatable size yet keeps every size and stride product well inside int,
// so an absurd shape fails here with a *Error instead of wrapping around or
// reaching make as a runtime panic.
const maxElements = 1 << 48

// checkShape returns the element count of a shape given by a caller,
// failing for op when a dimension is negative or the count (or any single
// dimension) exceeds maxElements.
func checkShape(op string, shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			Fail(op, "negative dimension in shape %v", shape)
		}
		// n ≤ maxElements here, so the test cannot overflow.
		if d > maxElements || (d > 0 && n > maxElements/d) {
			Fail(op, "shape %v has more than %d elements", fmtShape(shape), maxElements)
		}
		n *= d
	}
	return n
}

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func rowMajorStrides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

func cloneInts(s []int) []int { return append([]int{}, s...) }

func sameDType(op string, ts ...*Tensor) {
	for _, t := range ts[1:] {
		if t.dtype != ts[0].dtype {
			Fail(op, "mixed dtypes: %s", describe(ts...))
		}
	}
}

// describe formats operands as "(2, 3) float32 and (3,) float64".
func describe(ts ...*Tensor) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%v %v", fmtShape(t.shape), t.dtype)
	}
	return strings.Join(parts, " and ")
}

// fmtShape formats a shape the NumPy way: (2, 3), (3,), ().
func fmtShape(s []int) string { return FormatShape(s) }
