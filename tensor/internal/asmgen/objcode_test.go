package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// update rewrites testdata/objcode.sha256 from the generated file. Use it
// only when a kernel's machine code is meant to change, and say why in the
// commit.
var update = flag.Bool("update", false, "rewrite testdata/objcode.sha256")

const goldenHeader = "# sha256 of each symbol's machine code in tensor/simd_amd64.s (see objcode_test.go);\n" +
	"# recorded from the hand-written file at commit 8002d2a with go1.26.8\n"

const (
	committed = "../../simd_amd64.s"
	golden    = "testdata/objcode.sha256"
)

// TestObjectCodeUnchanged generates the file afresh, assembles it and
// compares every symbol's machine code (instruction bytes, relocations,
// frame and flags for TEXT symbols; contents for DATA symbols) with the
// hashes recorded in testdata, which were taken from the hand-written file
// the generator replaced (tensor/simd_amd64.s at commit 8002d2a, assembled
// by go1.26.8). A Go release whose assembler encodes some instruction
// differently changes those bytes for both files alike: re-record the
// hashes from that commit's file, then check the generated one against
// them. It also checks that the committed file is the
// generator's output, so no one edits it by hand.
func TestObjectCodeUnchanged(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "simd_amd64.s")
	run(t, "go", "run", ".", "-out", out)

	gen, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	// The first line names the command and its -out path.
	if !bytes.Equal(afterFirstLine(gen), afterFirstLine(have)) {
		t.Errorf("%s is not the generator's output: run go generate ./tensor", committed)
	}

	got := symbolHashes(t, out)
	if *update {
		var b strings.Builder
		b.WriteString(goldenHeader)
		for _, name := range sortedKeys(got) {
			fmt.Fprintf(&b, "%s %s\n", got[name], name)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readGolden(t)
	for _, name := range sortedKeys(want) {
		switch h, ok := got[name]; {
		case !ok:
			t.Errorf("symbol %s is missing from the generated file", name)
		case h != want[name]:
			t.Errorf("symbol %s assembles to different machine code", name)
		}
	}
	for _, name := range sortedKeys(got) {
		if _, ok := want[name]; !ok {
			t.Errorf("symbol %s is new: record it with -update", name)
		}
	}
}

// symbolHashes assembles the file at path with `go tool asm -S` and hashes
// each symbol's listing without its source lines: the header (kind, size,
// frame, flags), the hex dump of its bytes and its relocations.
func symbolHashes(t *testing.T, path string) map[string]string {
	t.Helper()
	goroot := strings.TrimSpace(run(t, "go", "env", "GOROOT"))
	listing := run(t, "go", "tool", "asm", "-S",
		"-I", filepath.Join(goroot, "pkg", "include"),
		"-p", "github.com/gradus-ml/gradus/tensor",
		"-o", filepath.Join(t.TempDir(), "simd.o"), path)
	sums := map[string]string{}
	var name string
	var body strings.Builder
	flush := func() {
		if name != "" {
			sums[name] = fmt.Sprintf("%x", sha256.Sum256([]byte(body.String())))
		}
		body.Reset()
	}
	sc := bufio.NewScanner(strings.NewReader(listing))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !strings.HasPrefix(line, "\t"):
			flush()
			name = strings.Fields(line)[0]
			body.WriteString(line + "\n")
		case isSourceLine(line):
			// "\t0x0000 00000 (file:line)\tMOVQ ...": the instruction as
			// written, which the bytes below already capture.
		default:
			body.WriteString(line + "\n")
		}
	}
	flush()
	if len(sums) == 0 {
		t.Fatalf("no symbols in the listing of %s", path)
	}
	return sums
}

func isSourceLine(line string) bool {
	f := strings.Fields(line)
	return len(f) >= 3 && strings.HasPrefix(f[0], "0x") && strings.HasPrefix(f[2], "(")
}

func readGolden(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			want[f[1]] = f[0]
		}
	}
	return want
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func afterFirstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}
