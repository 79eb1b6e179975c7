package cli

import (
	"os"
	"path/filepath"

	"github.com/gradus-ml/gradus/plot"
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

// WritePNG draws the panels (plot.WritePNG) into the file name in the -out
// folder, says so on the progress log and returns the file's path, which
// a program reports in its result.
func (e *Env) WritePNG(name string, panels ...plot.Panel) (string, error) {
	path := e.Path(name)
	if err := plot.WritePNG(path, panels...); err != nil {
		return "", err
	}
	e.Printf("wrote %s\n", path)
	return path, nil
}
