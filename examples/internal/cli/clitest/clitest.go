// Package clitest runs an example program through package cli in a test
// and checks what it reports and writes.
package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/train"
)

// Result is one finished run: the -out folder and the JSON object printed.
type Result struct {
	t testing.TB
	// Dir is the -out folder (a temporary folder of the test).
	Dir string
	// JSON is the object printed with -json, as decoded into a map.
	JSON map[string]any
}

// Expect is what a successful run must leave behind, each name checked
// against the run's -json object or its -out folder.
type Expect struct {
	// Fields are keys the JSON object must have (the ones the program's
	// documentation promises).
	Fields []string
	// Pictures are PNG images, at least 16 pixels on each side, that must
	// be in the -out folder.
	Pictures []string
	// Files are other files that must be in the -out folder, non-empty.
	Files []string
}

// Check runs p with -json -quiet -out <a temporary folder> followed by args
// (so args may override them), fails t unless it exits with 0 and prints
// one JSON object, checks everything want lists, and returns the object
// decoded into the program's result type T together with the run.
//
//	res, r := clitest.Check[result](t, program(), clitest.Expect{
//		Fields: []string{"rmse", "plot"}, Pictures: []string{"fit.png"}}, "-n", "100")
//
// A missing field, picture or file fails the test but lets it go on, so one
// run reports every one of them.
func Check[T any](t testing.TB, p cli.Program, want Expect, args ...string) (T, *Result) {
	t.Helper()
	r := &Result{t: t, Dir: t.TempDir()}
	var stdout, stderr bytes.Buffer
	args = append([]string{"-json", "-quiet", "-out", r.Dir}, args...)
	if code := cli.Run(context.Background(), p, args, &stdout, &stderr); code != 0 {
		t.Fatalf("%s %q: exit code %d, stderr:\n%s", p.Name, args, code, stderr.String())
	}
	var res T
	raw := stdout.Bytes()
	if err := json.Unmarshal(raw, &r.JSON); err != nil {
		t.Fatalf("%s: standard output is not one JSON object: %v\n%s", p.Name, err, raw)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("%s: decoding %s into %T: %v", p.Name, raw, res, err)
	}
	for _, k := range want.Fields {
		if _, ok := r.JSON[k]; !ok {
			t.Errorf("%s: JSON object has no field %q: %s", p.Name, k, raw)
		}
	}
	for _, name := range want.Pictures {
		r.picture(name)
	}
	for _, name := range want.Files {
		if st, err := os.Stat(r.Path(name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: want a non-empty file (%v)", name, err)
		}
	}
	return res, r
}

// Path is the path of the file name in the -out folder.
func (r *Result) Path(name string) string { return filepath.Join(r.Dir, name) }

// picture fails the test unless name is a PNG image, at least 16 pixels on
// each side, in the -out folder.
func (r *Result) picture(name string) {
	r.t.Helper()
	f, err := os.Open(r.Path(name))
	if err != nil {
		r.t.Error(err)
		return
	}
	cfg, err := png.DecodeConfig(f)
	f.Close()
	if err != nil || cfg.Width < 16 || cfg.Height < 16 {
		r.t.Errorf("%s: not a PNG picture (%d×%d, %v)", name, cfg.Width, cfg.Height, err)
	}
}

// Log reads the JSON-lines training log at path (a train.Trainer's, or a
// program's own in the same format), failing the test if it cannot.
func Log(t testing.TB, path string) []train.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := train.ReadLog(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// Fixture decodes the JSON file path (a fixture under testdata, made by
// the script committed beside it) into a T, failing t if it cannot.
func Fixture[T any](t testing.TB, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		t.Fatalf("fixture %s: %v", path, err)
	}
	return v
}

// Env is an Env for calling a program's run function directly in a test:
// -seed 1, -out a temporary folder, no progress lines.
func Env(t testing.TB) *cli.Env {
	return &cli.Env{Seed: 1, Out: t.TempDir(), Log: io.Discard}
}

// EnvWith is Env with -seed seed and -data data, for a run function that
// reads them from its Env.
func EnvWith(t testing.TB, seed uint64, data string) *cli.Env {
	env := Env(t)
	env.Seed, env.Data = seed, data
	return env
}

// Fails runs p with args and fails t unless it exits with code.
func Fails(t testing.TB, p cli.Program, code int, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"-quiet", "-out", t.TempDir()}, args...)
	if got := cli.Run(context.Background(), p, args, &stdout, &stderr); got != code {
		t.Errorf("%s %q: exit code %d, want %d; stderr:\n%s", p.Name, args, got, code, stderr.String())
	}
}
