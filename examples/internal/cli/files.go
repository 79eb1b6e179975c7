package cli

import (
	"os"
	"path/filepath"
)

// CreateIn creates (or truncates) the file name in the folder dir, making
// the folder first if it is missing, and returns the open file and its
// path: the JSON-lines training logs of the examples go through it.
func CreateIn(dir, name string) (*os.File, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	return f, path, err
}
