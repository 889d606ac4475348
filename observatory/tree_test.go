package observatory_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/observatory"
)

func TestDocumentTree(t *testing.T) {
	t.Parallel()
	s := func(id, parent string) observatory.Session {
		return observatory.Session{Session: id, ParentSession: inboxv1.NullString(parent)}
	}
	tests := []struct {
		name     string
		sessions []observatory.Session
		want     []observatory.TreeNode
	}{
		{"flat", []observatory.Session{s("a", ""), s("b", "")}, []observatory.TreeNode{{0, 0}, {1, 0}}},
		{"child after its parent, whatever the order",
			[]observatory.Session{s("c", "a"), s("a", ""), s("b", ""), s("d", "c")},
			[]observatory.TreeNode{{1, 0}, {0, 1}, {3, 2}, {2, 0}}},
		{"siblings in the document's order",
			[]observatory.Session{s("a", ""), s("x", "a"), s("y", "a"), s("z", "x")},
			[]observatory.TreeNode{{0, 0}, {1, 1}, {3, 2}, {2, 1}}},
		{"parent not running: a root", []observatory.Session{s("a", "gone")}, []observatory.TreeNode{{0, 0}}},
		{"own parent: a root", []observatory.Session{s("a", "a")}, []observatory.TreeNode{{0, 0}}},
		{"cycle shown flat", []observatory.Session{s("a", "b"), s("b", "a"), s("c", "")},
			[]observatory.TreeNode{{2, 0}, {0, 0}, {1, 1}}},
		{"none", nil, []observatory.TreeNode{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := &observatory.Document{Sessions: tt.sessions}
			if diff := cmp.Diff(tt.want, doc.Tree()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
