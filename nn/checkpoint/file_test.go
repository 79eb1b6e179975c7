package checkpoint

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

func TestWriteFileReadFile(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "model.safetensors")
			ts := map[string]*tensor.Tensor{
				"w": tensor.FromValues(dt, []float64{1, -2, 3.5, 0.125, 8, -0.5}, 2, 3),
				"s": tensor.Scalar(dt, 4),
			}
			require.NoError(t, WriteFile(path, ts, map[string]string{"k": "v"}))
			got, meta, err := ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, map[string]string{"k": "v"}, meta)
			assert.Equal(t, []float64{1, -2, 3.5, 0.125, 8, -0.5}, got["w"].Values())
			assert.Equal(t, []int{2, 3}, got["w"].Shape())
			assert.Equal(t, []int{}, got["s"].Shape())
			assert.Equal(t, dt, got["s"].DType())
			assert.Equal(t, 4.0, got["s"].Item())
			assertNoTempFiles(t, filepath.Dir(path), "model.safetensors")
		})
	}
}

func TestReadFileErrorsNameFileAndTensor(t *testing.T) {
	dir := t.TempDir()
	for i, c := range readCases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad"+string(rune('a'+i))+".safetensors")
			require.NoError(t, os.WriteFile(path, c.data, 0o644))
			_, _, err := ReadFile(path)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrFormat)
			assert.Contains(t, err.Error(), path)
			var fe *FormatError
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, path, fe.File)
			assert.Equal(t, c.tensor, fe.Tensor, err.Error())
			if c.tensor != "" {
				assert.Contains(t, err.Error(), `tensor "`+c.tensor+`"`)
			}
		})
	}
	_, _, err := ReadFile(filepath.Join(dir, "missing.safetensors"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// assertNoTempFiles checks that dir holds only the named files.
func assertNoTempFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, want, names)
}

// failingWriter fails once more than limit bytes have been written.
type failingWriter struct {
	w     io.Writer
	limit int
}

var errInjected = errors.New("injected failure")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n, _ := f.w.Write(p[:f.limit])
		f.limit = 0
		return n, errInjected
	}
	f.limit -= len(p)
	return f.w.Write(p)
}

func TestWriteFileAtomic(t *testing.T) {
	type failure struct {
		name   string
		writer func(io.Writer) io.Writer
		at     string
	}
	failures := []failure{
		{name: "write at start", writer: func(w io.Writer) io.Writer { return &failingWriter{w, 0} }},
		{name: "write mid-data", writer: func(w io.Writer) io.Writer { return &failingWriter{w, 100} }},
		{name: "sync", at: "sync"},
		{name: "close", at: "close"},
		{name: "rename", at: "rename"},
	}
	for _, dt := range numtest.DTypes {
		for _, f := range failures {
			t.Run(dt.String()+"/"+f.name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "ckpt.safetensors")
				old := map[string]*tensor.Tensor{"w": tensor.FromValues(dt, []float64{1, 2, 3}, 3)}
				require.NoError(t, WriteFile(path, old, nil))
				before, err := os.ReadFile(path)
				require.NoError(t, err)

				failpoints.writer = f.writer
				failpoints.at = func(step string) error {
					if step == f.at {
						return errInjected
					}
					return nil
				}
				t.Cleanup(func() { failpoints.writer, failpoints.at = nil, nil })

				// Large enough that the data does not fit one buffer.
				next := map[string]*tensor.Tensor{"w": tensor.Full(dt, 7, 50000), "b": tensor.Full(dt, 1, 3)}
				err = WriteFile(path, next, map[string]string{"epoch": "2"})
				require.ErrorIs(t, err, errInjected)
				assert.Contains(t, err.Error(), path)

				after, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, before, after, "the old checkpoint must be intact")
				assertNoTempFiles(t, dir, "ckpt.safetensors")

				// A first write that fails leaves no file at all.
				fresh := filepath.Join(dir, "fresh.safetensors")
				require.ErrorIs(t, WriteFile(fresh, next, nil), errInjected)
				assertNoTempFiles(t, dir, "ckpt.safetensors")
			})
		}
	}
}

func TestWriteFileKeepsPermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.safetensors")
	ts := map[string]*tensor.Tensor{"w": tensor.New(tensor.Float32, 2)}
	require.NoError(t, WriteFile(path, ts, nil))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	require.NoError(t, os.Chmod(path, 0o600))
	require.NoError(t, WriteFile(path, ts, nil))
	fi, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func readFileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func writeFileBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// With the threshold lowered, ReadFile decodes from a memory mapping: the
// same tensors and metadata as the plain read, and a truncated file is
// still a FormatError naming it.
func TestReadFileMapped(t *testing.T) {
	old := MapThreshold
	defer func() { MapThreshold = old }()
	path := filepath.Join(t.TempDir(), "m.safetensors")
	want := map[string]*tensor.Tensor{
		"a": tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 2, 3),
		"b": tensor.FromValues(tensor.Float32, []float64{-1.5, 2.25}, 2),
	}
	require.NoError(t, WriteFile(path, want, map[string]string{"k": "v"}))
	for _, th := range []int64{1 << 40, 1} {
		MapThreshold = th
		got, meta, err := ReadFile(path)
		require.NoError(t, err, "threshold %d", th)
		assert.Equal(t, "v", meta["k"])
		for name, w := range want {
			assert.Equal(t, w.Shape(), got[name].Shape())
			assert.Equal(t, w.Values(), got[name].Values(), "%s, threshold %d", name, th)
		}
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw[:len(raw)-5], 0o644))
	_, _, err = ReadFile(path)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, path, fe.File)
}
