package riderwalk

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/internal/fsx"
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

// TestWalkRiders: each rider comes with its meta file's entry when its
// directory's listing holds one (of any type, for the reader to refuse),
// and none when it does not; the riders are Walk's.
func TestWalkRiders(t *testing.T) {
	sess := t.TempDir()
	for _, f := range []string{
		"agent-a.jsonl", "agent-a.meta.json", "agent-b.jsonl", "agent-c.meta.json",
		"workflows/r1/agent-c.jsonl", "workflows/r1/agent-c.meta.json",
	} {
		p := filepath.Join(sess, Dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("agent-a.meta.json", filepath.Join(sess, Dir, "agent-d.meta.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sess, Dir, "agent-d.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := WalkRiders(sess, func(r Rider) {
		rel, _ := filepath.Rel(filepath.Join(sess, Dir), r.Path())
		meta := "-"
		if r.Meta != nil {
			meta = r.Meta.Name()
			if r.Meta.Type()&fs.ModeSymlink != 0 {
				meta += " (symlink)"
			}
		}
		got = append(got, rel+" "+meta)
	}, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"agent-a.jsonl agent-a.meta.json", "agent-b.jsonl -", "agent-d.jsonl agent-d.meta.json (symlink)",
		"workflows/r1/agent-c.jsonl agent-c.meta.json",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WalkRiders found (-want +got):\n%s", diff)
	}
}

// TestWalkRootKinds: a subagents directory that is a symlink or a file
// has no riders and no error, as filepath.WalkDir has it; one that cannot
// be listed is the walk's error.
func TestWalkRootKinds(t *testing.T) {
	real := t.TempDir()
	if err := os.MkdirAll(filepath.Join(real, Dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, Dir, "agent-a.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := t.TempDir()
	if err := os.Symlink(filepath.Join(real, Dir), filepath.Join(link, Dir)); err != nil {
		t.Fatal(err)
	}
	file := t.TempDir()
	if err := os.WriteFile(filepath.Join(file, Dir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, sess := range map[string]string{"symlink": link, "file": file} {
		if err := Walk(sess, func(p string, _ fs.DirEntry) { t.Errorf("%s: found %s", name, p) }, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := Walk(filepath.Join(file, Dir), func(string, fs.DirEntry) {}, nil); err == nil {
		t.Error("a session directory that is a file: no error")
	}
}

// TestWalkRidersOpenRelative: found runs while the rider's directory is
// open, and the rider's entries are stat'ed and opened relative to it:
// with the session directory renamed away during the walk, the rider is
// still stat'ed and read (and its meta file) by name. Before, each was
// reached by its whole path again.
func TestWalkRidersOpenRelative(t *testing.T) {
	root := t.TempDir()
	session := filepath.Join(root, "session")
	sub := filepath.Join(session, Dir)
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"agent-a.jsonl": "{}\n", "agent-a.meta.json": `{"agentType":"x"}`} {
		if err := os.WriteFile(filepath.Join(sub, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	err := WalkRiders(session, func(r Rider) {
		n++
		if err := os.Rename(session, filepath.Join(root, "moved")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Transcript.Info(); err != nil {
			t.Errorf("Info: %v", err)
		}
		f, _, err := fsx.OpenDirEntryReadAt(r.Dir, r.Transcript)
		if err != nil {
			t.Fatalf("open the transcript: %v", err)
		}
		f.Close()
		if b, err := fsx.AppendDirEntry(nil, r.Dir, r.Meta, 1<<10); err != nil || string(b) != `{"agentType":"x"}` {
			t.Errorf("meta: %q, %v", b, err)
		}
	}, func(err error) { t.Error(err) })
	if err != nil || n != 1 {
		t.Fatalf("walk: %d riders, %v", n, err)
	}
}
