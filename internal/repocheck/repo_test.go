package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	return dir
}

// TestPackageDocs: every package has exactly one package doc comment, and it
// starts "Package <name> " (or "Command <name> " for a main package).
func TestPackageDocs(t *testing.T) {
	root := moduleRoot(t)
	dirs := map[string][]string{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if len(dirs) < 5 {
		t.Fatalf("found only %d packages under %s", len(dirs), root)
	}
	for dir, files := range dirs {
		rel, _ := filepath.Rel(root, dir)
		var docs []string
		var name string
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			name = af.Name.Name
			if af.Doc != nil {
				docs = append(docs, af.Doc.Text())
			}
		}
		if len(docs) != 1 {
			t.Errorf("%s: %d package doc comments, want exactly 1", rel, len(docs))
			continue
		}
		want := "Package " + name + " "
		if name == "main" {
			want = "Command " + filepath.Base(dir) + " "
		}
		if !strings.HasPrefix(docs[0], want) {
			t.Errorf("%s: package doc starts %q, want %q", rel, firstLine(docs[0]), want)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestBinaryDeps: the oo-claude binary and its doorman and top programs
// link no test code: neither the testing package nor our fakes; nor
// Bubble Tea v1, Lip Gloss v1 or termenv, whose package init asks the
// terminal of every verb its background colour and waits for the answer
// (up to 5 s) before main. And oo-claude, which every send starts, links
// neither the MCP SDK nor the Charm stack (their packages' init cost each
// start milliseconds; one looks for four clipboard commands on PATH): the
// doorman program links the one, the top program the other. None links
// github.com/google/uuid (internal/ids makes the ids), and oo-claude and
// top not net: that package's v1 node code brings net's init, and with it
// net/netip's, dnsmessage's and four hashes', to every start (the doorman
// program's MCP SDK links net itself).
func TestBinaryDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	const sdk, tea = "github.com/modelcontextprotocol/go-sdk/mcp", "charm.land/bubbletea/v2"
	for _, c := range []struct {
		pkg              string
		withSDK, withTea bool
	}{{"./cli/oo-claude", false, false}, {"./cli/oo-claude-doorman", true, false}, {"./cli/oo-claude-top", false, true}} {
		cmd := exec.Command(goBin, "list", "-deps", c.pkg)
		cmd.Dir = moduleRoot(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", c.pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, dep := range deps {
			if dep == "testing" || strings.Contains(dep, "/fakes") || strings.Contains(dep, "goleak") || strings.Contains(dep, "go-cmp") {
				t.Errorf("%s depends on %s", c.pkg, dep)
			}
			if dep == "github.com/charmbracelet/bubbletea" || dep == "github.com/charmbracelet/lipgloss" || strings.HasPrefix(dep, "github.com/muesli/termenv") {
				t.Errorf("%s depends on %s, whose init queries the terminal before main (charm.land's v2 does not)", c.pkg, dep)
			}
		}
		if slices.Contains(deps, "github.com/google/uuid") {
			t.Errorf("%s links github.com/google/uuid: make ids with internal/ids", c.pkg)
		}
		if got := slices.Contains(deps, "net"); got != c.withSDK {
			t.Errorf("%s links net: %v, want %v (only the MCP SDK's program needs it)", c.pkg, got, c.withSDK)
		}
		if got := slices.Contains(deps, sdk); got != c.withSDK {
			t.Errorf("%s links %s: %v, want %v", c.pkg, sdk, got, c.withSDK)
		}
		if got := slices.Contains(deps, tea); got != c.withTea {
			t.Errorf("%s links %s: %v, want %v", c.pkg, tea, got, c.withTea)
		}
		if got := slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, "charm.land/") }); got != c.withTea {
			t.Errorf("%s links charm.land's packages: %v, want %v", c.pkg, got, c.withTea)
		}
	}
}

// TestStatTimesThroughOneFunction: syscall.Stat_t's time fields are Mtim,
// Atim and Ctim on Linux and Mtimespec, Atimespec and Ctimespec on darwin
// and the BSDs, so a file that names one outside fsx's build-tagged
// mtime files builds for Linux alone (it did once, unseen: no test cross
// builds, a cold cross build taking over a minute). Every other file goes
// through fsx's statMtime.
func TestStatTimesThroughOneFunction(t *testing.T) {
	root := moduleRoot(t)
	field := regexp.MustCompile(`\.(Mtim|Atim|Ctim)(espec)?\b`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("internal", "fsx", "mtime_other.go") || rel == filepath.Join("internal", "fsx", "mtime_bsd.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := field.FindString(line); m != "" && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s:%d names Stat_t's %s: use fsx's statMtime (build-tagged per OS)", rel, i+1, m[1:])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoFmtAtInit: no package-level variable of the module's programs and
// library (tests aside) is made by a call into fmt. A package-level
// fmt.Errorf or fmt.Sprintf runs fmt's printer (its first use: tens of
// microseconds of page faults, measured) at the start of every process
// that links the package, whether or not it is ever used; an error of its
// own type, or errors.New, costs nothing.
func TestNoFmtAtInit(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fmtName := ""
		for _, im := range f.Imports {
			if im.Path.Value == `"fmt"` {
				fmtName = "fmt"
				if im.Name != nil {
					fmtName = im.Name.Name
				}
			}
		}
		if fmtName == "" {
			return nil
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			ast.Inspect(gd, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false // runs when called, not at init
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						break
					}
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == fmtName {
						rel, _ := filepath.Rel(root, path)
						t.Errorf("%s:%d: a package-level variable calls fmt.%s at init: use a type of its own or errors.New", rel, fset.Position(n.Pos()).Line, sel.Sel.Name)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
