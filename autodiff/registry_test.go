package autodiff_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAllOpsTableSeesEveryPackage finds every package of the module that
// registers ops (a call of graph.Register, or of Register inside package
// graph) and fails unless this test package imports it: only then are its
// ops in graph.Registered() when TestGradCheckAllOps walks the table, so
// an op defined anywhere cannot miss its gradient check.
func TestAllOpsTableSeesEveryPackage(t *testing.T) {
	const root = ".."
	module := modulePath(t, root)
	imported := map[string]bool{module + "/graph": true}
	tests, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range tests {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			imported[p] = true
		}
	}
	registering := map[string]string{} // package path → a file that registers
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if base := d.Name(); path != root && (strings.HasPrefix(base, ".") || base == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if callsRegister(f) {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			registering[module+"/"+filepath.ToSlash(rel)] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(registering) == 0 {
		t.Fatal("found no package that registers ops; the source walk is broken")
	}
	for pkg, file := range registering {
		if !imported[pkg] {
			t.Errorf("%s registers graph ops (%s) but autodiff's tests do not import %s: add its gradient-check cases there", pkg, file, pkg)
		}
	}
}

// callsRegister reports whether f calls graph.Register (or Register, in
// package graph itself).
func callsRegister(f *ast.File) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		switch fun := call.Fun.(type) {
		case *ast.SelectorExpr:
			if x, ok := fun.X.(*ast.Ident); ok && x.Name == "graph" && fun.Sel.Name == "Register" {
				found = true
			}
		case *ast.Ident:
			if f.Name.Name == "graph" && fun.Name == "Register" {
				found = true
			}
		}
		return !found
	})
	return found
}

func modulePath(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatal("go.mod has no module line")
	return ""
}
