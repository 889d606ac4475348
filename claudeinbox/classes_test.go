package claudeinbox_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/oo-family/oo-claude/claudeinbox"
)

// classConsts returns the values of the constants of type Class that file
// declares, in order.
func classConsts(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Class" {
				continue
			}
			for _, val := range v.Values {
				if lit, ok := val.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// TestClassesComplete: Classes lists every Class constant once, so the
// help's exit codes (printed from it) cannot miss a class.
func TestClassesComplete(t *testing.T) {
	var got []string
	for _, c := range claudeinbox.Classes() {
		got = append(got, string(c))
	}
	want := classConsts(t, "verdict.go")
	if len(want) < 8 || !slices.Equal(got, want) {
		t.Errorf("Classes() = %v, want every Class constant in order: %v", got, want)
	}
}
