// Command layercheck enforces the architecture's rules on the module's
// source (run by make lint and make test):
//
//   - imports point down: no package imports one on a higher layer of
//     the stack drawn in docs/design.md (the table below; a new package must be
//     added to it, which forces the decision of where it sits);
//   - the test-helper packages (testOnly below) are imported by tests only;
//   - internal/unchecked, tensor's kernels without validation, is imported
//     by tensor and graph only (trustedBy below);
//   - no Go file, tests included, is longer than 700 lines;
//   - every exported name of a library package has a doc comment;
//   - the API convention (convention.go): no exported variadic options, no
//     exported …Context twins, no exported Config types in library packages, and at
//     most 17 folders at the top level;
//   - no comment cites the course texts behind Gradus (users cannot read
//     them): comments cite papers and books.
//
// It prints one line per violation, file:line: what, and exits 1 if there
// is any.
//
//	go run ./internal/layercheck [module root, default .]
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// layers lists the module's packages by prefix, lowest layer first, one
// line each. A package may import packages of its own layer or below; the
// longest matching prefix decides a package's layer. Ranks follow the stack
// in docs/design.md, with a package's subpackages a step above it where they
// import it (probabilistic/gp imports probabilistic).
var layers = []struct {
	prefix string
	rank   int
}{
	{"internal/unchecked", 0}, // tensor's trusted kernels: filled by tensor, so below it
	{"internal/cpuinfo", 0},   // the CPU's caches and FMA peak: gemm's blocking reads them
	{"internal/parallel", 0},  // the fork-join over index ranges that tensor, optim and gp share
	{"tensor", 0},             // tensor/internal/gemm shares tensor's layer
	{"graph", 1},
	{"metrics", 1},           // the leaves of the toolkit: every model may use them
	{"internal/validate", 1}, // the estimators' input checks: learn, logreg and gp share them
	{"data", 1},
	{"plot", 1},
	{"autodiff", 2},
	{"losses", 3},
	{"optim", 3},
	{"nn", 4},
	{"nn/checkpoint", 5},
	{"nn/onnx", 5},
	{"probabilistic", 6},
	{"probabilistic/kernel", 7}, // the shared kernels: gp, svm, pca and kerneltest use them
	{"probabilistic/hmm", 7},    // hidden Markov models: forward, forward-backward, Viterbi
	{"probabilistic/factor", 7}, // discrete factor graphs: variable elimination, belief propagation
	{"probabilistic/gp", 8},
	{"probabilistic/logreg", 8},
	{"probabilistic/vae", 8},
	{"probabilistic/gan", 8},
	{"probabilistic/diffusion", 8},
	{"probabilistic/inference", 9},
	{"probabilistic/ppl", 10}, // models as programs: drives inference's samplers
	{"learn", 9},              // the estimators; learn/anomaly builds on learn/mixture and learn/pca
	{"distributed", 10},
	{"train", 11},
	{"cmd", 12},
	{"examples", 13},
	{"internal/layercheck", 13},
	{"internal/numtest", 13},
	{"internal/gpucheck", 13}, // tests only: ops and training steps on a CUDA device
}

// testOnly lists the test-helper packages, which only _test.go files may
// import.
var testOnly = map[string]bool{
	"internal/numtest":                  true,
	"examples/internal/mnist/mnisttest": true,
	"learn/internal/sktest":             true,
}

// trustedBy lists packages that only the named packages may import, tests
// included: internal/unchecked skips validation, so only tensor (which
// fills it), graph (whose constructors validate before their ops'
// Forward calls it) and optim (whose Step checks the gradients against
// the parameters before the GPU update) may use it. The layer table alone would let any
// package above tensor call kernels that trust their arguments.
var trustedBy = map[string][]string{
	"internal/unchecked": {"tensor", "graph", "optim"},
}

const maxLines = 700

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	problems, err := check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "layercheck:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Printf("layercheck: %d problems\n", len(problems))
		os.Exit(1)
	}
}

// check walks the Go files under root and returns the violations, sorted.
func check(root string) ([]string, error) {
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	var problems []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		problems = append(problems, checkFile(fset, module, rel, src)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	top, err := topLevel(root)
	problems = append(problems, top...)
	sort.Strings(problems)
	return problems, err
}

// checkFile returns the violations of one file, named rel (slash-separated,
// relative to the module root).
func checkFile(fset *token.FileSet, module, rel string, src []byte) []string {
	var out []string
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
	if err != nil {
		return append(out, fmt.Sprintf("%s:1: %v", rel, err))
	}
	// Generated code (Go's "Code generated ... DO NOT EDIT." header) is
	// reproduced by a make target, not written by hand: its size and doc
	// comments are the generator's; its imports are still ours to check.
	generated := ast.IsGenerated(f)
	if n := strings.Count(string(src), "\n"); n > maxLines && !generated {
		out = append(out, fmt.Sprintf("%s:1: %d lines, over the limit of %d: split it by concern", rel, n, maxLines))
	}
	dir := filepath.ToSlash(filepath.Dir(rel))
	test := strings.HasSuffix(rel, "_test.go")
	rank, _, known := layerOf(dir)
	if !known {
		return append(out, fmt.Sprintf("%s:1: package %s is not in layercheck's layer table: add it where it belongs", rel, dir))
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !strings.HasPrefix(p, module+"/") {
			continue
		}
		target := strings.TrimPrefix(p, module+"/")
		tr, forTests, ok := layerOf(target)
		line := fset.Position(imp.Pos()).Line
		switch {
		case trustedBy[target] != nil && !slices.Contains(trustedBy[target], dir):
			out = append(out, fmt.Sprintf("%s:%d: imports %s, which only %s may import", rel, line, target, joinNames(trustedBy[target])))
		case !ok:
			out = append(out, fmt.Sprintf("%s:%d: imports %s, which is not in the layer table", rel, line, target))
		case forTests && !test:
			out = append(out, fmt.Sprintf("%s:%d: imports %s, which only tests may import", rel, line, target))
		case tr > rank && !test:
			out = append(out, fmt.Sprintf("%s:%d: %s (layer %d) imports %s (layer %d) from above", rel, line, dir, rank, target, tr))
		}
	}
	out = append(out, courseCitations(fset, rel, f)...)
	if !test && !generated && f.Name.Name != "main" {
		out = append(out, undocumented(fset, rel, f)...)
		out = append(out, convention(fset, rel, dir, f)...)
	}
	return out
}

// layerOf returns the rank of the longest prefix matching pkg and whether
// only tests may import it.
func layerOf(pkg string) (rank int, tests, known bool) {
	best := -1
	for _, l := range layers {
		if (pkg == l.prefix || strings.HasPrefix(pkg, l.prefix+"/")) && len(l.prefix) > best {
			best, rank = len(l.prefix), l.rank
		}
	}
	return rank, testOnly[pkg], best >= 0
}

// undocumented lists exported declarations without a doc comment: funcs,
// methods of exported types, and types, consts and vars (a grouped
// declaration's comment covers its members).
func undocumented(fset *token.FileSet, rel string, f *ast.File) []string {
	var out []string
	report := func(pos token.Pos, what string) {
		out = append(out, fmt.Sprintf("%s:%d: exported %s has no doc comment", rel, fset.Position(pos).Line, what))
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && !exportedRecv(d.Recv) {
				continue
			}
			report(d.Pos(), "func "+d.Name.Name)
		case *ast.GenDecl:
			if d.Doc != nil && d.Lparen.IsValid() {
				continue // the group's comment covers it
			}
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
						report(s.Pos(), "type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && d.Doc == nil && s.Comment == nil {
							report(n.Pos(), n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

func exportedRecv(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return true
		}
	}
}

func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(rest), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
}

// joinNames lists names as prose: "a", "a and b", "a, b and c".
func joinNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
