package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

// echo reports its settings, writes a file into -out and fails on demand.
func echo() Program {
	var n int
	var fail string
	return Program{
		Name: "echo", Data: "iris", DataUsage: "data set",
		Flags: func(fs *flag.FlagSet) {
			fs.IntVar(&n, "n", 3, "a size")
			fs.StringVar(&fail, "fail", "", "error, badflag or panic")
		},
		Run: func(env *Env) (any, error) {
			env.Printf("n = %d\n", n)
			switch fail {
			case "error":
				return nil, errors.New("it broke")
			case "badflag":
				return nil, BadFlagf("-n %d is too large", n)
			case "panic":
				tensor.Fail("echo", "shape (2) for (3)")
			}
			if err := os.WriteFile(env.Path("note.txt"), []byte("hi"), 0o644); err != nil {
				return nil, err
			}
			return map[string]any{"n": n, "seed": env.Seed, "data": env.Data, "given_n": env.Given("n"), "json": env.JSON}, nil
		},
	}
}

func runEcho(t *testing.T, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), echo(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestRunJSONAndOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b") // created by Run
	code, out, errs := runEcho(t, "-out", dir, "-json", "-seed", "7", "-n", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "{\n  \"data\": \"iris\",\n  \"given_n\": true,\n  \"json\": true,\n  \"n\": 5,\n  \"seed\": 7\n}\n"
	if out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if errs != "n = 5\n" {
		t.Errorf("stderr %q, want the progress line", errs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "note.txt")); err != nil || string(b) != "hi" {
		t.Errorf("note.txt: %q, %v", b, err)
	}
}

func TestRunQuietWithoutJSON(t *testing.T) {
	code, out, errs := runEcho(t, "-out", t.TempDir(), "-quiet")
	if code != 0 || out != "" || errs != "" {
		t.Errorf("exit %d, stdout %q, stderr %q: want 0 and nothing printed", code, out, errs)
	}
}

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-n", "x"}, 2, "invalid value"},
		{[]string{"-nosuch"}, 2, "flag provided but not defined"},
		{[]string{"extra"}, 2, `unexpected arguments ["extra"]`},
		{[]string{"-out", ""}, 2, "-out must name a folder"},
		{[]string{"-fail", "badflag"}, 2, "echo: -n 3 is too large"},
		{[]string{"-fail", "error"}, 1, "echo: it broke"},
		{[]string{"-fail", "panic"}, 1, "shape (2) for (3)"},
		{[]string{"-h"}, 0, "-quiet"},
	} {
		code, out, errs := runEcho(t, append([]string{"-out", t.TempDir()}, c.args...)...)
		if code != c.code || out != "" || !strings.Contains(errs, c.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and %q", c.args, code, out, errs, c.code, c.stderr)
		}
	}
}

func TestDataRefusedWhenUnused(t *testing.T) {
	p := echo()
	p.DataUsage = ""
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), p, []string{"-out", t.TempDir(), "-data", "x"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "reads no data") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestDefaultOut(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, errs := runEcho(t, "-quiet"); code != 0 {
		t.Fatal(errs)
	}
	if _, err := os.Stat(filepath.Join("out", "echo", "note.txt")); err != nil {
		t.Error(err)
	}
}

// The context given to Run reaches the program through Env.Context, so a
// cancelled run (an interrupt, in Main) stops the program's fits.
func TestRunPassesTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Program{Name: "ctx", Run: func(env *Env) (any, error) { return nil, env.Context().Err() }}
	var stdout, stderr bytes.Buffer
	if code := Run(ctx, p, []string{"-out", t.TempDir()}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("a cancelled context: exit %d, stderr %q", code, stderr.String())
	}
	if err := (&Env{}).Context().Err(); err != nil {
		t.Errorf("an Env made by hand has a live context: %v", err)
	}
}
