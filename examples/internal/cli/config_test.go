package cli

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
)

type settings struct {
	Training        // -epochs, -batch, -lr
	N        int    `flag:"n" help:"a size"`
	Big      uint64 `flag:"big" help:"a count"`
	Mode     string `flag:"mode" help:"a word"`
	On       bool   `flag:"on" help:"a switch"`
	Other    int    // no tag: not a flag
}

// The tagged fields, those of an embedded group included, become flags
// with the defaults' values; the parsed settings and the Env reach run;
// extra flags in p still register.
func TestConfigured(t *testing.T) {
	var got settings
	var seed uint64
	extra := 0
	p := Configured(Program{Name: "cfg", Flags: func(fs *flag.FlagSet) { fs.IntVar(&extra, "extra", 0, "more") }},
		settings{Training: Training{Epochs: 2, Batch: 8, LR: 0.5}, N: 3, Big: 7, Mode: "a", Other: 9},
		func(s settings, env *Env) (any, error) { got, seed = s, env.Seed; return nil, nil })
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), p, []string{"-quiet", "-out", t.TempDir(), "-seed", "4", "-n", "5", "-lr", "0.25", "-epochs", "6", "-on", "-extra", "2"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	want := settings{Training: Training{Epochs: 6, Batch: 8, LR: 0.25}, N: 5, Big: 7, Mode: "a", On: true, Other: 9}
	if got != want || seed != 4 || extra != 2 {
		t.Errorf("got %+v, seed %d, extra %d; want %+v, 4, 2", got, seed, extra, want)
	}
	stderr.Reset()
	Run(context.Background(), p, []string{"-h"}, &stdout, &stderr)
	for _, s := range []string{"-mode string", "a word (default \"a\")", "-big uint", "-n int", "a size (default 3)", "-batch int", "(default 8)"} {
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

// Preset applies the preset, then puts back the flags given on the
// command line, those of an embedded group included.
func TestPreset(t *testing.T) {
	small := func(s settings) settings {
		s.N, s.Epochs, s.Batch, s.Mode = 1, 1, 2, "small"
		return s
	}
	for _, c := range []struct {
		name string
		args []string
		want settings
	}{
		{"no flags", nil, settings{Training: Training{Epochs: 1, Batch: 2}, N: 1, Mode: "small"}},
		{"given flags win", []string{"-n", "7", "-batch", "16"}, settings{Training: Training{Epochs: 1, Batch: 16}, N: 7, Mode: "small"}},
		{"a flag given its default value still wins", []string{"-epochs", "3"}, settings{Training: Training{Epochs: 3, Batch: 2}, N: 1, Mode: "small"}},
	} {
		var got settings
		p := Configured(Program{Name: "preset"}, settings{Training: Training{Epochs: 3, Batch: 4}, N: 5, Mode: "full"},
			func(s settings, env *Env) (any, error) { got = Preset(env, s, small); return nil, nil })
		var out bytes.Buffer
		if code := Run(context.Background(), p, append([]string{"-quiet", "-out", t.TempDir()}, c.args...), &out, &out); code != 0 {
			t.Fatalf("%s: exit code %d: %s", c.name, code, out.String())
		}
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
