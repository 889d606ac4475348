package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest function (its declaration line to its
// closing brace) the delivery packages may hold (issue 19: named steps).
const maxFuncLines = 80

// funcLenPackages are the packages the bound holds for.
var funcLenPackages = []string{"claudeinbox", "doorman", "headless"}

// funcLenAllowed lists the functions over the bound today, with their
// length, while their owners cut them into named steps. It only shrinks:
// an entry for a function that is no longer over the bound, or that grew,
// fails the test, so remove the entry when the function is cut.
var funcLenAllowed = map[string]int{}

// TestFuncLen: no function in claudeinbox, doorman or headless is longer
// than maxFuncLines lines, but those funcLenAllowed lists (not longer
// than listed there).
func TestFuncLen(t *testing.T) {
	root := moduleRoot(t)
	seen := map[string]int{}
	for _, pkg := range funcLenPackages {
		for name, n := range funcLens(t, filepath.Join(root, pkg), pkg) {
			if n > maxFuncLines {
				seen[name] = n
			}
		}
	}
	for name, n := range seen {
		allowed, ok := funcLenAllowed[name]
		switch {
		case !ok:
			t.Errorf("%s is %d lines, over %d: cut it into named steps", name, n, maxFuncLines)
		case n > allowed:
			t.Errorf("%s grew to %d lines (allowed %d while it is cut, over %d): cut it into named steps", name, n, allowed, maxFuncLines)
		}
	}
	for name, allowed := range funcLenAllowed {
		if n, ok := seen[name]; !ok || n < allowed {
			t.Errorf("funcLenAllowed lists %s at %d lines; it is %d now: lower or remove the entry (the list only shrinks)", name, allowed, n)
		}
	}
}

// funcLens returns the length in lines of every function declared in the
// package's non-test files in dir, by funcName.
func funcLens(t *testing.T, dir, pkg string) map[string]int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]int{}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			out[funcName(pkg, fd)] = fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		}
	}
	return out
}
