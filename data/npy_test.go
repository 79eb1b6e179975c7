package data

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// The files of testdata/make_npy.py, with the values written there.
func TestLoadNPY(t *testing.T) {
	f4, err := LoadNPY("testdata/f4.npy")
	require.NoError(t, err)
	assert.Equal(t, tensor.Float32, f4.DType())
	assert.Equal(t, []int{2, 3}, f4.Shape())
	assert.Equal(t, []float64{1.5, -2, 0.25, 3, 4, 5}, f4.Values())
	f8, err := LoadNPY("testdata/f8.npy")
	require.NoError(t, err)
	assert.Equal(t, []float64{0.1, 1e300, -7}, f8.Values())
	i8, err := LoadNPY("testdata/i8.npy")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1}, i8.Shape())
	assert.Equal(t, []float64{-3, 1 << 40}, i8.Values())
	u1, err := LoadNPY("testdata/u1.npy")
	require.NoError(t, err)
	assert.Equal(t, []float64{250, 251, 252, 253, 254, 255}, u1.Values())
	npz, err := LoadNPZ("testdata/pair.npz")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 0, 0, 1}, npz["x"].Values())
	assert.Equal(t, []float64{7, 8}, npz["y"].Values())
}

func TestNPYErrors(t *testing.T) {
	_, err := LoadNPY("testdata/fortran.npy")
	assert.ErrorContains(t, err, "Fortran")
	b, err := os.ReadFile("testdata/f8.npy")
	require.NoError(t, err)
	_, err = ReadNPY(bytes.NewReader(b[:len(b)-3]), "cut.npy")
	assert.ErrorContains(t, err, "cut.npy: truncated data")
	_, err = ReadNPY(bytes.NewReader([]byte("not numpy at all")), "x.npy")
	assert.ErrorContains(t, err, "bad magic")
	_, err = ReadNPZ([]byte("PK nonsense"), "bad.npz")
	assert.ErrorContains(t, err, "not a .npz archive")
}

// npyFile builds a version-1 .npy file with the given header fields and
// data bytes, as numpy.save lays it out (header padded to 64 bytes).
func npyFile(descr, shape string, body []byte) []byte {
	h := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }"
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = append(b, byte(len(h)), byte(len(h)>>8))
	b = append(b, h...)
	return append(b, body...)
}

// Each kind of lying or malformed file is an error naming the file, found
// before anything of the claimed size is allocated.
func TestNPYRejectsLyingHeaders(t *testing.T) {
	eight := bytes.Repeat([]byte{0}, 8)
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"10¹⁰ elements in a tiny file", npyFile("<f8", "(100000, 100000)", eight), "truncated data: 8 of 80000000000 bytes"},
		{"a size that overflows", npyFile("<f8", "(4294967296, 4294967296)", eight), "too large to hold"},
		{"an element count beyond int", npyFile("<f4", "(99999999999999999999,)", eight), "bad shape"},
		{"a negative dimension", npyFile("<f8", "(-1,)", eight), "bad shape"},
		{"fewer elements than the data", npyFile("<f8", "(1,)", append(eight, eight...)), "more data than the header's shape [1] holds"},
		{"one byte too many", npyFile("|u1", "(2,)", []byte{1, 2, 3}), "more data than the header's shape [2] holds"},
		{"one byte too few", npyFile("<f4", "(2,)", []byte{0, 0, 0, 0, 0, 0, 0}), "truncated data: 7 of 8 bytes"},
		{"an unsupported dtype", npyFile("<c16", "(1,)", eight), "unsupported dtype"},
		{"a header without a shape", []byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'}"), "malformed header"},
		{"a header longer than the file", []byte("\x93NUMPY\x01\x00\xff\x00{'descr'"), "truncated header"},
		{"an unknown version", []byte("\x93NUMPY\x09\x00"), "unsupported .npy version 9.0"},
		{"a big-endian dtype", npyFile(">f8", "(1,)", eight), `unsupported dtype ">f8"`},
		{"an empty array of impossible shape", npyFile("<f8", "(0, 281474976710656, 281474976710656)", nil), "too large to hold"},
		{"a version-2 header length beyond the limit", []byte("\x93NUMPY\x02\x00\xff\xff\xff\xff{"), "implausibly long"},
		{"an empty file", nil, "bad magic"},
	} {
		_, err := ReadNPY(bytes.NewReader(c.file), "lie.npy")
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), "lie.npy", c.name)
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
}

// Arrays with no elements and 0-d arrays are valid files.
func TestNPYEmptyAndScalar(t *testing.T) {
	empty, err := ReadNPY(bytes.NewReader(npyFile("<f8", "(0, 3)", nil)), "empty.npy")
	require.NoError(t, err)
	assert.Equal(t, []int{0, 3}, empty.Shape())
	scalar, err := ReadNPY(bytes.NewReader(npyFile("<f8", "()", []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f})), "scalar.npy")
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5}, scalar.Values())
}

// The header must be the dictionary numpy writes: its three keys once
// each and nothing else. A second 'shape' or 'descr' would otherwise be
// read by whichever parser matched first, a silent wrong answer.
func TestNPYRejectsMalformedDictionaries(t *testing.T) {
	eight := bytes.Repeat([]byte{0}, 8)
	raw := func(dict string) []byte {
		b := []byte("\x93NUMPY\x01\x00")
		b = append(b, byte(len(dict)), byte(len(dict)>>8))
		return append(append(b, dict...), eight...)
	}
	for _, c := range []struct {
		name, dict, want string
	}{
		{"a duplicate shape", "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'shape': (2,)}", `key "shape" appears twice`},
		{"a duplicate descr", "{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", `key "descr" appears twice`},
		{"an unknown key", "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", `unexpected key "x"`},
		{"a missing key", "{'descr': '<f8', 'shape': (1,)}", "needs the keys"},
		{"a structured dtype", "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,)}", "structured dtypes"},
		{"fortran_order neither True nor False", "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}", "neither True nor False"},
		{"a shape that is a list", "{'descr': '<f8', 'fortran_order': False, 'shape': [1]}", "bad shape"},
		{"a fractional dimension", "{'descr': '<f8', 'fortran_order': False, 'shape': (1.5,)}", "bad shape"},
		{"an unterminated tuple", "{'descr': '<f8', 'fortran_order': False, 'shape': (1,", "bad shape"},
		{"an unterminated string", "{'descr': '<f8", "descr is not a quoted string"},
		{"an unterminated key", "{'descr", "expected a quoted key"},
		{"text after the dictionary", "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} junk", "follow the dictionary"},
		{"no dictionary", "descr=<f8", "does not start with {"},
	} {
		_, err := ReadNPY(bytes.NewReader(raw(c.dict)), "dict.npy")
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), "dict.npy", c.name)
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
}

// Dictionaries numpy writes or reads: double quotes, no trailing comma,
// Python 2's long integers, a 1-tuple and a version-3 header.
func TestNPYAcceptsNumpyDictionaries(t *testing.T) {
	for _, c := range []struct {
		name, dict string
		version    byte
		shape      []int
	}{
		{"single quotes and a trailing comma", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }", 1, []int{2, 1}},
		{"double quotes", `{"descr": "<f8", "fortran_order": False, "shape": (2,)}`, 1, []int{2}},
		{"Python 2 longs", "{'descr': '<f8', 'fortran_order': False, 'shape': (1L, 2L), }", 1, []int{1, 2}},
		{"keys in another order", "{'shape': (2,), 'fortran_order': False, 'descr': '<f8'}   \n", 1, []int{2}},
		{"a version-3 header", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", 3, []int{2}},
	} {
		b := []byte{0x93, 'N', 'U', 'M', 'P', 'Y', c.version, 0}
		if c.version == 1 {
			b = append(b, byte(len(c.dict)), 0)
		} else {
			b = append(b, byte(len(c.dict)), 0, 0, 0)
		}
		b = append(append(b, c.dict...), make([]byte, 16)...)
		x, err := ReadNPY(bytes.NewReader(b), "ok.npy")
		if assert.NoError(t, err, c.name) {
			assert.Equal(t, c.shape, x.Shape(), c.name)
			assert.Equal(t, []float64{0, 0}, x.Values(), c.name)
		}
	}
}

// encodeNPY writes x as numpy.save would: '<f4' or '<f8', C order. It is
// the writer FuzzReadNPY and FuzzReadNPZ round-trip through.
func encodeNPY(x *tensor.Tensor) []byte {
	shape := "("
	for _, d := range x.Shape() {
		shape += strconv.Itoa(d) + ","
	}
	shape += ")"
	var body []byte
	if x.DType() == tensor.Float32 {
		for _, v := range x.Contiguous().Float32s() {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(v))
		}
		return npyFile("<f4", shape, body)
	}
	for _, v := range x.Contiguous().Float64s() {
		body = binary.LittleEndian.AppendUint64(body, math.Float64bits(v))
	}
	return npyFile("<f8", shape, body)
}

// sameBits reports whether a and b have the same dtype, shape and bits
// (NaN payloads included).
func sameBits(a, b *tensor.Tensor) bool {
	if a.DType() != b.DType() || !slices.Equal(a.Shape(), b.Shape()) {
		return false
	}
	if a.DType() == tensor.Float32 {
		x, y := a.Contiguous().Float32s(), b.Contiguous().Float32s()
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	}
	x, y := a.Contiguous().Float64s(), b.Contiguous().Float64s()
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

// checkShapeSize fails t unless x holds as many elements as its shape
// says.
func checkShapeSize(t *testing.T, x *tensor.Tensor) {
	n := 1
	for _, d := range x.Shape() {
		n *= d
	}
	if x.Size() != n {
		t.Fatalf("shape %v holds %d elements, not %d", x.Shape(), n, x.Size())
	}
}

// FuzzReadNPY: no input panics or allocates beyond its own size; what is
// accepted has as many elements as its shape says, no more than the file
// has bytes, and reads back the same after encodeNPY. The seed corpus
// holds each class of TestNPYRejectsLyingHeaders and
// TestNPYRejectsMalformedDictionaries, and the valid files.
func FuzzReadNPY(f *testing.F) {
	eight := bytes.Repeat([]byte{1}, 8)
	nan := []byte{1, 0, 0, 0, 0, 0, 0xf8, 0x7f}
	for _, seed := range [][]byte{
		npyFile("<f8", "(1,)", eight),
		npyFile("<f4", "(2,)", eight),
		npyFile("<i8", "(1, 1)", eight),
		npyFile("|u1", "(8,)", eight),
		npyFile("<f8", "(1,)", nan),
		npyFile("<f8", "(100000, 100000)", eight),
		npyFile("<f8", "(4294967296, 4294967296)", eight),
		npyFile("<f8", "(0, 281474976710656, 281474976710656)", nil),
		npyFile("<f8", "(-1,)", eight),
		npyFile("<f8", "(0, 3)", nil),
		npyFile("<f8", "()", eight),
		npyFile("<f8", "(1,)", append(eight, 0)),
		npyFile("<f8", "(2,)", eight),
		npyFile(">f8", "(1,)", eight),
		npyFile("<i8", "(1,)", []byte{0, 0, 0, 0, 0, 0, 0x40, 0}),
		[]byte("\x93NUMPY\x01\x00\x40\x00{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'shape': (2,)}"),
		[]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff{"),
		[]byte("\x93NUMPY\x09\x00"),
		nil,
	} {
		f.Add(seed)
	}
	for _, path := range []string{"testdata/f4.npy", "testdata/f8.npy", "testdata/i8.npy", "testdata/u1.npy", "testdata/fortran.npy"} {
		b, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ReadNPY(bytes.NewReader(b), "fuzz.npy")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.npy") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkShapeSize(t, x)
		if x.Size() > len(b) {
			t.Fatalf("accepted %d elements from %d bytes", x.Size(), len(b))
		}
		y, err := ReadNPY(bytes.NewReader(encodeNPY(x)), "again.npy")
		if err != nil || !sameBits(x, y) {
			t.Fatalf("does not round-trip: %v", err)
		}
	})
}
