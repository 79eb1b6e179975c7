package data

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/gradus-ml/gradus/tensor"
)

// ReadNPY reads one NumPy .npy array from r (name is used in errors):
// little-endian float32 ('<f4', kept float32), float64 ('<f8'), int64
// ('<i8', as float64; values beyond ±2⁵³ are an error) or uint8 ('|u1', as
// float64), in C order. Fortran order, other dtypes, a header that is not
// the dictionary numpy writes, a shape whose size overflows, truncated data
// and bytes after the array are errors naming the file. Memory grows with
// the bytes actually read, never with what a header claims, so a short
// file with a lying header costs nothing.
func ReadNPY(r io.Reader, name string) (*tensor.Tensor, error) {
	h, err := readNPYHeader(r)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	return readNPYData(r, h, name)
}

// readNPYData reads and decodes the data that follows header h, naming
// the array name in its errors: exactly the header's bytes, no fewer and
// no more.
func readNPYData(r io.Reader, h npyHeader, name string) (*tensor.Tensor, error) {
	// io.ReadAll grows its buffer with the data, so a header that claims
	// more than the file holds is found out without allocating its claim;
	// one byte beyond the claim is read to find trailing data.
	want := h.size * h.width
	raw, err := io.ReadAll(io.LimitReader(r, int64(want)+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("data: %s: reading the data: %w", name, err)
	case len(raw) < want:
		return nil, fmt.Errorf("data: %s: truncated data: %d of %d bytes", name, len(raw), want)
	case len(raw) > want:
		return nil, fmt.Errorf("data: %s: more data than the header's shape %v holds (%d bytes)", name, h.shape, want)
	}
	t, err := decodeNPY(h, raw)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	return t, nil
}

// npyHeader is a validated .npy header.
type npyHeader struct {
	descr string
	width int // bytes per element
	shape []int
	size  int // elements; size·width fits in maxNPYBytes
}

// npyWidths are the dtypes ReadNPY reads and their element widths.
var npyWidths = map[string]int{"<f4": 4, "<f8": 8, "<i8": 8, "|u1": 1, "<u1": 1}

// maxNPYHeader bounds the header dictionary; numpy writes under 100 bytes
// for every array Gradus reads.
const maxNPYHeader = 1 << 20

// readNPYHeader reads the magic, version, header length and dictionary,
// and checks the dtype, order and shape.
func readNPYHeader(r io.Reader) (npyHeader, error) {
	var magic [8]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil || string(magic[:6]) != "\x93NUMPY" {
		return npyHeader{}, fmt.Errorf("not a .npy file (bad magic)")
	}
	var hlen uint32
	switch magic[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return npyHeader{}, fmt.Errorf("truncated header length")
		}
		hlen = uint32(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return npyHeader{}, fmt.Errorf("truncated header length")
		}
		hlen = binary.LittleEndian.Uint32(b[:])
	default:
		return npyHeader{}, fmt.Errorf("unsupported .npy version %d.%d", magic[6], magic[7])
	}
	if hlen > maxNPYHeader {
		return npyHeader{}, fmt.Errorf("header of %d bytes is implausibly long", hlen)
	}
	hdr, err := io.ReadAll(io.LimitReader(r, int64(hlen)))
	if err != nil || len(hdr) < int(hlen) {
		return npyHeader{}, fmt.Errorf("truncated header: %d of %d bytes", len(hdr), hlen)
	}
	dict, err := parseNPYDict(string(hdr))
	if err != nil {
		return npyHeader{}, err
	}
	if dict.fortran {
		return npyHeader{}, fmt.Errorf("Fortran-ordered arrays are not supported (save with C order)")
	}
	width := npyWidths[dict.descr]
	if width == 0 {
		return npyHeader{}, fmt.Errorf("unsupported dtype %q (want <f4, <f8, <i8 or |u1)", dict.descr)
	}
	n, ok := npySize(dict.shape, width)
	if !ok {
		return npyHeader{}, fmt.Errorf("shape %v of %d-byte elements is too large to hold", dict.shape, width)
	}
	return npyHeader{descr: dict.descr, width: width, shape: dict.shape, size: n}, nil
}

// decodeNPY converts raw, exactly h.size·h.width little-endian bytes.
func decodeNPY(h npyHeader, raw []byte) (*tensor.Tensor, error) {
	le := binary.LittleEndian
	if h.descr == "<f4" {
		t := tensor.New(tensor.Float32, h.shape...)
		v := t.Float32s()
		for i := range v {
			v[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return t, nil
	}
	t := tensor.New(tensor.Float64, h.shape...)
	v := t.Float64s()
	for i := range v {
		switch h.descr {
		case "<f8":
			v[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		case "<i8":
			x := int64(le.Uint64(raw[8*i:]))
			if x > 1<<53 || x < -(1<<53) {
				return nil, fmt.Errorf("int64 value %d at index %d cannot be held exactly as a float64", x, i)
			}
			v[i] = float64(x)
		default:
			v[i] = float64(raw[i])
		}
	}
	return t, nil
}

// maxNPYBytes bounds an array's data, far above any real file and below
// the tensor package's limit on elements, so that n·width is computed
// without overflow.
const maxNPYBytes = 1 << 46

// npySize returns the number of elements of shape and whether they fit in
// maxNPYBytes bytes of width-byte elements. The dimensions other than 0
// must fit too: an empty array of shape (0, 2⁶⁰) is refused like a full
// one, since no real file has one and its strides would overflow.
func npySize(shape []int, width int) (int, bool) {
	n, zero := 1, false
	for _, d := range shape {
		if d == 0 {
			zero = true
			continue
		}
		if n > maxNPYBytes/width/d {
			return 0, false
		}
		n *= d
	}
	if zero {
		return 0, true
	}
	return n, true
}

// LoadNPY reads the .npy file at path.
func LoadNPY(path string) (*tensor.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	return ReadNPY(f, path)
}
