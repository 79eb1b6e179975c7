package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gradus-ml/gradus/tensor"
)

// failpoints lets tests inject failures and crashes into WriteFile:
// writer wraps the temporary file's writer, and at is consulted before
// each step ("write", after the temporary file is created; "sync";
// "close"; "rename", after the data is synced; "syncdir", after the
// rename) and may fail it or end the process there. Both are nil outside
// tests.
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
// in place without the guarantee that it survives a crash. A crash leaves
// the old file or the new one whole, and perhaps a temporary file named
// ".<name>.tmp-*" beside it, which no reader takes for the checkpoint.
//
// If path is a symbolic link, the file it leads to is replaced in the same
// way (the temporary file is made in that file's directory) and the link
// is kept. An existing file that is read-only (its owner may not write
// it) or that the caller may not open for writing is refused with an
// error wrapping fs.ErrPermission, and so is anything but a regular file:
// renaming over it would replace what its owner protected. The file gets
// the permissions of the file it replaces, or 0644.
func WriteFile(path string, tensors map[string]*tensor.Tensor, metadata map[string]string) error {
	// Validate before creating anything.
	names, header, err := encodeHeader(tensors, metadata)
	if err != nil {
		return fmt.Errorf("%w (writing %s)", err, path)
	}
	err = WriteAtomic(path, func(w io.Writer) error { return write(w, names, header, tensors) })
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// WriteAtomic writes the file path with write, atomically and durably, as
// WriteFile writes a checkpoint (the guarantees, links and permissions are
// as its doc says): write fills a temporary file in the target's
// directory, which is synced, closed and renamed over path. If write or
// any step fails the temporary file is removed and an existing file is
// left as it was. Errors name the file ("writing model.onnx: ..."); other
// formats' writers (nn/onnx's Save) use it so that every file Gradus
// writes is replaced the same way.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	target, perm, err := writeTarget(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	where := path
	if target != path {
		where = fmt.Sprintf("%s (a link to %s)", path, target)
	}
	dir := filepath.Dir(target)
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", where, err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if err != nil && !renamed {
			f.Close() // a second Close after a failed one is harmless
			os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", where, err)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return err
	}
	var w io.Writer = f
	if failpoints.writer != nil {
		w = failpoints.writer(w)
	}
	if err = step("write", func() error { return write(w) }); err != nil {
		return err
	}
	if err = step("sync", f.Sync); err != nil {
		return err
	}
	if err = step("close", f.Close); err != nil {
		return err
	}
	if err = step("rename", func() error { return os.Rename(tmp, target) }); err != nil {
		return err
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("%s was written but syncing its directory failed: %w", where, err)
	}
	return nil
}

// maxLinks bounds the symbolic links followed from one path, as Linux
// does (ELOOP after 40).
const maxLinks = 40

// writeTarget returns the file that a write to path replaces, following
// symbolic links (the file need not exist yet), and the permissions the
// new file gets: the old file's, or 0644.
func writeTarget(path string) (string, os.FileMode, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, 0o644, nil
		}
		if err != nil {
			return "", 0, err
		}
		mode := fi.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			dest, err := os.Readlink(path)
			if err != nil {
				return "", 0, err
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(path), dest)
			}
			path = dest
			continue
		case !mode.IsRegular():
			return "", 0, fmt.Errorf("%s is not a regular file (mode %v)", path, mode)
		case mode.Perm()&0o200 == 0:
			return "", 0, fmt.Errorf("%s is read-only (mode %v); make it writable or write elsewhere: %w", path, mode.Perm(), fs.ErrPermission)
		}
		// The directory may allow a rename over a file its owner has not
		// let us write; opening it for writing (without truncating) tells.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return "", 0, err
		}
		f.Close()
		return path, mode.Perm(), nil
	}
	return "", 0, fmt.Errorf("more than %d symbolic links from %s", maxLinks, path)
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
