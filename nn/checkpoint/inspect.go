package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"sort"
)

// TensorInfo describes one tensor of a safetensors file as stored.
type TensorInfo struct {
	Name  string
	DType string // the file's dtype name, e.g. "BF16"
	Shape []int
	Bytes int64
}

// Inspect reads only the header of the safetensors file at path and
// returns its tensors, sorted by name, and its metadata: what `gradus
// inspect` prints. The header is validated as by ReadFile, and the file's
// size must be what the header says, so a truncated file or one with
// trailing bytes is an error here as it is there: a *FormatError naming
// the file and, where one is concerned, the tensor.
func Inspect(path string) ([]TensorInfo, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	entries, meta, n, err := readHeader(f, st.Size())
	if err == nil {
		var dataLen int64
		for _, e := range entries {
			dataLen = max(dataLen, e.end)
		}
		if have := st.Size() - 8 - int64(n); have != dataLen {
			err = dataLenErr(entries, have, dataLen)
		}
	}
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.File = path
			return nil, nil, fe
		}
		return nil, nil, fmt.Errorf("%w (reading %s)", err, path)
	}
	out := make([]TensorInfo, len(entries))
	for i, e := range entries {
		out[i] = TensorInfo{Name: e.name, DType: e.file, Shape: e.shape, Bytes: e.end - e.begin}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, meta, nil
}
