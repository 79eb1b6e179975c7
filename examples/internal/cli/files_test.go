package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// CreateIn makes the missing folders and returns the file's path.
func TestCreateIn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	f, path, err := CreateIn(dir, "log.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if want := filepath.Join(dir, "log.jsonl"); path != want {
		t.Errorf("path %q, want %q", path, want)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{}\n" {
		t.Errorf("read %q, %v", b, err)
	}
}
