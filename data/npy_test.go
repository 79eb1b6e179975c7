package data

import (
	"bytes"
	"os"
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

// FuzzReadNPY: no input panics or allocates beyond its own size; what is
// accepted has as many elements as its shape says. The seed corpus holds
// each class of TestNPYRejectsLyingHeaders and the valid files.
func FuzzReadNPY(f *testing.F) {
	eight := bytes.Repeat([]byte{1}, 8)
	for _, seed := range [][]byte{
		npyFile("<f8", "(1,)", eight),
		npyFile("<f4", "(2,)", eight),
		npyFile("<i8", "(1, 1)", eight),
		npyFile("|u1", "(8,)", eight),
		npyFile("<f8", "(100000, 100000)", eight),
		npyFile("<f8", "(4294967296, 4294967296)", eight),
		npyFile("<f8", "(0, 3)", nil),
		npyFile("<f8", "()", eight),
		npyFile("<f8", "(1,)", append(eight, 0)),
	} {
		f.Add(seed)
	}
	for _, path := range []string{"testdata/f4.npy", "testdata/f8.npy", "testdata/i8.npy", "testdata/u1.npy"} {
		b, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ReadNPY(bytes.NewReader(b), "fuzz.npy")
		if err != nil {
			return
		}
		n := 1
		for _, d := range x.Shape() {
			n *= d
		}
		if x.Size() != n || n > len(b) {
			t.Fatalf("accepted shape %v with %d elements from %d bytes", x.Shape(), x.Size(), len(b))
		}
	})
}
