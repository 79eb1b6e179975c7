package checkpoint

import (
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
// inspect` prints. The header is validated as by ReadFile.
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
	entries, meta, _, err := readHeader(f, st.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	out := make([]TensorInfo, len(entries))
	for i, e := range entries {
		out[i] = TensorInfo{Name: e.name, DType: e.file, Shape: e.shape, Bytes: e.end - e.begin}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, meta, nil
}
