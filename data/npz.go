package data

import (
	"archive/zip"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

// ReadNPZ reads every array of a NumPy .npz archive (zip of .npy files,
// stored or deflated, as numpy.savez and savez_compressed write them) held
// in b, keyed by name without ".npy". name is used in errors.
//
// Besides each array's own checks (see ReadNPY), an archive is refused
// when two entries have the same key, when entries share compressed bytes
// (the trick of zip bombs that expand one small stream many times over),
// or when an entry's size in the zip directory differs from what its .npy
// header claims; the last is checked before the array's data is read.
func ReadNPZ(b []byte, name string) (map[string]*tensor.Tensor, error) {
	return readNPZ(bytes.NewReader(b), int64(len(b)), name)
}

// LoadNPZ reads the .npz file at path (see ReadNPZ), one entry at a time.
func LoadNPZ(path string) (map[string]*tensor.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return readNPZ(f, st.Size(), path)
}

func readNPZ(ra io.ReaderAt, size int64, name string) (map[string]*tensor.Tensor, error) {
	z, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, fmt.Errorf("data: %s: not a .npz archive: %w", name, err)
	}
	if err := checkNPZEntries(z.File, name); err != nil {
		return nil, err
	}
	out := make(map[string]*tensor.Tensor, len(z.File))
	for _, f := range z.File {
		t, err := readNPZEntry(f, name+"/"+f.Name)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = t
	}
	return out, nil
}

// checkNPZEntries refuses duplicate keys and entries whose compressed
// bytes overlap.
func checkNPZEntries(files []*zip.File, name string) error {
	type span struct {
		entry      string
		begin, end int64
	}
	spans := make([]span, 0, len(files))
	keys := make(map[string]string, len(files))
	for _, f := range files {
		key := strings.TrimSuffix(f.Name, ".npy")
		if prev, ok := keys[key]; ok {
			return fmt.Errorf("data: %s: entries %q and %q both hold array %q", name, prev, f.Name, key)
		}
		keys[key] = f.Name
		off, err := f.DataOffset()
		if err != nil {
			return fmt.Errorf("data: %s/%s: %w", name, f.Name, err)
		}
		if f.CompressedSize64 > 0 {
			spans = append(spans, span{f.Name, off, off + int64(min(f.CompressedSize64, 1<<62))})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.begin, b.begin) })
	for i := 1; i < len(spans); i++ {
		if a, b := spans[i-1], spans[i]; b.begin < a.end {
			return fmt.Errorf("data: %s: entries %q and %q share compressed bytes [%d, %d) (a zip bomb?)", name, a.entry, b.entry, b.begin, min(a.end, b.end))
		}
	}
	return nil
}

// readNPZEntry reads one .npy entry, checking its header's claim against
// the size the zip directory records before reading the data.
func readNPZEntry(f *zip.File, name string) (*tensor.Tensor, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	defer rc.Close()
	cr := &countingReader{r: rc}
	h, err := readNPYHeader(cr)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	if claim := uint64(cr.n) + uint64(h.size*h.width); claim != f.UncompressedSize64 {
		return nil, fmt.Errorf("data: %s: the archive records %d bytes but the .npy header claims %d (shape %v)", name, f.UncompressedSize64, claim, h.shape)
	}
	// readNPYData reads to the end of the entry, where archive/zip
	// verifies the checksum and the recorded size.
	return readNPYData(rc, h, name)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
