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
)

// Result is one finished run: the -out folder and the JSON object printed.
type Result struct {
	t testing.TB
	// Dir is the -out folder (a temporary folder of the test).
	Dir string
	// JSON is the object printed with -json, as decoded into a map.
	JSON map[string]any
	raw  []byte
}

// Run runs p with -json -quiet -out <a temporary folder> followed by args
// (so args may override them) and fails t unless it exits with 0 and prints
// one JSON object.
func Run(t testing.TB, p cli.Program, args ...string) *Result {
	t.Helper()
	r := &Result{t: t, Dir: t.TempDir()}
	var stdout, stderr bytes.Buffer
	args = append([]string{"-json", "-quiet", "-out", r.Dir}, args...)
	if code := cli.Run(context.Background(), p, args, &stdout, &stderr); code != 0 {
		t.Fatalf("%s %q: exit code %d, stderr:\n%s", p.Name, args, code, stderr.String())
	}
	r.raw = stdout.Bytes()
	if err := json.Unmarshal(r.raw, &r.JSON); err != nil {
		t.Fatalf("%s: standard output is not one JSON object: %v\n%s", p.Name, err, r.raw)
	}
	return r
}

// Decode decodes the JSON object into v (a pointer to the program's result
// type).
func (r *Result) Decode(v any) {
	r.t.Helper()
	if err := json.Unmarshal(r.raw, v); err != nil {
		r.t.Fatalf("decoding %s: %v", r.raw, err)
	}
}

// Fields fails the test unless the JSON object has every key.
func (r *Result) Fields(keys ...string) {
	r.t.Helper()
	for _, k := range keys {
		if _, ok := r.JSON[k]; !ok {
			r.t.Errorf("JSON object has no field %q: %s", k, r.raw)
		}
	}
}

// Number is the JSON object's numeric field key; the test fails if it is
// missing or not a number.
func (r *Result) Number(key string) float64 {
	r.t.Helper()
	v, ok := r.JSON[key].(float64)
	if !ok {
		r.t.Fatalf("JSON field %q is %v, want a number", key, r.JSON[key])
	}
	return v
}

// Pictures fails the test unless each name is a PNG image, at least 16
// pixels on each side, in the -out folder.
func (r *Result) Pictures(names ...string) {
	r.t.Helper()
	for _, name := range names {
		f, err := os.Open(filepath.Join(r.Dir, name))
		if err != nil {
			r.t.Error(err)
			continue
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width < 16 || cfg.Height < 16 {
			r.t.Errorf("%s: not a PNG picture (%d×%d, %v)", name, cfg.Width, cfg.Height, err)
		}
	}
}

// Files fails the test unless each name is a non-empty file in the -out
// folder.
func (r *Result) Files(names ...string) {
	r.t.Helper()
	for _, name := range names {
		st, err := os.Stat(filepath.Join(r.Dir, name))
		if err != nil || st.Size() == 0 {
			r.t.Errorf("%s: want a non-empty file (%v)", name, err)
		}
	}
}

// Fixture decodes the JSON file path (a fixture under testdata, made by
// the script committed beside it) into v, failing t if it cannot.
func Fixture(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("fixture %s: %v", path, err)
	}
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
