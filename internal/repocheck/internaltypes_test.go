package repocheck

import (
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"path"
	"slices"
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
				c.typ(apiCheck{at.ident + "." + m.Name(), m.Pos(), at.inside}, m.Type())
			}
		}
	}
}

func (c *internalTypes) fields(at apiCheck, s *types.Struct) {
	for i := range s.NumFields() {
		if f := s.Field(i); f.Exported() {
			c.typ(apiCheck{at.ident + "." + f.Name(), f.Pos(), at.inside}, f.Type())
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
	c.typ(apiCheck{ident, obj.Pos(), inside}, n.Underlying())
	for i := range n.NumMethods() {
		if m := n.Method(i); m.Exported() {
			c.typ(apiCheck{ident + "." + m.Name(), m.Pos(), inside}, m.Type())
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
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil).(types.ImporterFrom)
	var pkgs []*types.Package
	for _, rel := range rels {
		p, err := imp.ImportFrom(path.Join(modulePath, rel), root, 0)
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
				c.typ(apiCheck{ident, obj.Pos(), false}, obj.Type())
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
// public name.
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
