package cli

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
)

type settings struct {
	N     int     `flag:"n" help:"a size"`
	Big   uint64  `flag:"big" help:"a count"`
	LR    float64 `flag:"lr" help:"a rate"`
	Mode  string  `flag:"mode" help:"a word"`
	On    bool    `flag:"on" help:"a switch"`
	Other int     // no tag: not a flag
}

// The tagged fields become flags with the defaults' values; the parsed
// settings and the Env reach run; extra flags in p still register.
func TestConfigured(t *testing.T) {
	var got settings
	var seed uint64
	extra := 0
	p := Configured(Program{Name: "cfg", Flags: func(fs *flag.FlagSet) { fs.IntVar(&extra, "extra", 0, "more") }},
		settings{N: 3, Big: 7, LR: 0.5, Mode: "a", Other: 9},
		func(s settings, env *Env) (any, error) { got, seed = s, env.Seed; return nil, nil })
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), p, []string{"-quiet", "-out", t.TempDir(), "-seed", "4", "-n", "5", "-lr", "0.25", "-on", "-extra", "2"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	want := settings{N: 5, Big: 7, LR: 0.25, Mode: "a", On: true, Other: 9}
	if got != want || seed != 4 || extra != 2 {
		t.Errorf("got %+v, seed %d, extra %d; want %+v, 4, 2", got, seed, extra, want)
	}
	stderr.Reset()
	Run(context.Background(), p, []string{"-h"}, &stdout, &stderr)
	for _, s := range []string{"-mode string", "a word (default \"a\")", "-big uint", "-n int", "a size (default 3)"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("usage lacks %q:\n%s", s, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "Other") || strings.Contains(stderr.String(), "-other") {
		t.Errorf("untagged field became a flag:\n%s", stderr.String())
	}
}

// A tagged field of an unsupported type, or an unexported one, panics
// with a message naming it.
func TestStructFlagsRejects(t *testing.T) {
	for _, c := range []struct {
		cfg  any
		want string
	}{
		{&struct {
			F float32 `flag:"f"`
		}{}, "field F"},
		{&struct {
			g int `flag:"g"`
		}{}, "field g"},
		{struct{}{}, "pointer to a struct"},
	} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, c.want) {
					t.Errorf("panic %v, want one naming %q", r, c.want)
				}
			}()
			StructFlags(flag.NewFlagSet("x", flag.ContinueOnError), c.cfg)
		}()
	}
}

// KeepGiven puts back only the flags given on the command line.
func TestKeepGiven(t *testing.T) {
	var a, b int
	var got [2]int
	p := Program{Name: "preset",
		Flags: func(fs *flag.FlagSet) { fs.IntVar(&a, "a", 1, "a"); fs.IntVar(&b, "b", 2, "b") },
		Run: func(env *Env) (any, error) {
			got = [2]int{10, 20} // the preset
			KeepGiven(env, "a", &got[0], a)
			KeepGiven(env, "b", &got[1], b)
			return nil, nil
		}}
	var out bytes.Buffer
	if code := Run(context.Background(), p, []string{"-quiet", "-out", t.TempDir(), "-b", "7"}, &out, &out); code != 0 {
		t.Fatalf("exit code %d: %s", code, out.String())
	}
	if got != [2]int{10, 7} {
		t.Errorf("got %v, want [10 7]", got)
	}
}
