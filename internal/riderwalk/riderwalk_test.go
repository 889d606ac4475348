package riderwalk

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWalk: riders at the two depths are found in order; deeper ones,
// other names, directories named like riders and symlinks are not.
func TestWalk(t *testing.T) {
	sess := t.TempDir()
	for _, f := range []string{
		"agent-a.jsonl", "workflows/agent-b.jsonl", "workflows/r1/agent-c.jsonl",
		"workflows/r1/deep/agent-too-deep.jsonl", "agent-.jsonl", "agent-x.meta.json", "notes.jsonl",
	} {
		p := filepath.Join(sess, Dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(sess, Dir, "agent-dir.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(sess, Dir, "agent-a.jsonl"), filepath.Join(sess, Dir, "agent-link.jsonl")); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := Walk(sess, func(p string, _ fs.DirEntry) {
		rel, _ := filepath.Rel(filepath.Join(sess, Dir), p)
		got = append(got, rel)
	}, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"agent-a.jsonl", "workflows/agent-b.jsonl", "workflows/r1/agent-c.jsonl"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Walk found (-want +got):\n%s", diff)
	}

	// No subagents directory: no riders, no error.
	if err := Walk(t.TempDir(), func(string, fs.DirEntry) { t.Error("found a rider in an empty session") }, nil); err != nil {
		t.Errorf("Walk without %s: %v", Dir, err)
	}
}
