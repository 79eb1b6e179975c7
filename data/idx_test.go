package data

import (
	"bytes"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/tensor"
)

// allocated returns the bytes the heap handed out while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A tiny file whose header claims gigabytes is an error that costs
// memory in proportion to the file, not to the claim: each reader is given
// 16 to 130 bytes claiming 2 to 80 GB and must allocate under 1 MiB.
func TestReadersAllocateWithTheBytesNotTheClaim(t *testing.T) {
	eight := make([]byte, 8)
	lie := npyFile("<f8", "(100000, 100000)", eight)
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"npy claiming 80 GB", func() error { _, err := ReadNPY(bytes.NewReader(lie), "lie.npy"); return err }},
		{"npz entry claiming 80 GB", func() error {
			_, err := ReadNPZ(npzFile(npzEntry{"big.npy", lie, true}), "lie.npz")
			return err
		}},
		{"npz directory claiming 1 GB", func() error {
			one := encodeNPY(tensor.FromFloat64s([]float64{1}, 1))
			_, err := ReadNPZ(patchCentral(npzFile(npzEntry{"a.npy", one, false}), 0, centralSize, 1<<30), "lie.npz")
			return err
		}},
		{"idx images claiming 2 GiB", func() error {
			_, _, _, _, err := ReadIDXImages(bytes.NewReader(idxFile(0x803, []uint32{1 << 11, 1 << 10, 1 << 10}, eight)), "lie.idx")
			return err
		}},
		{"gzipped idx labels claiming 2 GiB", func() error {
			_, err := ReadIDXLabels(bytes.NewReader(gzipped(idxFile(0x801, []uint32{1 << 31}, eight))), "lie.idx.gz")
			return err
		}},
	} {
		var err error
		got := allocated(func() { err = c.read() })
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), "lie", c.name)
		}
		assert.Less(t, got, uint64(1<<20), "%s: allocated %d bytes", c.name, got)
	}
}

// FuzzReadIDX: no input panics; accepted images have n·rows·cols pixels
// and accepted labels one int per byte, no more than the (decompressed)
// input holds, and both read back the same after idxFile. The first byte
// chooses the reader (even: images, odd: labels) and the second whether
// the rest is gzipped, so one target covers both readers and both
// encodings. The seed corpus holds each class of TestReadIDXCorrupt.
func FuzzReadIDX(f *testing.F) {
	good := idxFile(0x803, []uint32{2, 2, 2}, make([]byte, 8))
	lbl := idxFile(0x801, []uint32{3}, []byte{1, 2, 3})
	for _, seed := range []struct {
		labels, gz bool
		file       []byte
	}{
		{false, false, good},
		{false, true, good},
		{true, false, lbl},
		{true, true, lbl},
		{false, false, nil},
		{false, false, good[:10]},
		{false, false, good[:len(good)-1]},
		{false, false, append(slices.Clone(good), 0)},
		{false, false, idxFile(0x801, []uint32{2, 2, 2}, make([]byte, 8))},
		{false, false, idxFile(0xd03, []uint32{2, 2, 2}, make([]byte, 32))},
		{false, false, idxFile(0x803, []uint32{2, 0, 2}, nil)},
		{false, false, idxFile(0x803, []uint32{1 << 20, 1 << 10, 1 << 10}, nil)},
		{false, true, idxFile(0x803, []uint32{1 << 11, 1 << 10, 1 << 10}, make([]byte, 8))},
		{true, false, idxFile(0x801, []uint32{5}, []byte{1, 2})},
		{true, true, append(slices.Clone(lbl), 9)},
	} {
		gz := byte(0)
		if seed.gz {
			gz = 1
		}
		kind := byte(0)
		if seed.labels {
			kind = 1
		}
		f.Add(kind, gz, seed.file)
	}
	f.Fuzz(func(t *testing.T, kind, gz byte, b []byte) {
		in := b
		if gz%2 == 1 {
			in = gzipped(b)
		}
		if kind%2 == 1 {
			labels, err := ReadIDXLabels(bytes.NewReader(in), "fuzz.idx")
			if err != nil {
				checkNamed(t, err, "fuzz.idx")
				return
			}
			if len(labels) == 0 || len(labels) > len(b) {
				t.Fatalf("%d labels from %d bytes", len(labels), len(b))
			}
			body := make([]byte, len(labels))
			for i, l := range labels {
				body[i] = byte(l)
			}
			again, err := ReadIDXLabels(bytes.NewReader(idxFile(0x801, []uint32{uint32(len(labels))}, body)), "again.idx")
			if err != nil || !slices.Equal(labels, again) {
				t.Fatalf("labels do not round-trip: %v", err)
			}
			return
		}
		n, rows, cols, pix, err := ReadIDXImages(bytes.NewReader(in), "fuzz.idx")
		if err != nil {
			checkNamed(t, err, "fuzz.idx")
			return
		}
		if n <= 0 || rows <= 0 || cols <= 0 || n*rows*cols != len(pix) || len(pix) > len(b) {
			t.Fatalf("%d×%d×%d images, %d pixels from %d bytes", n, rows, cols, len(pix), len(b))
		}
		n2, r2, c2, again, err := ReadIDXImages(bytes.NewReader(idxFile(0x803, []uint32{uint32(n), uint32(rows), uint32(cols)}, pix)), "again.idx")
		if err != nil || n2 != n || r2 != rows || c2 != cols || !bytes.Equal(pix, again) {
			t.Fatalf("images do not round-trip: %v", err)
		}
	})
}

// checkNamed fails t unless err names the input.
func checkNamed(t *testing.T, err error, name string) {
	if !strings.Contains(err.Error(), name) {
		t.Fatalf("error does not name %s: %v", name, err)
	}
}
