package repocheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/oo-family/oo-claude"

// isInternalPath reports whether the import path p is one a program outside
// the module cannot import.
func isInternalPath(p string) bool {
	return strings.HasPrefix(p, "internal/") || strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal")
}

// An internalTypes check walks what the public packages show a user: the
// types of their exported constants and variables, the signatures of their
// exported functions and of the exported methods of their exported types,
// and the exported fields of their exported structs.
type internalTypes struct {
	fset *token.FileSet
	bad  []string
}

// apiCheck is the declaration being walked, for the failure: "doorman.Status.State".
type apiCheck struct {
	ident string
	pos   token.Pos
	// option: the declaration is an exported func type's own signature,
	// the functional-option idiom (type Option func(*config)), whose
	// unexported parameter a caller never names.
	option bool
}

func (c *internalTypes) fail(at apiCheck, n *types.Named, why string) {
	p := c.fset.Position(at.pos)
	file := path.Base(p.Filename)
	rel := func(p *types.Package) string { return strings.TrimPrefix(p.Path(), modulePath+"/") }
	c.bad = append(c.bad, fmt.Sprintf("%s (%s:%d): %s: %s", at.ident, file, p.Line, types.TypeString(n, rel), why))
}

func (c *internalTypes) typ(at apiCheck, t types.Type) {
	switch t := t.(type) {
	case *types.Alias:
		obj := t.Obj()
		if obj.Pkg() != nil && !isInternalPath(obj.Pkg().Path()) {
			// A public name: a user writes it. What it stands for is
			// walked where the alias is declared.
			return
		}
		c.typ(at, types.Unalias(t))
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() == nil || !isInternalPath(obj.Pkg().Path()) {
			if obj.Pkg() != nil && !obj.Exported() && obj.Parent() == obj.Pkg().Scope() && !at.option {
				c.fail(at, t, "an unexported type: a caller cannot name it; export it or return a public type")
			}
			for i := range t.TypeArgs().Len() {
				c.typ(at, t.TypeArgs().At(i))
			}
			return
		}
		c.fail(at, t, "an internal type: a caller outside the module cannot name it; show a public type (the inbox contract's are inboxv1's)")
	case *types.Pointer:
		c.typ(at, t.Elem())
	case *types.Slice:
		c.typ(at, t.Elem())
	case *types.Array:
		c.typ(at, t.Elem())
	case *types.Map:
		c.typ(at, t.Key())
		c.typ(at, t.Elem())
	case *types.Chan:
		c.typ(at, t.Elem())
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				c.typ(at, tup.At(i).Type())
			}
		}
	case *types.Struct:
		c.fields(at, t)
	case *types.Interface:
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				c.typ(apiCheck{at.ident + "." + m.Name(), m.Pos(), false}, m.Type())
			}
		}
	}
}

func (c *internalTypes) fields(at apiCheck, s *types.Struct) {
	for i := range s.NumFields() {
		if f := s.Field(i); f.Exported() {
			c.typ(apiCheck{at.ident + "." + f.Name(), f.Pos(), false}, f.Type())
		}
	}
}

// named walks a named type's exported fields (or interface methods) and
// its exported methods, under the name a user knows it by.
func (c *internalTypes) named(obj *types.TypeName, ident string) {
	n, ok := types.Unalias(obj.Type()).(*types.Named)
	if !ok {
		return
	}
	_, option := n.Underlying().(*types.Signature)
	c.typ(apiCheck{ident, obj.Pos(), option}, n.Underlying())
	for i := range n.NumMethods() {
		if m := n.Method(i); m.Exported() {
			c.typ(apiCheck{ident + "." + m.Name(), m.Pos(), false}, m.Type())
		}
	}
}

// checkInternalTypes type-checks the public packages (module-relative
// paths) from source and returns every exported identifier whose type a
// user cannot name.
func checkInternalTypes(t *testing.T, root string, rels []string) []string {
	t.Helper()
	// The packages are type-checked from their source (which keeps the
	// aliases as written); what they import comes from the compiler's
	// export data, which go list builds or finds in the build cache.
	args := []string{"list", "-export", "-deps", "-json=ImportPath,Export,Dir,GoFiles"}
	for _, rel := range rels {
		args = append(args, "./"+rel)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	type listed struct {
		ImportPath, Export, Dir string
		GoFiles                 []string // the files the build selects, tests excluded
	}
	list := map[string]listed{}
	for d := json.NewDecoder(bytes.NewReader(out)); ; {
		var l listed
		if err := d.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -export: %v", err)
		}
		list[l.ImportPath] = l
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
		if list[p].Export == "" {
			return nil, fmt.Errorf("no export data for %s", p)
		}
		return os.Open(list[p].Export)
	})
	var pkgs []*types.Package
	for _, rel := range rels {
		l := list[path.Join(modulePath, rel)]
		var files []*ast.File
		for _, name := range l.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(l.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		conf := types.Config{Importer: imp, IgnoreFuncBodies: true}
		p, err := conf.Check(l.ImportPath, fset, files, nil)
		if err != nil {
			t.Fatalf("type-check %s: %v", rel, err)
		}
		pkgs = append(pkgs, p)
	}
	c := &internalTypes{fset: fset}
	for _, p := range pkgs {
		for _, name := range p.Scope().Names() {
			obj := p.Scope().Lookup(name)
			if !obj.Exported() {
				continue
			}
			ident := p.Name() + "." + name
			switch obj := obj.(type) {
			case *types.TypeName:
				if !obj.IsAlias() {
					c.named(obj, ident)
					continue
				}
				if n, ok := types.Unalias(obj.Type()).(*types.Named); ok && n.Obj().Pkg() != nil && isInternalPath(n.Obj().Pkg().Path()) {
					c.fail(apiCheck{ident, obj.Pos(), false}, n, "a public alias of an internal type, whose fields go doc does not show; declare the type in a public package")
				}
				// An alias of a public type: walked where it is declared.
			default:
				c.typ(apiCheck{ident, obj.Pos(), false}, obj.Type())
			}
		}
	}
	slices.Sort(c.bad)
	return slices.Compact(c.bad)
}

// TestNoInternalTypes: no exported constant, variable, function, method or
// struct field of a public package has a type a program outside the
// module cannot name, and no public package declares an alias of an
// internal type (go doc would show the alias without the type's fields).
// Nor is a type shown that is unexported in its public package, except as
// the parameter of a functional option's func type (an option type such
// as func(*config)).
func TestNoInternalTypes(t *testing.T) {
	root := moduleRoot(t)
	var rels []string
	for _, p := range publicPackages(t, root) {
		if p.path == "." {
			continue // the root package is a doc comment only
		}
		rels = append(rels, p.path)
	}
	for _, b := range checkInternalTypes(t, root, rels) {
		t.Error(b)
	}
}

// declaredNames adds to names every exported name the files declare: top-level
// names, struct fields, interface methods and methods.
func declaredNames(files []*ast.File, names map[string]bool) {
	for _, f := range files {
		declaredIn(f, names)
	}
}

// declaredIn adds to names every exported name declared in node.
func declaredIn(node ast.Node, names map[string]bool) {
	ast.Inspect(node, func(n ast.Node) bool {
		var ids []*ast.Ident
		switch n := n.(type) {
		case *ast.FuncDecl:
			ids = []*ast.Ident{n.Name}
		case *ast.TypeSpec:
			ids = []*ast.Ident{n.Name}
		case *ast.ValueSpec:
			ids = n.Names
		case *ast.Field:
			ids = n.Names
		case *ast.BlockStmt:
			return false
		}
		for _, id := range ids {
			if id.IsExported() {
				names[id.Name] = true
			}
		}
		return true
	})
}

// internalPackages parses the non-test files of every internal package
// whose names a public package could leak (not the repository's own
// tooling), by package name.
func internalPackages(t *testing.T, root string) map[string][]*ast.File {
	t.Helper()
	out := map[string][]*ast.File{}
	dirs, err := filepath.Glob(filepath.Join(root, "internal", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		switch filepath.Base(dir) {
		case "repocheck", "cmd", "hostile":
			continue // tooling and test helpers: no public package imports them
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			out[f.Name.Name] = append(out[f.Name.Name], f)
		}
	}
	if len(out) < 5 {
		t.Fatalf("found only %d internal packages", len(out))
	}
	return out
}

// TestDocsNameNoInternals: a public doc comment (what go doc shows) names
// nothing a reader outside the module cannot look up: no qualified name
// of an internal package (inbox.CheckTrust), and no exported name that
// only internal packages declare (ConfirmTranscript, RemoveInbox). It
// speaks of public names, fields and behaviour instead. The root
// package's map of the packages names internal/ directories on purpose.
func TestDocsNameNoInternals(t *testing.T) {
	root := moduleRoot(t)
	internals := internalPackages(t, root)
	internalNames := map[string]bool{}
	var pkgNames []string
	for name, files := range internals {
		pkgNames = append(pkgNames, regexp.QuoteMeta(name))
		declaredNames(files, internalNames)
	}
	slices.Sort(pkgNames)
	public := publicPackages(t, root)
	publicNames := map[string]bool{}
	for _, p := range public {
		declaredNames(p.files, publicNames)
	}
	qualified := regexp.MustCompile(`\b(?:` + strings.Join(pkgNames, "|") + `)\.[A-Z]\w*`)
	word := regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*[a-z][A-Z][A-Za-z0-9]*\b`) // a Go-style compound name: CheckTrust, not Linux
	for _, p := range public {
		if p.path == "." {
			continue
		}
		for _, f := range p.files {
			for _, cg := range docComments(f) {
				text := cg.Text()
				pos := p.fset.Position(cg.Pos())
				where := filepath.Join(p.path, filepath.Base(pos.Filename)) + ":" + strconv.Itoa(pos.Line)
				for _, m := range qualified.FindAllString(text, -1) {
					t.Errorf("%s: a doc comment names %s, an internal package's: name the public name or say what it does", where, m)
				}
				for _, loc := range word.FindAllStringIndex(text, -1) {
					m := text[loc[0]:loc[1]]
					if loc[0] > 0 && text[loc[0]-1] == '.' {
						continue // qualified: told above, or a public package's
					}
					if internalNames[m] && !publicNames[m] {
						t.Errorf("%s: a doc comment names %s, which only an internal package declares: name the public name or say what it does", where, m)
					}
				}
			}
		}
	}
}

// TestValuesNameNoInternals: go doc prints an exported constant's or
// variable's value as written, so a public one is not spelled with an
// internal package's name (const X = inbox.X): a value both share is
// declared once, in the public package, and the internal one uses it.
func TestValuesNameNoInternals(t *testing.T) {
	for _, p := range publicPackages(t, moduleRoot(t)) {
		for _, f := range p.files {
			internal := map[string]bool{} // import names of internal packages
			for _, im := range f.Imports {
				ip, _ := strconv.Unquote(im.Path.Value)
				if !isInternalPath(ip) {
					continue
				}
				name := path.Base(ip)
				if im.Name != nil {
					name = im.Name.Name
				}
				internal[name] = true
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
					continue
				}
				for _, sp := range g.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if !n.IsExported() || i >= len(vs.Values) {
							continue
						}
						ast.Inspect(vs.Values[i], func(x ast.Node) bool {
							sel, ok := x.(*ast.SelectorExpr)
							if !ok {
								return true
							}
							if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
								pos := p.fset.Position(sel.Pos())
								t.Errorf("%s:%d: %s.%s's value names %s.%s, which go doc shows; spell it as a literal (and pin it to the internal one in a test)",
									filepath.Join(p.path, filepath.Base(pos.Filename)), pos.Line, p.path, n.Name, id.Name, sel.Sel.Name)
							}
							return true
						})
					}
				}
			}
		}
	}
}
