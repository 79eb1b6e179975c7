package checkpoint

import (
	"errors"
	"io"
	"io/fs"
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

// A write through a symbolic link replaces the file the link leads to,
// atomically and in that file's directory, and keeps the link: through a
// relative link, an absolute one, a chain of two, and a link to a file
// that does not exist yet.
func TestWriteFileThroughSymlink(t *testing.T) {
	old := map[string]*tensor.Tensor{"w": tensor.FromValues(tensor.Float32, []float64{1, 2}, 2)}
	next := map[string]*tensor.Tensor{"w": tensor.FromValues(tensor.Float32, []float64{3, 4}, 2)}
	cases := []struct {
		name   string
		exists bool
		link   func(t *testing.T, linkDir, target string) string // makes the link(s), returns the path written
	}{
		{"relative", true, func(t *testing.T, linkDir, target string) string {
			rel, err := filepath.Rel(linkDir, target)
			require.NoError(t, err)
			return symlink(t, rel, filepath.Join(linkDir, "latest.safetensors"))
		}},
		{"absolute", true, func(t *testing.T, linkDir, target string) string {
			return symlink(t, target, filepath.Join(linkDir, "latest.safetensors"))
		}},
		{"chain", true, func(t *testing.T, linkDir, target string) string {
			mid := symlink(t, target, filepath.Join(linkDir, "mid.safetensors"))
			return symlink(t, "mid.safetensors", filepath.Join(linkDir, filepath.Base(mid)+".link"))
		}},
		{"dangling", false, func(t *testing.T, linkDir, target string) string {
			return symlink(t, target, filepath.Join(linkDir, "latest.safetensors"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			linkDir, targetDir := t.TempDir(), t.TempDir()
			target := filepath.Join(targetDir, "run-7.safetensors")
			if c.exists {
				require.NoError(t, WriteFile(target, old, nil))
				require.NoError(t, os.Chmod(target, 0o640))
			}
			path := c.link(t, linkDir, target)
			links := dirNames(t, linkDir)

			require.NoError(t, WriteFile(path, next, map[string]string{"k": "v"}))
			fi, err := os.Lstat(path)
			require.NoError(t, err)
			assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is kept")
			assert.Equal(t, links, dirNames(t, linkDir), "nothing new beside the link")
			assertNoTempFiles(t, targetDir, "run-7.safetensors")
			got, meta, err := ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, []float64{3, 4}, got["w"].Values())
			assert.Equal(t, "v", meta["k"])
			fi, err = os.Stat(target)
			require.NoError(t, err)
			want := os.FileMode(0o644)
			if c.exists {
				want = 0o640
			}
			assert.Equal(t, want, fi.Mode().Perm(), "the target's permissions are kept")
		})
	}
}

func symlink(t *testing.T, dest, link string) string {
	t.Helper()
	require.NoError(t, os.Symlink(dest, link))
	return link
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// What a write must not replace is refused with an error naming it, and
// left as it was: a read-only file, directly or through a link; a
// directory; a loop of links.
func TestWriteFileRefusesProtectedTargets(t *testing.T) {
	ts := map[string]*tensor.Tensor{"w": tensor.New(tensor.Float32, 2)}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) (path, target string)
		is    error
		want  string
	}{
		{"read-only file", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "ro.safetensors")
			require.NoError(t, WriteFile(p, ts, nil))
			require.NoError(t, os.Chmod(p, 0o444))
			return p, p
		}, fs.ErrPermission, "ro.safetensors is read-only (mode -r--r--r--)"},
		{"read-only file through a link", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "ro.safetensors")
			require.NoError(t, WriteFile(p, ts, nil))
			require.NoError(t, os.Chmod(p, 0o400))
			return symlink(t, "ro.safetensors", filepath.Join(dir, "link")), p
		}, fs.ErrPermission, "ro.safetensors is read-only (mode -r--------)"},
		{"directory", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "sub")
			require.NoError(t, os.Mkdir(p, 0o755))
			return p, ""
		}, nil, "sub is not a regular file"},
		{"link loop", func(t *testing.T, dir string) (string, string) {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			symlink(t, "b", a)
			symlink(t, "a", b)
			return a, ""
		}, nil, "more than 40 symbolic links"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path, target := c.setup(t, dir)
			var before []byte
			if target != "" {
				before = readFileBytes(t, target)
			}
			names := dirNames(t, dir)
			err := WriteFile(path, map[string]*tensor.Tensor{"w": tensor.Full(tensor.Float32, 5, 2)}, nil)
			require.Error(t, err)
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
			assert.Contains(t, err.Error(), "checkpoint: writing "+path)
			assert.Contains(t, err.Error(), c.want)
			assert.Equal(t, names, dirNames(t, dir), "no file created or replaced")
			if target != "" {
				assert.Equal(t, before, readFileBytes(t, target))
			}
		})
	}
}
