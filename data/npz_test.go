package data

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// npzEntry is one file of an archive built by npzFile.
type npzEntry struct {
	name    string
	data    []byte
	deflate bool
}

// npzFile builds a zip archive as numpy.savez (stored) or
// savez_compressed (deflated) would.
func npzFile(entries ...npzEntry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		method := zip.Store
		if e.deflate {
			method = zip.Deflate
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: method})
		if err != nil {
			panic(err)
		}
		w.Write(e.data)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// patchCentral rewrites the little-endian uint32 at offset off of the
// i-th central directory record of a zip archive.
func patchCentral(b []byte, i, off int, v uint32) []byte {
	b = slices.Clone(b)
	at := -1
	for k := 0; k <= i; k++ {
		at += 1 + bytes.Index(b[at+1:], []byte("PK\x01\x02"))
	}
	binary.LittleEndian.PutUint32(b[at+off:], v)
	return b
}

// Central directory fields: the local header's offset and the
// uncompressed size.
const (
	centralLocalOffset = 42
	centralSize        = 24
)

func TestReadNPZValid(t *testing.T) {
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 2, 2)
	y := tensor.FromValues(tensor.Float32, []float64{-1, 0.5}, 2)
	for _, c := range []struct {
		name    string
		archive []byte
		want    map[string]*tensor.Tensor
	}{
		{"stored", npzFile(npzEntry{"x.npy", encodeNPY(x), false}, npzEntry{"y.npy", encodeNPY(y), false}), map[string]*tensor.Tensor{"x": x, "y": y}},
		{"deflated", npzFile(npzEntry{"x.npy", encodeNPY(x), true}, npzEntry{"y.npy", encodeNPY(y), true}), map[string]*tensor.Tensor{"x": x, "y": y}},
		{"a name without .npy", npzFile(npzEntry{"x", encodeNPY(x), true}), map[string]*tensor.Tensor{"x": x}},
		{"no entries", npzFile(), map[string]*tensor.Tensor{}},
	} {
		got, err := ReadNPZ(c.archive, "ok.npz")
		if !assert.NoError(t, err, c.name) {
			continue
		}
		assert.Len(t, got, len(c.want), c.name)
		for k, w := range c.want {
			assert.True(t, got[k] != nil && sameBits(w, got[k]), "%s: %s", c.name, k)
		}
	}
}

// Each kind of lying or malformed archive is an error naming the archive
// (and the entry, where one is concerned), found before the claimed size
// is allocated.
func TestReadNPZRejects(t *testing.T) {
	one := encodeNPY(tensor.FromFloat64s([]float64{1}, 1))
	eight := make([]byte, 8)
	twin := npzFile(npzEntry{"a.npy", one, false}, npzEntry{"b.npy", one, false})
	localA := binary.LittleEndian.Uint32(twin[bytes.Index(twin, []byte("PK\x01\x02"))+centralLocalOffset:])
	deflated := npzFile(npzEntry{"a.npy", one, true})
	corrupt := slices.Clone(deflated)
	corrupt[bytes.Index(corrupt, []byte("a.npy"))+len("a.npy")+3] ^= 0xff // inside the deflate stream
	flipped := npzFile(npzEntry{"a.npy", one, false})
	flipped[bytes.Index(flipped, one)+len(one)-1] ^= 0x01 // the value's last byte: still a valid float64, but the CRC-32 no longer matches
	for _, c := range []struct {
		name    string
		archive []byte
		want    string
	}{
		{"not a zip archive", []byte("PK nonsense"), "not a .npz archive"},
		{"an empty file", nil, "not a .npz archive"},
		{"a truncated archive", twin[:len(twin)-10], "not a .npz archive"},
		{"two entries for one key", npzFile(npzEntry{"a.npy", one, false}, npzEntry{"a", one, false}), `entries "a.npy" and "a" both hold array "a"`},
		{"entries that share compressed bytes", patchCentral(twin, 1, centralLocalOffset, localA), "share compressed bytes"},
		{"10¹⁰ elements claimed in a tiny entry", npzFile(npzEntry{"big.npy", npyFile("<f8", "(100000, 100000)", eight), true}), "lie.npz/big.npy: the archive records"},
		{"a directory that records more bytes than the entry holds", patchCentral(twin, 0, centralSize, 1<<30), "lie.npz/a.npy: the archive records 1073741824 bytes"},
		{"an entry with trailing bytes", npzFile(npzEntry{"a.npy", append(slices.Clone(one), 0), true}), "lie.npz/a.npy: the archive records"},
		{"an entry that is not .npy", npzFile(npzEntry{"a.txt", []byte("hello"), false}), "lie.npz/a.txt: not a .npy file"},
		{"an entry with a bad dtype", npzFile(npzEntry{"a.npy", npyFile("<c16", "(1,)", eight), false}), "lie.npz/a.npy: unsupported dtype"},
		{"a corrupt deflate stream", corrupt, "lie.npz/a.npy"},
		{"a stored entry whose checksum fails", flipped, "lie.npz/a.npy: reading the data: zip: checksum error"},
	} {
		_, err := ReadNPZ(c.archive, "lie.npz")
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
}

func TestLoadNPZReadsFromDisk(t *testing.T) {
	b, err := os.ReadFile("testdata/pair.npz")
	require.NoError(t, err)
	fromBytes, err := ReadNPZ(b, "pair.npz")
	require.NoError(t, err)
	fromDisk, err := LoadNPZ("testdata/pair.npz")
	require.NoError(t, err)
	require.Len(t, fromDisk, 2)
	for k, v := range fromBytes {
		assert.True(t, sameBits(v, fromDisk[k]), k)
	}
	_, err = LoadNPZ("testdata/missing.npz")
	assert.ErrorContains(t, err, "missing.npz")
}

// FuzzReadNPZ: no archive panics; what is accepted holds arrays whose size
// is the product of their shape, and writing them into a new archive and
// reading it gives the same arrays bit for bit. mode chooses what b is: an
// archive as given (mode%3 == 0), or the bytes of one entry stored (1) or
// deflated (2) into a well-formed archive, so that mutations reach the
// .npy checks inside a zip rarely broken by a flipped byte. The seed
// corpus holds each class of TestReadNPZRejects, the valid archives and
// lying .npy entries.
func FuzzReadNPZ(f *testing.F) {
	one := encodeNPY(tensor.FromFloat64s([]float64{1}, 1))
	twin := npzFile(npzEntry{"a.npy", one, false}, npzEntry{"b.npy", one, false})
	localA := binary.LittleEndian.Uint32(twin[bytes.Index(twin, []byte("PK\x01\x02"))+centralLocalOffset:])
	for _, seed := range [][]byte{
		twin,
		npzFile(npzEntry{"a.npy", one, true}, npzEntry{"b.npy", encodeNPY(tensor.FromValues(tensor.Float32, []float64{1, 2}, 1, 2)), true}),
		npzFile(),
		npzFile(npzEntry{"a.npy", one, false}, npzEntry{"a", one, false}),
		patchCentral(twin, 1, centralLocalOffset, localA),
		patchCentral(twin, 0, centralSize, 1<<30),
		npzFile(npzEntry{"big.npy", npyFile("<f8", "(100000, 100000)", make([]byte, 8)), true}),
		npzFile(npzEntry{"a.npy", append(slices.Clone(one), 0), true}),
		npzFile(npzEntry{"a.txt", []byte("hello"), false}),
		twin[:len(twin)-10],
		[]byte("PK nonsense"),
	} {
		f.Add(byte(0), seed)
	}
	b, err := os.ReadFile("testdata/pair.npz")
	require.NoError(f, err)
	f.Add(byte(0), b)
	eight := make([]byte, 8)
	for _, entry := range [][]byte{
		one,
		npyFile("<f8", "(100000, 100000)", eight),
		npyFile("<f8", "(2,)", eight),
		append(slices.Clone(one), 0),
		npyFile("<c16", "(1,)", eight),
		npyFile("|u1", "(0, 281474976710656, 281474976710656)", nil),
		[]byte("hello"),
	} {
		f.Add(byte(1), entry)
		f.Add(byte(2), entry)
	}
	f.Fuzz(func(t *testing.T, mode byte, b []byte) {
		if mode%3 != 0 {
			b = npzFile(npzEntry{"a.npy", b, mode%3 == 2})
		}
		got, err := ReadNPZ(b, "fuzz.npz")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.npz") {
				t.Fatalf("error does not name the archive: %v", err)
			}
			return
		}
		var entries []npzEntry
		for k, x := range got {
			checkShapeSize(t, x)
			entries = append(entries, npzEntry{k + ".npy", encodeNPY(x), true})
		}
		again, err := ReadNPZ(npzFile(entries...), "again.npz")
		if err != nil || len(again) != len(got) {
			t.Fatalf("does not round-trip: %v", err)
		}
		for k, x := range got {
			if again[k] == nil || !sameBits(x, again[k]) {
				t.Fatalf("array %q does not round-trip", k)
			}
		}
	})
}
