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
	"reflect"
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
// the exported fields of their exported structs, and, through a public
// alias of an internal type (type Heartbeat = inbox.Heartbeat), that
// type's exported fields and methods too.
type internalTypes struct {
	fset *token.FileSet
	// public holds, for each internal type a public alias names, those
	// aliases ("doorman.Heartbeat"): the names a user writes for it.
	public map[*types.TypeName][]string
	walked map[*types.TypeName]bool
	bad    []string
}

// apiCheck is the declaration being walked, for the failure: "doorman.Status.State".
type apiCheck struct {
	ident string
	pos   token.Pos
	// inside: the declaration is an internal type's own, reached through a
	// public alias; there its field types are spelled with internal names
	// and pass when a public alias names them.
	inside bool
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
		aliases := c.public[obj]
		switch {
		case len(aliases) == 0:
			c.fail(at, t, "an internal type no public name stands for; declare a public alias (type X = ...) or a public type")
			return
		case !at.inside:
			c.fail(at, t, "spelled with its internal name; write "+strings.Join(aliases, " or "))
			return
		}
		c.internal(obj, aliases[0])
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
				c.typ(apiCheck{at.ident + "." + m.Name(), m.Pos(), at.inside, false}, m.Type())
			}
		}
	}
}

func (c *internalTypes) fields(at apiCheck, s *types.Struct) {
	for i := range s.NumFields() {
		if f := s.Field(i); f.Exported() {
			c.typ(apiCheck{at.ident + "." + f.Name(), f.Pos(), at.inside, false}, f.Type())
		}
	}
}

// named walks a named type's exported fields (or interface methods) and
// its exported methods, under the name a user knows it by.
func (c *internalTypes) named(obj *types.TypeName, ident string, inside bool) {
	n, ok := types.Unalias(obj.Type()).(*types.Named)
	if !ok {
		return
	}
	_, option := n.Underlying().(*types.Signature)
	c.typ(apiCheck{ident, obj.Pos(), inside, option}, n.Underlying())
	for i := range n.NumMethods() {
		if m := n.Method(i); m.Exported() {
			c.typ(apiCheck{ident + "." + m.Name(), m.Pos(), inside, false}, m.Type())
		}
	}
}

// internal walks an internal type once, through its public alias.
func (c *internalTypes) internal(obj *types.TypeName, alias string) {
	if c.walked[obj] {
		return
	}
	c.walked[obj] = true
	c.named(obj, alias, true)
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
	c := &internalTypes{fset: fset, public: map[*types.TypeName][]string{}, walked: map[*types.TypeName]bool{}}
	for _, p := range pkgs {
		for _, name := range p.Scope().Names() {
			obj, ok := p.Scope().Lookup(name).(*types.TypeName)
			if !ok || !obj.Exported() || !obj.IsAlias() {
				continue
			}
			if n, ok := types.Unalias(obj.Type()).(*types.Named); ok && n.Obj().Pkg() != nil && isInternalPath(n.Obj().Pkg().Path()) {
				c.public[n.Obj()] = append(c.public[n.Obj()], p.Name()+"."+name)
			}
		}
	}
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
					c.named(obj, ident, false)
					continue
				}
				if n, ok := types.Unalias(obj.Type()).(*types.Named); ok && n.Obj().Pkg() != nil && isInternalPath(n.Obj().Pkg().Path()) {
					c.internal(n.Obj(), ident)
				}
			default:
				c.typ(apiCheck{ident, obj.Pos(), false, false}, obj.Type())
			}
		}
	}
	slices.Sort(c.bad)
	return slices.Compact(c.bad)
}

// TestNoInternalTypes: no exported constant, variable, function, method or
// struct field of a public package has a type a program outside the
// module cannot name. An internal type may be shown only under a public
// alias (type Heartbeat = inbox.Heartbeat, its fields listed in the
// alias's doc), and a public declaration spells it with that alias, so
// go doc never prints an internal package's name. Fields of an aliased
// internal type are held to the same rule: each of their types has a
// public name. Nor is a type shown that is unexported in its public
// package, except as the parameter of a functional option's func type
// (an option type such as func(*config)).
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

// typeMembers are the exported fields and methods of the type name the
// files declare.
func typeMembers(files []*ast.File, name string) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && recvType(d) == name && d.Name.IsExported() {
					out[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok && ts.Name.Name == name {
						declaredIn(ts.Type, out)
					}
				}
			}
		}
	}
	return out
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
		// A public alias of an internal type (type Heartbeat =
		// inbox.Heartbeat) makes that type's fields and methods public.
		for _, sp := range genSpecs(p.files, token.TYPE) {
			ts := sp.(*ast.TypeSpec)
			sel, ok := ts.Type.(*ast.SelectorExpr)
			if !ts.Assign.IsValid() || !ok {
				continue
			}
			if x, ok := sel.X.(*ast.Ident); ok {
				for n := range typeMembers(internals[x.Name], sel.Sel.Name) {
					publicNames[n] = true
				}
			}
		}
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

// TestAliasDocsListTheFields: go doc shows a public alias of an internal
// struct (type Heartbeat = inbox.Heartbeat) without the struct's fields,
// so the alias's doc comment lists every field with its JSON key, one
// per line ("Name  Type  key: meaning"), and this holds the list to the
// struct so it cannot drift.
func TestAliasDocsListTheFields(t *testing.T) {
	root := moduleRoot(t)
	internals := internalPackages(t, root)
	checked := 0
	for _, p := range publicPackages(t, root) {
		for g, sp := range genSpecs(p.files, token.TYPE) {
			ts := sp.(*ast.TypeSpec)
			sel, ok := ts.Type.(*ast.SelectorExpr)
			if !ts.Assign.IsValid() || !ok || !ts.Name.IsExported() {
				continue
			}
			x, _ := sel.X.(*ast.Ident)
			if x == nil || internals[x.Name] == nil {
				continue
			}
			doc := ts.Doc.Text()
			if len(g.Specs) == 1 {
				doc = g.Doc.Text() + doc
			}
			for _, fl := range jsonFields(internals[x.Name], sel.Sel.Name) {
				checked++
				if !listsField(doc, fl[0], fl[1]) {
					t.Errorf("%s.%s (= %s.%s): its doc comment does not list field %s (json %q)", p.path, ts.Name.Name, x.Name, sel.Sel.Name, fl[0], fl[1])
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked only %d fields of aliased structs", checked)
	}
}

// jsonFields are the exported fields of the struct type name the files
// declare that carry a JSON key, as {name, key}.
func jsonFields(files []*ast.File, name string) [][2]string {
	var out [][2]string
	for _, sp := range genSpecs(files, token.TYPE) {
		ts := sp.(*ast.TypeSpec)
		st, ok := ts.Type.(*ast.StructType)
		if ts.Name.Name != name || !ok {
			continue
		}
		for _, fl := range st.Fields.List {
			if fl.Tag == nil {
				continue
			}
			tag, _ := strconv.Unquote(fl.Tag.Value)
			key, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			for _, id := range fl.Names {
				if id.IsExported() && key != "" && key != "-" {
					out = append(out, [2]string{id.Name, key})
				}
			}
		}
	}
	return out
}

// listsField reports whether doc has a line "name  type  key[:] ...".
func listsField(doc, name, key string) bool {
	for _, line := range strings.Split(doc, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 3 && fields[0] == name && strings.TrimSuffix(fields[2], ":") == key {
			return true
		}
	}
	return false
}

// TestValuesNameNoInternals: go doc prints an exported constant's or
// variable's value as written, so a public one is not spelled with an
// internal package's name (PriorityNow = inbox.PriorityNow): it is a
// literal, and a test beside it pins it to the internal one where both
// must agree.
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
