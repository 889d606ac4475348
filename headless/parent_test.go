package headless_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/lineage"
)

// StartRequest.Parent is the lineage parent: it wins over the calling
// session (CLAUDE_CODE_SESSION_ID here), is registered once claude runs,
// and a parent that is not a session id, is the new session, or comes
// with NoLineage is refused before anything runs.
func TestStartRequestParent(t *testing.T) {
	r, fs, fk := newRunner(t)
	env := append(r.Environ(), "CLAUDE_CODE_SESSION_ID="+uuid.NewString())
	r.Environ = func() []string { return env }
	parent, child := uuid.NewString(), uuid.NewString()
	res, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: child, Self: self, Parent: parent})
	if err != nil || res.Class != headless.Completed {
		t.Fatalf("start: %s %v", res.Class, err)
	}
	l := res.File.Lineage
	if l.ParentSession == nil || *l.ParentSession != parent || l.FoundBy == nil || *l.FoundBy != "request" || !l.Registered {
		t.Errorf("lineage block %+v, want parent %s found by request, registered", l, parent)
	}
	row, ok, err := (&lineage.Ledger{Path: fs.Paths.LineageFile()}).Parent(context.Background(), child)
	if err != nil || !ok || row.ParentSession == nil || *row.ParentSession != parent || row.By != lineage.ByParent {
		t.Errorf("ledger: %+v %v %v, want %s <- %s by parent", row, ok, err, child, parent)
	}
	for _, req := range []headless.StartRequest{
		{Parent: "not-a-session"},
		{Parent: parent, NoLineage: true},
		{Parent: child, SessionID: child},
	} {
		req.Prompt, req.CWD, req.Self = "go", t.TempDir(), self
		if _, err := r.Start(context.Background(), req); !errors.Is(err, headless.ReasonBadParent) {
			t.Errorf("parent %q (no lineage %v): %v, want bad-parent", req.Parent, req.NoLineage, err)
		}
	}
	if n := len(fk.Calls("claude")); n != 1 {
		t.Errorf("claude ran %d times, want once", n)
	}
}
