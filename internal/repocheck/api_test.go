package repocheck

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A publicPackage is one public package of the module, parsed from its
// non-test files: what a user can import. The internal packages, the
// command, the examples and the end-to-end suite are not public.
type publicPackage struct {
	path  string // relative to the module: "claudeinbox", "fakes/fakedoor", "."
	fset  *token.FileSet
	files []*ast.File // sorted by file name
}

// publicPackages parses every public package of the module at root.
func publicPackages(t *testing.T, root string) []publicPackage {
	t.Helper()
	var pkgs []publicPackage
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel != "." && !isPublic(rel) {
			return filepath.SkipDir
		}
		p := publicPackage{path: rel, fset: token.NewFileSet()}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(p.fset, filepath.Join(path, n), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			if f.Name.Name == "main" {
				return nil // a program inside fakes/, not an importable package
			}
			p.files = append(p.files, f)
		}
		if len(p.files) > 0 {
			pkgs = append(pkgs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d public packages under %s", len(pkgs), root)
	}
	return pkgs
}

// isPublic reports whether the directory rel (slash-separated, relative to
// the module root) holds a package a user of the module imports.
func isPublic(rel string) bool {
	for _, elem := range strings.Split(rel, "/") {
		if elem == "internal" || elem == "testdata" || strings.HasPrefix(elem, ".") || strings.HasPrefix(elem, "_") {
			return false
		}
	}
	first, _, _ := strings.Cut(rel, "/")
	return first != "cli" && first != "e2e" && first != "examples" && first != "scripts"
}

// exportedTypes is the set of exported type names the package declares.
func (p publicPackage) exportedTypes() map[string]bool {
	types := map[string]bool{}
	for _, s := range genSpecs(p.files, token.TYPE) {
		if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
			types[ts.Name.Name] = true
		}
	}
	return types
}

// recvType is the name of a method's receiver type, without * or type
// parameters.
func recvType(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// exportedFuncs is every exported function of the package and every
// exported method of its exported types.
func (p publicPackage) exportedFuncs() []*ast.FuncDecl {
	types := p.exportedTypes()
	var fns []*ast.FuncDecl
	for _, f := range p.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv != nil && !types[recvType(fd)] {
				continue
			}
			fns = append(fns, fd)
		}
	}
	return fns
}

// typeString prints an expression as the source spells it, on one line.
func typeString(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, fset, e)
	return strings.Join(strings.Fields(b.String()), " ")
}

// TestNoExportedState: the only exported variables of the public packages
// are error sentinels (ErrX = errors.New(...)): no package-level state a
// caller could change under another, such as an exported slice of
// protocol versions or a default a test swaps.
func TestNoExportedState(t *testing.T) {
	vars, root := 0, moduleRoot(t)
	for _, p := range publicPackages(t, root) {
		for _, s := range genSpecs(p.files, token.VAR) {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !n.IsExported() {
					continue
				}
				vars++
				if !strings.HasPrefix(n.Name, "Err") || i >= len(vs.Values) || !isErrorsNew(vs.Values[i]) {
					pos := p.fset.Position(n.Pos())
					file, _ := filepath.Rel(root, pos.Filename)
					t.Errorf("%s:%d: var %s is exported state; export a func or a const, or unexport it (only ErrX = errors.New(...) sentinels are exported variables)",
						file, pos.Line, n.Name)
				}
			}
		}
	}
	if vars == 0 {
		t.Error("no exported variables found at all; is the parser reading the packages?")
	}
}

// isErrorsNew reports whether e is errors.New(...) or fmt.Errorf(...).
func isErrorsNew(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && (x.Name == "errors" && sel.Sel.Name == "New" || x.Name == "fmt" && sel.Sel.Name == "Errorf")
}

// update rewrites the golden API file: go test ./internal/repocheck -run TestAPI -update
var update = flag.Bool("update", false, "rewrite testdata/api.txt from the packages' current exported API")

// apiGolden is the exported API the repository promises, one line per
// name, in the manner of Go's api/*.txt.
const apiGolden = "testdata/api.txt"

// apiLines is the exported API of p, one line per exported name: a
// function or method with its signature (parameter types, no names), a
// type with its kind, each exported field of a struct and method of an
// interface, a const with its type and the value as written (so a class
// string of the v0.1 contract is pinned too), a var with its type when
// declared. It also returns the count of names, counted as issue 14
// counts them (top-level funcs, methods of exported types, types, consts,
// vars; fields and interface methods are pinned but not counted).
func apiLines(p publicPackage) (lines []string, names int) {
	prefix := "pkg " + p.path + ", "
	add := func(s string) { lines = append(lines, prefix+s) }
	for _, fd := range p.exportedFuncs() {
		names++
		sig := fd.Name.Name + signature(p.fset, fd.Type)
		if fd.Recv == nil {
			add("func " + sig)
		} else {
			add("method (" + typeString(p.fset, fd.Recv.List[0].Type) + ") " + sig)
		}
	}
	for _, f := range p.files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			lastType := "" // a const spec with neither type nor value repeats the last type (iota)
			for _, s := range g.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					names++
					lines = append(lines, typeLines(p.fset, prefix, s)...)
				case *ast.ValueSpec:
					typ := ""
					if s.Type != nil {
						typ = " " + typeString(p.fset, s.Type)
					}
					if g.Tok == token.CONST {
						if s.Type == nil && len(s.Values) == 0 {
							typ = lastType
						}
						lastType = typ
					}
					for j, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						names++
						line := g.Tok.String() + " " + n.Name + typ
						if g.Tok == token.CONST && j < len(s.Values) {
							line += " = " + typeString(p.fset, s.Values[j])
						}
						add(line)
					}
				}
			}
		}
	}
	slices.Sort(lines)
	return lines, names
}

// signature prints a function type's parameters and results by type only.
func signature(fset *token.FileSet, ft *ast.FuncType) string {
	list := func(fl *ast.FieldList) []string {
		if fl == nil {
			return nil
		}
		var out []string
		for _, f := range fl.List {
			n := max(len(f.Names), 1)
			for range n {
				out = append(out, typeString(fset, f.Type))
			}
		}
		return out
	}
	s := "(" + strings.Join(list(ft.Params), ", ") + ")"
	switch res := list(ft.Results); len(res) {
	case 0:
	case 1:
		s += " " + res[0]
	default:
		s += " (" + strings.Join(res, ", ") + ")"
	}
	if ft.TypeParams != nil {
		s = "[" + strings.Join(list(ft.TypeParams), ", ") + "]" + s
	}
	return s
}

// typeLines pins an exported type: its kind, and each exported field or
// interface method.
func typeLines(fset *token.FileSet, prefix string, s *ast.TypeSpec) []string {
	name := s.Name.Name
	if s.Assign.IsValid() {
		return []string{prefix + "type " + name + " = " + typeString(fset, s.Type)}
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		lines := []string{prefix + "type " + name + " struct"}
		for _, f := range t.Fields.List {
			ft := typeString(fset, f.Type)
			if len(f.Names) == 0 {
				if embedded := strings.TrimPrefix(ft, "*"); ast.IsExported(embedded[strings.LastIndex(embedded, ".")+1:]) {
					lines = append(lines, prefix+"type "+name+" struct, embedded "+ft)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					lines = append(lines, prefix+"type "+name+" struct, "+n.Name+" "+ft)
				}
			}
		}
		return lines
	case *ast.InterfaceType:
		lines := []string{prefix + "type " + name + " interface"}
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				lines = append(lines, prefix+"type "+name+" interface, embedded "+typeString(fset, m.Type))
				continue
			}
			if ft, ok := m.Type.(*ast.FuncType); ok && m.Names[0].IsExported() {
				lines = append(lines, prefix+"type "+name+" interface, "+m.Names[0].Name+signature(fset, ft))
			}
		}
		return lines
	default:
		return []string{prefix + "type " + name + " " + typeString(fset, s.Type)}
	}
}

// TestAPI holds the exported API of every public package to
// testdata/api.txt: a name added, removed or changed fails the test with
// the difference, so a change to the API is a deliberate edit of the
// golden file, seen in review. The -v log has the count per package.
func TestAPI(t *testing.T) {
	var got []string
	var counts strings.Builder
	total := 0
	for _, p := range publicPackages(t, moduleRoot(t)) {
		lines, names := apiLines(p)
		got = append(got, lines...)
		total += names
		fmt.Fprintf(&counts, "%4d %s\n", names, p.path)
	}
	if testing.Verbose() {
		t.Logf("exported names per package:\n%s%4d total", counts.String(), total)
	}
	slices.Sort(got)
	text := strings.Join(got, "\n") + "\n"
	if *update {
		if err := os.MkdirAll(filepath.Dir(apiGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(apiGolden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d lines", apiGolden, len(got))
		return
	}
	b, err := os.ReadFile(apiGolden)
	if err != nil {
		t.Fatalf("%v\nto write it: go test ./internal/repocheck -run TestAPI -update", err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var added, removed []string
	for _, l := range got {
		if _, ok := slices.BinarySearch(want, l); !ok {
			added = append(added, "+"+l)
		}
	}
	for _, l := range want {
		if _, ok := slices.BinarySearch(got, l); !ok {
			removed = append(removed, "-"+l)
		}
	}
	if len(added)+len(removed) > 0 {
		t.Errorf("the exported API differs from %s (%d added, %d removed):\n%s\n\n"+
			"If the change is meant (a name a user needs, or one with no user gone), update the file and review its diff:\n"+
			"\tgo test ./internal/repocheck -run TestAPI -update",
			apiGolden, len(added), len(removed), strings.Join(append(removed, added...), "\n"))
	}
}

// genSpecs yields each spec of the files' declarations of one of the kinds
// toks (token.TYPE, token.CONST, token.VAR) with its declaration, whose
// doc comment a lone spec shares.
func genSpecs(files []*ast.File, toks ...token.Token) iter.Seq2[*ast.GenDecl, ast.Spec] {
	return func(yield func(*ast.GenDecl, ast.Spec) bool) {
		for _, f := range files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || !slices.Contains(toks, g.Tok) {
					continue
				}
				for _, s := range g.Specs {
					if !yield(g, s) {
						return
					}
				}
			}
		}
	}
}

// funcName is "pkg.F" for a function and "pkg.T.M" for a method.
func funcName(pkg string, fd *ast.FuncDecl) string {
	if fd.Recv == nil {
		return pkg + "." + fd.Name.Name
	}
	return pkg + "." + recvType(fd) + "." + fd.Name.Name
}
