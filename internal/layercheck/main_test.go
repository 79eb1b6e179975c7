package main

import (
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mod = "github.com/gradus-ml/gradus"

func problems(rel, src string) []string {
	return checkFile(token.NewFileSet(), mod, rel, []byte(src))
}

func TestImportsPointDown(t *testing.T) {
	up := "package graph\n\nimport _ \"" + mod + "/nn\"\n"
	if p := problems("graph/x.go", up); len(p) != 1 || !strings.Contains(p[0], "graph (layer 1) imports nn (layer 4) from above") {
		t.Errorf("graph importing nn: %v", p)
	}
	down := "package nn\n\nimport _ \"" + mod + "/graph\"\n"
	if p := problems("nn/x.go", down); len(p) != 0 {
		t.Errorf("nn importing graph: %v", p)
	}
	// Tests may import upwards (autodiff's all-ops table imports logreg).
	if p := problems("graph/x_test.go", up); len(p) != 0 {
		t.Errorf("a test importing upwards: %v", p)
	}
}

func TestUnknownPackagesAndTestOnlyImports(t *testing.T) {
	if p := problems("widgets/x.go", "package widgets\n"); len(p) != 1 || !strings.Contains(p[0], "not in layercheck's layer table") {
		t.Errorf("an unknown package: %v", p)
	}
	src := "package nn\n\nimport _ \"" + mod + "/internal/numtest\"\n"
	if p := problems("nn/x.go", src); len(p) != 1 || !strings.Contains(p[0], "only tests may import") {
		t.Errorf("numtest from library code: %v", p)
	}
	if p := problems("nn/x_test.go", src); len(p) != 0 {
		t.Errorf("numtest from a test: %v", p)
	}
	helper := "package mnist\n\nimport _ \"" + mod + "/examples/internal/mnist/mnisttest\"\n"
	if p := problems("examples/mnist/x.go", helper); len(p) != 1 || !strings.Contains(p[0], "only tests may import") {
		t.Errorf("mnisttest from an example's library code: %v", p)
	}
}

func TestSubpackagesSitAboveTheirParent(t *testing.T) {
	up := "package probabilistic\n\nimport _ \"" + mod + "/probabilistic/gp\"\n"
	if p := problems("probabilistic/x.go", up); len(p) != 1 || !strings.Contains(p[0], "probabilistic (layer 6) imports probabilistic/gp (layer 8)") {
		t.Errorf("probabilistic importing its gp subpackage: %v", p)
	}
	if p := problems("tensor/internal/gemm/x.go", "package gemm\n\nimport _ \""+mod+"/graph\"\n"); len(p) != 1 {
		t.Errorf("gemm importing graph: %v", p)
	}
}

func TestFileLength(t *testing.T) {
	long := "package nn\n" + strings.Repeat("\n", maxLines)
	if p := problems("nn/x.go", long); len(p) != 1 || !strings.Contains(p[0], "over the limit of 700") {
		t.Errorf("a long file: %v", p)
	}
}

func TestDocComments(t *testing.T) {
	src := `package nn

func Bare() {}

// Documented says why.
func Documented() {}

type T struct{}

func (T) Method() {}

type hidden struct{}

func (hidden) Method() {}

// Group of constants.
const (
	A = 1
	B = 2
)

var V = 3
`
	p := problems("nn/x.go", src)
	want := []string{"func Bare", "type T", "func Method", "exported V"}
	if len(p) != len(want) {
		t.Fatalf("got %d problems, want %d: %v", len(p), len(want), p)
	}
	for i, w := range want {
		if !strings.Contains(p[i], w) {
			t.Errorf("problem %d = %q, want it to name %q", i, p[i], w)
		}
	}
	if p := problems("examples/x/main.go", "package main\n\nfunc Run() {}\n"); len(p) != 0 {
		t.Errorf("package main needs no doc comments: %v", p)
	}
}

func TestTrustedKernelsOnlyFromTensorAndGraph(t *testing.T) {
	src := func(pkg string) string {
		return "package " + pkg + "\n\nimport _ \"" + mod + "/internal/unchecked\"\n"
	}
	for _, ok := range []string{"tensor/x.go", "graph/x.go", "graph/x_test.go"} {
		if p := problems(ok, src("x")); len(p) != 0 {
			t.Errorf("%s importing internal/unchecked: %v", ok, p)
		}
	}
	for _, bad := range []string{"nn/x.go", "nn/x_test.go", "autodiff/x.go", "tensor/internal/gemm/x.go"} {
		if p := problems(bad, src("x")); len(p) != 1 || !strings.Contains(p[0], "only tensor and graph may import") {
			t.Errorf("%s importing internal/unchecked: %v", bad, p)
		}
	}
}

func TestConvention(t *testing.T) {
	src := `package svm

import "context"

// Config is a second dialect.
type Config struct{}

// FitSVC takes its options variadically.
func FitSVC(x int, opts ...SVCOptions) {}

// Fit is the one function.
func Fit(ctx context.Context) {}

// FitContext is its twin.
func FitContext(ctx context.Context) {}

// Bind has a variadic list that is not options.
func Bind(xs ...int) {}
`
	p := problems("learn/svm/x.go", src)
	want := []string{"type Config", "func FitSVC takes variadic options", "func FitContext is a …Context twin"}
	if len(p) != len(want) {
		t.Fatalf("got %d problems, want %d: %v", len(p), len(want), p)
	}
	for i, w := range want {
		if !strings.Contains(p[i], w) {
			t.Errorf("problem %d = %q, want it to name %q", i, p[i], w)
		}
	}
	// Config is a second dialect in every library package, and allowed in
	// the example programs' internal packages.
	cfg := "package train\n\n// Config sets the loop.\ntype Config struct{}\n"
	if p := problems("train/x.go", cfg); len(p) != 1 || !strings.Contains(p[0], "named XOptions, not Config") {
		t.Errorf("a Config in train: %v", p)
	}
	if p := problems("examples/internal/mnist/x.go", cfg); len(p) != 0 {
		t.Errorf("a Config in an example's internal package: %v", p)
	}
}

func TestTopLevelFolders(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < maxTopLevel+1; i++ {
		if err := os.Mkdir(filepath.Join(root, fmt.Sprintf("d%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := topLevel(root)
	if err != nil || len(p) != 1 || !strings.Contains(p[0], "18 top-level folders") {
		t.Errorf("18 folders: %v, %v", p, err)
	}
	if err := os.Remove(filepath.Join(root, "d00")); err != nil {
		t.Fatal(err)
	}
	if p, err := topLevel(root); err != nil || len(p) != 0 {
		t.Errorf("17 folders: %v, %v", p, err)
	}
}

func TestCourseCitations(t *testing.T) {
	src := "package svm\n\n// Fit follows seed 000 §3.2 and Platt (1999).\nfunc Fit() {}\n\n// Bishop (2006), §9.2.\nfunc Other() {}\n"
	if p := problems("learn/svm/x.go", src); len(p) != 1 || !strings.Contains(p[0], "x.go:3: comment cites the course texts") {
		t.Errorf("a course citation: %v", p)
	}
	if p := problems("learn/svm/x_test.go", "package svm\n\n// as ../shared/seeds says\n"); len(p) != 1 {
		t.Errorf("a course citation in a test: %v", p)
	}
}
