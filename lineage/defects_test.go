package lineage_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/lineage"
)

// A Register waits for a held ledger lock at most LockWait, and says who
// holds it.
func TestRegisterLockWaitIsBoundedAndNamesTheHolder(t *testing.T) {
	l := &lineage.Ledger{Path: filepath.Join(t.TempDir(), "lineage.jsonl"), LockWait: 200 * time.Millisecond}
	held, err := fsx.TryLock(l.Path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := l.Register(context.Background(), lineage.Link{Child: child, Parent: p1})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, lineage.ErrLockHeld) || !strings.Contains(err.Error(), "pid ") {
			t.Errorf("err %v, want ErrLockHeld naming the holder's pid", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Register waited without a bound for a held lock")
	}
}

// The self-parent check ignores case: DDDD… is dddd….
func TestRegisterRefusesSelfParentInAnyCase(t *testing.T) {
	l := &lineage.Ledger{Path: filepath.Join(t.TempDir(), "lineage.jsonl")}
	const lower = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
	_, err := l.Register(context.Background(), lineage.Link{Child: lower, Parent: strings.ToUpper(lower)})
	if !errors.Is(err, lineage.ErrSelfChild) {
		t.Errorf("err %v, want ErrSelfChild", err)
	}
}

// Rows whose ids are not session ids (or host ids) are not links.
func TestLinksSkipRowsWithoutSessionIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lineage.jsonl")
	good := `{"ts":"t","child_session":"` + child + `","parent_session":"` + p1 + `","by":"parent"}`
	bad := []string{
		`{"ts":"t","child_session":"not-a-session","parent_session":"` + p1 + `","by":"parent"}`,
		`{"ts":"t","child_session":"` + p2 + `","parent_session":"../../etc","by":"parent"}`,
		`{"ts":"t","child_session":"` + p2 + `","parent_host":"\u001b[31mred","by":"parent"}`,
		`{"ts":"t","child_session":"` + p2 + `","by":"parent"}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(append(bad, good), "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := (&lineage.Ledger{Path: path}).Links(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []lineage.Row{{TS: "t", ChildSession: child, ParentSession: s(p1), By: lineage.ByParent}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// A line longer than maxRowBytes (64 KiB) (no newline for megabytes) is skipped
// while streaming, and the rows after it are read.
func TestLinksStreamPastAHugeLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lineage.jsonl")
	good := `{"ts":"t","child_session":"` + child + `","parent_session":"` + p1 + `","by":"parent"}`
	content := `{"title":"` + strings.Repeat("x", 8<<20) + "\"}\n" + good + "\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := (&lineage.Ledger{Path: path}).Links(context.Background())
	if err != nil || len(got) != 1 || got[0].ChildSession != child {
		t.Errorf("links %v (%v), want the one row after the huge line", got, err)
	}
}

// A Ledger without a Path refuses to register, and writes nothing: no lock
// file and no line in the working directory.
func TestRegisterWithoutPathWritesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := (&lineage.Ledger{}).Register(context.Background(), lineage.Link{Child: child, Parent: p1})
	var le *fs.PathError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want an *fs.PathError", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Register without a path wrote %v", ents)
	}
}
