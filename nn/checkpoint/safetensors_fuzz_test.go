package checkpoint

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// onlyReader hides every method but Read, so Read cannot learn the size.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// A tiny input whose header claims a large header or large tensors is an
// error that costs memory in proportion to the input, from a stream as
// from a file.
func TestReadAllocatesWithTheBytesNotTheClaim(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"a 100 MB header claimed by 10 bytes", cat([]byte{0x00, 0xe1, 0xf5, 0x05, 0, 0, 0, 0}, []byte(`{}`))},
		{"1 GB of tensor claimed by 8 bytes", header(`{"w":{"dtype":"U8","shape":[1000000000],"data_offsets":[0,1000000000]}}`, make([]byte, 8))},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := Read(onlyReader{bytes.NewReader(c.data)})
		runtime.ReadMemStats(&after)
		assert.ErrorIs(t, err, ErrFormat, c.name)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), c.name)
	}
}

// FuzzReadSafetensors: no input panics, from a stream (Read) or a file
// (ReadFile); what is accepted holds tensors whose size is the product of
// their shape, needs exactly the bytes given, and writes (Write) and
// reads back to the same dtypes, shapes, bits and metadata. ReadFile and
// Read agree on every input. The seed corpus is readCases (each class of
// malformed header, length, offsets, dtype and data), the fixtures and the
// PyTorch files.
func FuzzReadSafetensors(f *testing.F) {
	for _, c := range readCases {
		f.Add(c.data)
	}
	for _, c := range fixtures {
		f.Add(c.bytes)
	}
	for _, name := range []string{"gradus_cnn", "torch_cnn", "torch_lstm"} {
		b, err := os.ReadFile("testdata/" + name + ".safetensors")
		require.NoError(f, err)
		f.Add(b)
	}
	path := f.TempDir() + "/fuzz.safetensors"
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, meta, err := Read(onlyReader{bytes.NewReader(b)})
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fts, _, ferr := ReadFile(path)
		if (err == nil) != (ferr == nil) {
			t.Fatalf("Read says %v, ReadFile says %v", err, ferr)
		}
		if err != nil {
			if !errors.Is(err, ErrFormat) || !errors.Is(ferr, ErrFormat) {
				t.Fatalf("malformed data is not a FormatError: %v / %v", err, ferr)
			}
			return
		}
		var bytesNeeded int
		for name, x := range ts {
			n := 1
			for _, d := range x.Shape() {
				n *= d
			}
			if x.Size() != n {
				t.Fatalf("%q: shape %v holds %d elements, not %d", name, x.Shape(), n, x.Size())
			}
			if !sameTensor(x, fts[name]) {
				t.Fatalf("%q: Read and ReadFile disagree", name)
			}
			bytesNeeded += n
		}
		if bytesNeeded > len(b) {
			t.Fatalf("%d elements from %d bytes", bytesNeeded, len(b))
		}
		var buf bytes.Buffer
		if err := Write(&buf, ts, meta); err != nil {
			t.Fatalf("what Read accepts, Write refuses: %v", err)
		}
		again, meta2, err := Read(&buf)
		if err != nil {
			t.Fatalf("what Write wrote, Read refuses: %v", err)
		}
		if !maps.Equal(meta, meta2) || len(again) != len(ts) {
			t.Fatalf("metadata %v or %d tensors read back as %v, %d tensors", meta, len(ts), meta2, len(again))
		}
		for name, x := range ts {
			if !sameTensor(x, again[name]) {
				t.Fatalf("%q does not round-trip", name)
			}
		}
	})
}

// sameTensor reports whether a and b have the same dtype, shape and bits.
func sameTensor(a, b *tensor.Tensor) bool {
	if b == nil || a.DType() != b.DType() || !slices.Equal(a.Shape(), b.Shape()) {
		return false
	}
	if a.DType() == tensor.Float32 {
		x, y := a.Contiguous().Float32s(), b.Contiguous().Float32s()
		return slices.EqualFunc(x, y, func(p, q float32) bool { return math.Float32bits(p) == math.Float32bits(q) })
	}
	x, y := a.Contiguous().Float64s(), b.Contiguous().Float64s()
	return slices.EqualFunc(x, y, func(p, q float64) bool { return math.Float64bits(p) == math.Float64bits(q) })
}
