//go:build linux && (amd64 || arm64)

package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// Float is the set of element types the device holds.
type Float interface{ ~float32 | ~float64 }

// Elem is what Upload and Download copy: the floats, and the int32
// indices of MaxPool.
type Elem interface{ Float | ~int32 }

func (d *Driver) rawAlloc(n int) (uint64, error) {
	var p uint64
	err := check(fmt.Sprintf("cuMemAlloc(%d bytes)", n), d.api.memAlloc(&p, uintptr(n)))
	return p, err
}

func (d *Driver) rawFree(p uint64) error { return check("cuMemFree", d.api.memFree(p)) }

func isOutOfMemory(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == OutOfMemory
}

// Alloc returns a device buffer of at least bytes bytes (> 0), recycled
// from the Driver's cache when one of its size class is free. Its content
// is undefined. Give it back with Release.
func (d *Driver) Alloc(bytes int) (*Buffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("cuda: Alloc(%d): the size must be positive", bytes)
	}
	var b *Buffer
	err := d.do(func() (err error) {
		b, err = d.pool.get(bytes, isOutOfMemory)
		return err
	})
	return b, err
}

// Release returns b to the Driver's cache for reuse; b must not be used
// afterwards. Releasing nil does nothing; releasing a view (Buffer.Slice)
// panics, as it would hand the cache memory it does not own.
func (d *Driver) Release(b *Buffer) {
	if b != nil && b.view {
		panic("cuda: Release of a Buffer.Slice view; release the buffer it was sliced from")
	}
	if b == nil || b.size == 0 {
		return
	}
	d.mu.Lock()
	d.pool.put(b)
	d.mu.Unlock()
}

// Trim frees every cached buffer, giving the memory back to the driver.
func (d *Driver) Trim() error { return d.do(d.pool.trim) }

// Cached returns the bytes held in the cache of free buffers.
func (d *Driver) Cached() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pool.cached
}

// Zero sets the first bytes bytes of b to zero.
func (d *Driver) Zero(b *Buffer, bytes int) error {
	if bytes < 0 || bytes > b.size {
		return fmt.Errorf("cuda: Zero(%d bytes) of a %d-byte buffer", bytes, b.size)
	}
	return d.do(func() error { return check("cuMemsetD8", d.api.memsetD8(b.ptr, 0, uintptr(bytes))) })
}

// CopyDevice copies bytes bytes from src to dst, both on the device.
func (d *Driver) CopyDevice(dst, src *Buffer, bytes int) error {
	if bytes < 0 || bytes > dst.size || bytes > src.size {
		return fmt.Errorf("cuda: CopyDevice of %d bytes between buffers of %d and %d", bytes, dst.size, src.size)
	}
	return d.do(func() error { return check("cuMemcpyDtoD", d.api.memcpyDtoD(dst.ptr, src.ptr, uintptr(bytes))) })
}

// Upload copies src from the host into the start of dst. The copy is
// synchronous: src may be reused when it returns.
func Upload[T Elem](d *Driver, dst *Buffer, src []T) error {
	n := len(src) * int(unsafe.Sizeof(T(0)))
	if n > dst.size {
		return fmt.Errorf("cuda: Upload of %d bytes into a %d-byte buffer", n, dst.size)
	}
	if n == 0 {
		return nil
	}
	return d.do(func() error {
		return check("cuMemcpyHtoD", d.api.memcpyHtoD(dst.ptr, unsafe.Pointer(&src[0]), uintptr(n)))
	})
}

// Download copies the start of src on the device into dst on the host.
// It waits for the work queued on the device before it to finish.
func Download[T Elem](d *Driver, dst []T, src *Buffer) error {
	n := len(dst) * int(unsafe.Sizeof(T(0)))
	if n > src.size {
		return fmt.Errorf("cuda: Download of %d bytes from a %d-byte buffer", n, src.size)
	}
	if n == 0 {
		return nil
	}
	return d.do(func() error {
		return check("cuMemcpyDtoH", d.api.memcpyDtoH(unsafe.Pointer(&dst[0]), src.ptr, uintptr(n)))
	})
}
