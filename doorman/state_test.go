package doorman_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/doorman"
)

// stateConsts reads the State constants a file declares, name → value.
func stateConsts(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "State" {
				continue
			}
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s: %s is not a literal", path, n.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				out[n.Name] = v
			}
		}
	}
	return out
}

// TestStatesAreTheHeartbeats: the doorman's State constants are the
// heartbeat's states of the inbox files' one writer (internal/inbox),
// name for name and value for value, plus StateStarting, which only
// Status reports: the public vocabulary cannot drift from what is written.
func TestStatesAreTheHeartbeats(t *testing.T) {
	pub := stateConsts(t, "state.go")
	if pub["StateStarting"] != "starting" {
		t.Errorf("StateStarting = %q, want starting", pub["StateStarting"])
	}
	delete(pub, "StateStarting")
	internal := stateConsts(t, "../internal/inbox/heartbeat.go")
	if len(internal) < 10 {
		t.Fatalf("found only %d states in internal/inbox", len(internal))
	}
	if diff := cmp.Diff(internal, pub); diff != "" {
		t.Errorf("doorman's states differ from internal/inbox's (-internal +doorman):\n%s", diff)
	}
	if doorman.StateFollowing != "following" || doorman.StateNotDescendant != "not-descendant" {
		t.Error("the constants do not hold the values state.go spells")
	}
}
