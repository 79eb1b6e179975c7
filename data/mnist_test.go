package data

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// embedded returns the decompressed bytes of an embedded file.
func embedded(t *testing.T, name string) []byte {
	t.Helper()
	f, err := Open(name)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return b
}

// The data README: "The header of train-images decodes as
// 00 00 08 03 | 00 00 1f 40 | 00 00 00 1c | 00 00 00 1c", i.e. 8000×28×28.
func TestTrainImagesHeader(t *testing.T) {
	raw := embedded(t, "mnist10k/train-images-idx3-ubyte.gz")
	assert.Equal(t, []byte{0, 0, 8, 3, 0, 0, 0x1f, 0x40, 0, 0, 0, 0x1c, 0, 0, 0, 0x1c}, raw[:16])
	for _, gz := range []bool{true, false} { // detected by magic bytes, both ways
		var r io.Reader = bytes.NewReader(raw)
		if gz {
			f, err := Open("mnist10k/train-images-idx3-ubyte.gz")
			require.NoError(t, err)
			defer f.Close()
			r = f
		}
		n, rows, cols, pix, err := ReadIDXImages(r, "train-images")
		require.NoError(t, err)
		assert.Equal(t, []int{8000, 28, 28}, []int{n, rows, cols})
		assert.Len(t, pix, 8000*28*28)
		assert.Equal(t, raw[16:], pix)
	}
}

// The data README: train image 0 is a 9, and the class counts of the two
// splits.
func TestMNISTLabelsAndCounts(t *testing.T) {
	for _, c := range []struct {
		split  string
		counts [10]int
	}{
		{"train", [10]int{793, 904, 780, 826, 793, 700, 798, 865, 768, 773}},
		{"test", [10]int{208, 223, 211, 206, 187, 163, 216, 205, 176, 205}},
	} {
		x, labels, err := MNIST(c.split)
		require.NoError(t, err, c.split)
		n := c.counts[0] + c.counts[1] + c.counts[2] + c.counts[3] + c.counts[4] +
			c.counts[5] + c.counts[6] + c.counts[7] + c.counts[8] + c.counts[9]
		assert.Equal(t, []int{n, 784}, x.Shape(), c.split)
		var counts [10]int
		for _, l := range labels {
			counts[l]++
		}
		assert.Equal(t, c.counts, counts, c.split)
		lo, hi := float32(1), float32(0)
		for _, v := range x.Float32s() {
			lo, hi = min(lo, v), max(hi, v)
		}
		// Background is byte 0 and MNIST strokes saturate at byte 255.
		assert.Equal(t, float32(0), lo, c.split)
		assert.Equal(t, float32(1), hi, c.split)
		if c.split == "train" {
			assert.Equal(t, 9, labels[0])
		}
	}
	_, _, err := MNIST("validation")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "validation")
}

// Pixels are the IDX bytes divided by 255.
func TestMNISTPixelScaling(t *testing.T) {
	raw := embedded(t, "mnist10k/test-images-idx3-ubyte.gz")[16:]
	x, _, err := MNIST("test")
	require.NoError(t, err)
	v := x.Float32s()
	for _, i := range []int{0, 17*784 + 400, len(raw) - 1} {
		assert.Equal(t, float32(raw[i])/255, v[i])
	}
}

// MNISTFromDir finds the distribution's file names, gzipped or not, and
// gives the same data as the embedded copy.
func TestMNISTFromDir(t *testing.T) {
	dir := t.TempDir()
	copyTo := func(from, to string, gz bool) {
		var b []byte
		if gz {
			f, err := Open(from)
			require.NoError(t, err)
			b, err = io.ReadAll(f)
			require.NoError(t, err)
			f.Close()
		} else {
			b = embedded(t, from)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, to), b, 0o644))
	}
	copyTo("mnist10k/test-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte", false)
	copyTo("mnist10k/test-labels-idx1-ubyte.gz", "t10k-labels.idx1-ubyte.gz", true)

	want, wantLabels, err := MNIST("test")
	require.NoError(t, err)
	got, labels, err := MNISTFromDir(dir, "test")
	require.NoError(t, err)
	assert.Equal(t, want.Shape(), got.Shape())
	assert.Equal(t, want.Float32s(), got.Float32s())
	assert.Equal(t, wantLabels, labels)

	_, _, err = MNISTFromDir(dir, "train")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "train-images-idx3-ubyte")
	assert.Contains(t, err.Error(), dir)
}

// A mismatch between the image and label files names both files.
func TestMNISTFromDirCountMismatch(t *testing.T) {
	dir := t.TempDir()
	img := idxFile(0x803, []uint32{2, 28, 28}, make([]byte, 2*784))
	lbl := idxFile(0x801, []uint32{3}, []byte{1, 2, 3})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte"), img, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte"), lbl, 0o644))
	_, _, err := MNISTFromDir(dir, "train")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "3 labels")
	assert.Contains(t, err.Error(), "2 images")
}

// idxFile builds an IDX file: magic, big-endian dims, body.
func idxFile(magic uint32, dims []uint32, body []byte) []byte {
	var b []byte
	for _, v := range append([]uint32{magic}, dims...) {
		b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, body...)
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestReadIDXGood(t *testing.T) {
	img := idxFile(0x803, []uint32{2, 1, 3}, []byte{1, 2, 3, 4, 5, 6})
	for _, b := range [][]byte{img, gzipped(img)} {
		n, rows, cols, pix, err := ReadIDXImages(bytes.NewReader(b), "tiny")
		require.NoError(t, err)
		assert.Equal(t, []int{2, 1, 3}, []int{n, rows, cols})
		assert.Equal(t, []uint8{1, 2, 3, 4, 5, 6}, pix)
	}
	lbl := idxFile(0x801, []uint32{4}, []byte{9, 0, 255, 7})
	for _, b := range [][]byte{lbl, gzipped(lbl)} {
		labels, err := ReadIDXLabels(bytes.NewReader(b), "tiny")
		require.NoError(t, err)
		assert.Equal(t, []int{9, 0, 255, 7}, labels)
	}
}

// Every corrupt or truncated file is an error that names the file.
func TestReadIDXCorrupt(t *testing.T) {
	good := idxFile(0x803, []uint32{2, 2, 2}, make([]byte, 8))
	zgood := gzipped(good)
	badCRC := append([]byte(nil), zgood...)
	badCRC[len(badCRC)-6] ^= 0xff // inside the CRC-32 trailer
	for _, c := range []struct {
		name, want string
		data       []byte
		labels     bool
	}{
		{"empty.idx", "header", nil, false},
		{"short-header.idx", "header", good[:10], false},
		{"labels-magic.idx", "magic", idxFile(0x801, []uint32{2, 2, 2}, make([]byte, 8)), false},
		{"images-as-labels.idx", "magic", good, true},
		{"float-magic.idx", "0x00000d03", idxFile(0xd03, []uint32{2, 2, 2}, make([]byte, 32)), false},
		{"zero-dim.idx", "dimension 1 is 0", idxFile(0x803, []uint32{2, 0, 2}, nil), false},
		{"huge.idx", "announce", idxFile(0x803, []uint32{1 << 20, 1 << 10, 1 << 10}, nil), false},
		{"lying.idx", "truncated: 8 bytes of data, want 2147483648", idxFile(0x803, []uint32{1 << 11, 1 << 10, 1 << 10}, make([]byte, 8)), false},
		{"lying.idx.gz", "truncated: 3 bytes of data, want 2147483648", gzipped(idxFile(0x801, []uint32{1 << 31}, []byte{1, 2, 3})), true},
		{"truncated.idx", "truncated", good[:len(good)-1], false},
		{"trailing.idx", "trailing", append(append([]byte(nil), good...), 0), false},
		{"truncated.idx.gz", "", zgood[:len(zgood)-10], false},
		{"bad-crc.idx.gz", "checksum", badCRC, false},
		{"truncated-labels.idx", "truncated", idxFile(0x801, []uint32{5}, []byte{1, 2}), true},
	} {
		var err error
		if c.labels {
			_, err = ReadIDXLabels(bytes.NewReader(c.data), c.name)
		} else {
			_, _, _, _, err = ReadIDXImages(bytes.NewReader(c.data), c.name)
		}
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}
