package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// IDX magic numbers: two zero bytes, the element type (0x08 = unsigned
// byte) and the number of dimensions.
const (
	idxImagesMagic = 0x00000803 // uint8, 3 dimensions (n, rows, cols)
	idxLabelsMagic = 0x00000801 // uint8, 1 dimension (n)
)

// maxIDXElements bounds the size a header may announce, so a corrupt
// header fails with an error instead of an enormous allocation. The full
// MNIST training set has 47 million pixels.
const maxIDXElements = 1 << 31

// ReadIDXImages reads an IDX file of uint8 images (magic 0x00000803, as the
// MNIST image files), gzipped or not: gzip is detected by its magic bytes
// 1f 8b, not by the file name. It returns the number of images, their
// height and width, and the pixels, row-major, image after image
// (n·rows·cols bytes). name is used in errors, which are returned for a
// wrong magic number, zero or oversized dimensions, a truncated body,
// trailing bytes and corrupt gzip data.
func ReadIDXImages(r io.Reader, name string) (n, rows, cols int, pixels []uint8, err error) {
	dims, body, err := readIDX(r, name, idxImagesMagic, 3)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	return dims[0], dims[1], dims[2], body, nil
}

// ReadIDXLabels reads an IDX file of uint8 labels (magic 0x00000801, as the
// MNIST label files), gzipped or not, and returns one int per label. Errors
// name the file, as ReadIDXImages's do.
func ReadIDXLabels(r io.Reader, name string) ([]int, error) {
	_, body, err := readIDX(r, name, idxLabelsMagic, 1)
	if err != nil {
		return nil, err
	}
	labels := make([]int, len(body))
	for i, b := range body {
		labels[i] = int(b)
	}
	return labels, nil
}

// readIDX checks the header of an IDX file against magic, reads its ndim
// big-endian uint32 dimensions and then exactly their product of bytes,
// which must end the stream.
func readIDX(r io.Reader, name string, magic uint32, ndim int) (dims []int, body []byte, err error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("data: %s: gzip: %w", name, err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	hdr := make([]byte, 4*(1+ndim))
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, fmt.Errorf("data: %s: reading the IDX header (%d bytes): %w", name, len(hdr), eofIsTruncation(err))
	}
	if got := binary.BigEndian.Uint32(hdr); got != magic {
		return nil, nil, fmt.Errorf("data: %s: IDX magic number is 0x%08x, want 0x%08x", name, got, magic)
	}
	dims = make([]int, ndim)
	size := 1
	for i := range dims {
		d := int(binary.BigEndian.Uint32(hdr[4*(i+1):]))
		if d == 0 {
			return nil, nil, fmt.Errorf("data: %s: IDX dimension %d is 0", name, i)
		}
		dims[i] = d
		size *= d
		if size > maxIDXElements {
			return nil, nil, fmt.Errorf("data: %s: IDX dimensions %v announce more than %d bytes", name, dims[:i+1], maxIDXElements)
		}
	}
	body, err = readBody(r, size)
	if err != nil {
		return nil, nil, fmt.Errorf("data: %s: %w (IDX dimensions %v)", name, err, dims)
	}
	return dims, body, nil
}

// readBody reads exactly size bytes that must end the stream. It starts
// with a 64 KiB buffer and doubles it as data arrives rather than trusting
// the header's size up front, so a corrupt header on a short file costs
// no more than the file's own bytes (a 16-byte file claiming 2 GiB
// allocates 64 KiB, not 2 GiB).
// Reading up to the end also makes gzip verify its checksum.
func readBody(r io.Reader, size int) ([]byte, error) {
	buf := make([]byte, 0, min(size, 1<<16))
	for len(buf) < size {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(size-len(buf), cap(buf)))
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), size)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if len(buf) < size {
				return nil, fmt.Errorf("truncated: %d bytes of data, want %d", len(buf), size)
			}
			return buf, nil
		}
		if err != nil {
			return nil, eofIsTruncation(err)
		}
	}
	var one [1]byte
	switch n, err := io.ReadFull(r, one[:]); {
	case n > 0:
		return nil, fmt.Errorf("trailing bytes after the %d bytes of data", size)
	case err != io.EOF:
		return nil, err
	}
	return buf, nil
}

// eofIsTruncation turns an early end of file into a clearer error.
func eofIsTruncation(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("truncated: unexpected end of file")
	}
	return err
}
