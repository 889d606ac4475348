package headless_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/oo-family/oo-claude/headless"
)

// TestClassesComplete: ResumeClasses and StartClasses together list every
// Class constant but Lost (a result file's state, no verdict), so the
// help's exit codes (printed from them) cannot miss a class.
func TestClassesComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "runner.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Class" {
					for _, val := range v.Values {
						if lit, ok := val.(*ast.BasicLit); ok {
							c, _ := strconv.Unquote(lit.Value)
							want = append(want, c)
						}
					}
				}
			}
		}
	}
	var got []string
	for _, c := range append(headless.ResumeClasses(), headless.StartClasses()...) {
		if !slices.Contains(got, string(c)) {
			got = append(got, string(c))
		}
	}
	got = append(got, string(headless.Lost))
	slices.Sort(got)
	slices.Sort(want)
	if len(want) < 8 || !slices.Equal(got, want) {
		t.Errorf("ResumeClasses and StartClasses (and Lost) = %v, want every Class constant: %v", got, want)
	}
	if slices.Contains(headless.StartClasses(), headless.Lost) {
		t.Error("StartClasses lists Lost, which is no start's verdict")
	}
}
