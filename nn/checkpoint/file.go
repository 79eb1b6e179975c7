package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gradus-ml/gradus/tensor"
)

// failpoints lets tests inject failures into WriteFile: writer wraps the
// temporary file's writer, and at is consulted before each step ("sync",
// "close", "rename") and may fail it. Both are nil outside tests.
var failpoints struct {
	writer func(io.Writer) io.Writer
	at     func(step string) error
}

// step runs f unless a failpoint fails the named step first.
func step(name string, f func() error) error {
	if failpoints.at != nil {
		if err := failpoints.at(name); err != nil {
			return err
		}
	}
	return f()
}

// WriteFile writes tensors and metadata to the file path atomically: it
// writes a temporary file in the same directory, syncs and closes it, renames
// it over path and syncs the directory. If any step fails the temporary file
// is removed and an existing file at path is left as it was; only a failure
// to sync the directory after the rename (reported too) leaves the new file
// in place without the guarantee that it survives a crash. The file gets the
// permissions of the file it replaces, or 0644.
func WriteFile(path string, tensors map[string]*tensor.Tensor, metadata map[string]string) (err error) {
	// Validate before creating anything.
	names, header, err := encodeHeader(tensors, metadata)
	if err != nil {
		return fmt.Errorf("%w (writing %s)", err, path)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if err != nil && !renamed {
			f.Close() // a second Close after a failed one is harmless
			os.Remove(tmp)
			err = fmt.Errorf("checkpoint: writing %s: %w", path, err)
		}
	}()
	perm := os.FileMode(0o644)
	if fi, statErr := os.Stat(path); statErr == nil {
		perm = fi.Mode().Perm()
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	var w io.Writer = f
	if failpoints.writer != nil {
		w = failpoints.writer(w)
	}
	if err = write(w, names, header, tensors); err != nil {
		return err
	}
	if err = step("sync", f.Sync); err != nil {
		return err
	}
	if err = step("close", f.Close); err != nil {
		return err
	}
	if err = step("rename", func() error { return os.Rename(tmp, path) }); err != nil {
		return err
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("checkpoint: %s was written but syncing its directory failed: %w", path, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(step("syncdir", d.Sync), d.Close())
}

// MapThreshold is the file size from which ReadFile memory-maps a
// checkpoint instead of reading it.
var MapThreshold int64 = 16 << 20

// ReadFile reads the safetensors file at path (see Read). Files of
// MapThreshold bytes or more are memory-mapped (on Unix systems) and
// decoded from the mapping, which is released before ReadFile returns;
// smaller ones are read. A malformed file gives a *FormatError naming the
// file and, where one is concerned, the tensor.
func ReadFile(path string) (map[string]*tensor.Tensor, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	size := fi.Size()
	if size < 8 {
		return nil, nil, &FormatError{File: path, Msg: fmt.Sprintf("truncated: the file has %d bytes, fewer than the 8-byte header length", size)}
	}
	var r io.Reader = f
	if size >= MapThreshold {
		if data, unmap, err := mapFile(f, size); err == nil {
			defer unmap()
			r = bytes.NewReader(data)
		}
	}
	ts, meta, err := read(r, size)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.File = path
			return nil, nil, fe
		}
		return nil, nil, fmt.Errorf("%w (reading %s)", err, path)
	}
	return ts, meta, nil
}
