package data

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

// ReadNPY reads one NumPy .npy array from r (name is used in errors):
// little-endian float32 ('<f4', kept float32), float64 ('<f8'), int64
// ('<i8', as float64; values beyond ±2⁵³ are an error) or uint8 ('|u1', as
// float64), in C order. Fortran order, other dtypes, a shape whose size
// overflows, truncated data and bytes after the array are errors naming
// the file. Memory grows with the bytes actually read, never with what a
// header claims, so a short file with a lying header costs nothing.
func ReadNPY(r io.Reader, name string) (*tensor.Tensor, error) {
	var magic [8]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil || string(magic[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("data: %s: not a .npy file (bad magic)", name)
	}
	var hlen int
	switch magic[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("data: %s: truncated header length", name)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("data: %s: truncated header length", name)
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return nil, fmt.Errorf("data: %s: unsupported .npy version %d.%d", name, magic[6], magic[7])
	}
	if hlen > 1<<20 {
		return nil, fmt.Errorf("data: %s: header of %d bytes is implausibly long", name, hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("data: %s: truncated header", name)
	}
	descr, fortran, shape, err := parseNPYHeader(string(hdr))
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	if fortran {
		return nil, fmt.Errorf("data: %s: Fortran-ordered arrays are not supported (save with C order)", name)
	}
	width := map[string]int{"<f4": 4, "<f8": 8, "<i8": 8, "|u1": 1, "<u1": 1}[descr]
	if width == 0 {
		return nil, fmt.Errorf("data: %s: unsupported dtype %q (want <f4, <f8, <i8 or |u1)", name, descr)
	}
	n, ok := npySize(shape, width)
	if !ok {
		return nil, fmt.Errorf("data: %s: shape %v of %d-byte elements is too large to hold", name, shape, width)
	}
	// io.ReadAll grows its buffer with the data, so a header that claims
	// more than the file holds is found out without allocating its claim;
	// one byte beyond the claim is read to find trailing data.
	raw, err := io.ReadAll(io.LimitReader(r, int64(n*width)+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("data: %s: reading the data: %w", name, err)
	case len(raw) < n*width:
		return nil, fmt.Errorf("data: %s: truncated data: %d of %d bytes", name, len(raw), n*width)
	case len(raw) > n*width:
		return nil, fmt.Errorf("data: %s: more data than the header's shape %v holds (%d bytes)", name, shape, n*width)
	}
	le := binary.LittleEndian
	if descr == "<f4" {
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		t := tensor.New(tensor.Float32, shape...)
		copy(t.Float32s(), v)
		return t, nil
	}
	v := make([]float64, n)
	for i := range v {
		switch descr {
		case "<f8":
			v[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		case "<i8":
			x := int64(le.Uint64(raw[8*i:]))
			if x > 1<<53 || x < -(1<<53) {
				return nil, fmt.Errorf("data: %s: int64 value %d at index %d cannot be held exactly as a float64", name, x, i)
			}
			v[i] = float64(x)
		default:
			v[i] = float64(raw[i])
		}
	}
	return tensor.FromFloat64s(v, shape...), nil
}

// maxNPYBytes bounds an array's data, far above any real file, so that
// n·width is computed without overflow.
const maxNPYBytes = 1 << 46

// npySize returns the number of elements of shape and whether they fit in
// maxNPYBytes bytes of width-byte elements.
func npySize(shape []int, width int) (int, bool) {
	n := 1
	for _, d := range shape {
		if d == 0 {
			return 0, true
		}
		if n > maxNPYBytes/width/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

var (
	npyDescr   = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// parseNPYHeader reads the header dictionary's three keys.
func parseNPYHeader(h string) (descr string, fortran bool, shape []int, err error) {
	d, f, s := npyDescr.FindStringSubmatch(h), npyFortran.FindStringSubmatch(h), npyShape.FindStringSubmatch(h)
	if d == nil || f == nil || s == nil {
		return "", false, nil, fmt.Errorf("malformed header %q", strings.TrimSpace(h))
	}
	for _, p := range strings.Split(s[1], ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		k, err := strconv.Atoi(p)
		if err != nil || k < 0 {
			return "", false, nil, fmt.Errorf("bad shape %q", s[1])
		}
		shape = append(shape, k)
	}
	return d[1], f[1] == "True", shape, nil
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

// ReadNPZ reads every array of a NumPy .npz archive (zip of .npy files,
// compressed or not) held in b, keyed by name without ".npy".
func ReadNPZ(b []byte, name string) (map[string]*tensor.Tensor, error) {
	z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("data: %s: not a .npz archive: %w", name, err)
	}
	out := map[string]*tensor.Tensor{}
	for _, f := range z.File {
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("data: %s/%s: %w", name, f.Name, err)
		}
		t, err := ReadNPY(rc, name+"/"+f.Name)
		rc.Close()
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = t
	}
	return out, nil
}

// LoadNPZ reads the .npz file at path.
func LoadNPZ(path string) (map[string]*tensor.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return ReadNPZ(b, path)
}
