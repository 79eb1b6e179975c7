//go:build unix

package checkpoint

import (
	"os"
	"syscall"
)

// mapFile maps the whole file read-only into memory; unmap releases it.
// Decoding from the mapping reads the file through the page cache without
// a read call per tensor, and without a second copy of large files.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), err error) {
	if size == 0 || int64(int(size)) != size {
		return nil, nil, syscall.EINVAL
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}
