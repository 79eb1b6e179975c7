package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Inspect reads only the header, yet refuses what ReadFile refuses about
// the header and the file's size (a truncated data section, trailing
// bytes, each malformed header of readCases) with the same *FormatError
// naming the file. Only bad values inside the data (a BOOL byte of 2),
// which Inspect does not read, pass it.
func TestInspectRejectsWhatReadFileRejects(t *testing.T) {
	dir := t.TempDir()
	good := fixtures[1].bytes
	type badFile struct {
		name string
		data []byte
	}
	cases := []badFile{{"truncated data", good[:len(good)-3]}, {"trailing bytes", cat(good, []byte("xyz"))}}
	for _, c := range readCases {
		if c.name != "BOOL byte of 2" && c.name != "I64 beyond 2⁵³" {
			cases = append(cases, badFile{c.name, c.data})
		}
	}
	path := filepath.Join(dir, "bad.safetensors")
	for _, c := range cases {
		require.NoError(t, os.WriteFile(path, c.data, 0o644))
		_, _, err := Inspect(path)
		var fe *FormatError
		if !assert.True(t, errors.As(err, &fe), "%s: %v", c.name, err) {
			continue
		}
		assert.Equal(t, path, fe.File, c.name)
		if len(c.data) >= 8 { // ReadFile words a file shorter than 8 bytes its own way
			_, _, readErr := ReadFile(path)
			assert.EqualError(t, err, readErr.Error(), c.name)
		}
	}
	infos, meta, err := Inspect(writeFixture(t, dir, good))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"epoch": "3"}, meta)
	require.Len(t, infos, 2)
	assert.Equal(t, TensorInfo{Name: "a", DType: "F64", Shape: []int{2}, Bytes: 16}, infos[0])
}

func writeFixture(t *testing.T, dir string, b []byte) string {
	path := filepath.Join(dir, "good.safetensors")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}
