package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestOneWakerOneLockLoop: internal/fsx holds the module's one directory
// waker and its one bounded lock loop (issue 19), so no other non-test
// file makes an fsnotify watcher or calls flock(2) inside a loop. The
// end-to-end suite and the hostile-file suite, which watch and lock as an
// outsider would, are left out.
func TestOneWakerOneLockLoop(t *testing.T) {
	root := moduleRoot(t)
	var bad []string
	fset := token.NewFileSet()
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" ||
				rel == "internal/fsx" || rel == "e2e" || rel == "internal/hostile") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Error(err)
			return nil
		}
		bad = append(bad, wakerAndLockFindings(fset, rel, f)...)
		return nil
	})
	for _, b := range bad {
		t.Error(b)
	}
}

// wakerAndLockFindings returns, for one parsed file, each call that
// makes an fsnotify watcher and each flock call inside a for statement.
func wakerAndLockFindings(fset *token.FileSet, rel string, f *ast.File) []string {
	var out []string
	var loops []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			loops = loops[:len(loops)-1]
			return true
		}
		loops = append(loops, n)
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, _ := sel.X.(*ast.Ident)
		at := rel + ":" + strconv.Itoa(fset.Position(call.Pos()).Line)
		switch {
		case pkg != nil && pkg.Name == "fsnotify" && strings.HasPrefix(sel.Sel.Name, "New"):
			out = append(out, at+": fsnotify."+sel.Sel.Name+": wait through internal/fsx's waker (fsx.NewWaker, fsx.DirWatch)")
		case sel.Sel.Name == "Flock" && inLoop(loops):
			out = append(out, at+": flock in a loop: use internal/fsx's one lock loop (fsx.FlockUntil, fsx.LockContext)")
		}
		return true
	})
	return out
}

// inLoop reports whether a node on the stack is a for or range statement.
func inLoop(stack []ast.Node) bool {
	return slices.ContainsFunc(stack, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			return true
		}
		return false
	})
}

// TestWakerAndLockFindings: the rule finds a watcher and a flock in a
// loop, and passes a single try.
func TestWakerAndLockFindings(t *testing.T) {
	src := `package p
func a() { w, _ := fsnotify.NewWatcher(); _ = w }
func b() { for { unix.Flock(0, 0) } }
func c() { unix.Flock(0, 0) }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := wakerAndLockFindings(fset, "p.go", f)
	if len(got) != 2 || !strings.Contains(got[0], "p.go:2: fsnotify.NewWatcher") || !strings.Contains(got[1], "p.go:3: flock in a loop") {
		t.Errorf("findings = %q, want the watcher at line 2 and the loop at line 3", got)
	}
}
