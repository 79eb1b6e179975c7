package cli

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/plot"
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

// WritePNG writes a picture into -out, logs its path and returns it.
func TestWritePNG(t *testing.T) {
	var log strings.Builder
	env := &Env{Out: t.TempDir(), Log: &log}
	path, err := env.WritePNG("fit.png", plot.Panel{Title: "fit", Curves: []plot.Curve{{Name: "y", Y: []float64{1, 2, 3}}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(env.Out, "fit.png"); path != want {
		t.Errorf("path %q, want %q", path, want)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width < 16 {
		t.Errorf("not a PNG picture: %v, %+v", err, cfg)
	}
	if got, want := log.String(), "wrote "+path+"\n"; got != want {
		t.Errorf("log %q, want %q", got, want)
	}
	if _, err := env.WritePNG("fit.png"); err == nil {
		t.Error("no panels: want an error")
	}
}
