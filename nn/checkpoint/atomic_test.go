package checkpoint

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteAtomic replaces a file whole, and leaves it as it was, with no
// temporary file beside it, when the writer fails.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.bin")
	if err := WriteAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteAtomic(path, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "writing "+path) {
		t.Fatalf("err = %v, want boom naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("file holds %q after a failed write, want %q", b, "first")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the directory, want 1 (no temporary file left)", len(ents))
	}
}
