package observatory_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/observatory"
)

// Inbox and Doorman alias internal types, whose field docs go doc does not
// show from here: schema.go lists the fields in their doc comments. Every
// field, with its JSON key, must be listed, so the list cannot drift.
func TestAliasDocsListEveryField(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "schema.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE && g.Doc != nil {
			for _, sp := range g.Specs {
				docs[sp.(*ast.TypeSpec).Name.Name] = g.Doc.Text()
			}
		}
	}
	for name, v := range map[string]any{"Inbox": observatory.Inbox{}, "Doorman": observatory.Doorman{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			fl := typ.Field(i)
			key, _, _ := strings.Cut(fl.Tag.Get("json"), ",")
			found := false
			for _, line := range strings.Split(docs[name], "\n") {
				fields := strings.Fields(line)
				if len(fields) >= 3 && fields[0] == fl.Name && strings.TrimSuffix(fields[2], ":") == key {
					found = true
				}
			}
			if !found {
				t.Errorf("%s's doc comment in schema.go does not list field %s (json %q)", name, fl.Name, key)
			}
		}
	}
}

// TestPendingSourcesAreTheInboxReaders: the PendingSource constants are
// spelled as literals here (go doc shows no internal name) and are the
// values the inbox files' one reader (internal/inbox) counts by.
func TestPendingSourcesAreTheInboxReaders(t *testing.T) {
	for _, tt := range []struct{ public, internal observatory.PendingSource }{
		{observatory.PendingFromOffset, inbox.PendingFromOffset},
		{observatory.PendingFromAcks, inbox.PendingFromAcks},
		{observatory.PendingNoInbox, inbox.PendingNoInbox},
	} {
		if tt.public != tt.internal {
			t.Errorf("observatory says %q where internal/inbox says %q", tt.public, tt.internal)
		}
	}
}
