package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"regexp"
	"strings"
)

// courseText matches a citation of the course texts behind Gradus
// (kept beside the repository, not in it), which users do not have:
// comments cite the papers and books instead.
var courseText = regexp.MustCompile(`(?i)\bseeds?\s+0\d\d\b|shared/seeds`)

// courseCitations reports the comments of f that cite the course texts.
func courseCitations(fset *token.FileSet, rel string, f *ast.File) []string {
	var out []string
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if m := courseText.FindString(c.Text); m != "" {
				out = append(out, fmt.Sprintf("%s:%d: comment cites the course texts (%q): cite the paper or book (author, year, title)", rel, fset.Position(c.Pos()).Line, m))
			}
		}
	}
	return out
}

// maxTopLevel bounds the folders at the module root: the design card's
// packages, learn/, the toolkit, cmd, internal and docs.
const maxTopLevel = 17

// topLevel reports the root's folders over maxTopLevel.
func topLevel(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "out" {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) > maxTopLevel {
		return []string{fmt.Sprintf(".:1: %d top-level folders (%s), over the limit of %d: group them", len(dirs), strings.Join(dirs, " "), maxTopLevel)}, nil
	}
	return nil, nil
}

// convention returns the file's breaches of the API convention: exported
// variadic options (one plain struct instead), exported XContext twins
// (ctx is the first parameter of the one function), and exported Config
// types in library packages (a struct of knobs is an XOptions everywhere;
// the example programs' internal packages are not library API).
func convention(fset *token.FileSet, rel, dir string, f *ast.File) []string {
	var out []string
	at := func(pos token.Pos, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s:%d: ", rel, fset.Position(pos).Line)+fmt.Sprintf(format, args...))
	}
	library := dir != "examples" && !strings.HasPrefix(dir, "examples/")
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
				continue
			}
			params := d.Type.Params.List
			if n := len(params); n > 0 {
				if v, ok := params[n-1].Type.(*ast.Ellipsis); ok && optionsType(v.Elt) {
					at(d.Pos(), "func %s takes variadic options: take one options struct whose zero value means the defaults", d.Name.Name)
				}
			}
			if name := d.Name.Name; name != "Context" && strings.HasSuffix(name, "Context") && len(params) > 0 && isContext(params[0].Type) {
				at(d.Pos(), "func %s is a …Context twin: give %s the context as its first parameter instead", name, strings.TrimSuffix(name, "Context"))
			}
		case *ast.GenDecl:
			if !library {
				continue
			}
			for _, spec := range d.Specs {
				if s, ok := spec.(*ast.TypeSpec); ok && s.Name.IsExported() && strings.HasSuffix(s.Name.Name, "Config") {
					at(s.Pos(), "type %s: a struct of knobs is named XOptions, not Config", s.Name.Name)
				}
			}
		}
	}
	return out
}

// optionsType reports whether t names an options or config type.
func optionsType(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.SelectorExpr:
			t = x.Sel
		case *ast.Ident:
			return strings.HasSuffix(x.Name, "Options") || strings.HasSuffix(x.Name, "Option") || strings.HasSuffix(x.Name, "Config")
		default:
			return false
		}
	}
}

func isContext(t ast.Expr) bool {
	s, ok := t.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := s.X.(*ast.Ident)
	return ok && pkg.Name == "context" && s.Sel.Name == "Context"
}
