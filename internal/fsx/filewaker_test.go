package fsx_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// fileWaker is a NewFileWaker on path that watches (it skips where the
// platform has no inotify: there NewFileWaker is NewWaker).
func fileWaker(t *testing.T, paths ...string) *fsx.Waker {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("a file watch is inotify's")
	}
	k := fsx.NewFileWaker(time.Hour, paths...)
	t.Cleanup(k.Close)
	if k.Polling() {
		t.Fatal("Polling with inotify available")
	}
	return k
}

// TestFileWakerIgnoresNeighbours: files replaced and appended to beside
// the watched one (a heartbeat written atomically, an ack file) do not wake
// the waker's goroutine at all; an append to the file does. A directory
// watch (NewWaker) wakes its goroutine for each of the neighbours' events.
func TestFileWakerIgnoresNeighbours(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.inbox")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	k := fileWaker(t, path)
	dirWaker := fsx.NewWaker(time.Hour, path)
	defer dirWaker.Close()
	const writes = 20
	for i := range writes {
		if err := fsx.WriteAdvisoryAtomic(filepath.Join(dir, "s.inbox.doorman.json"), []byte(`{"n":`+string(rune('0'+i%10))+`}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := fsx.AppendLine(filepath.Join(dir, "s.inbox.ack"), []byte("ack")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fsx.AppendLine(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the append")
	woken(t, dirWaker, "the append (directory watch)")
	// Each append is at least one event, read at most once per event; the
	// neighbours' 20 replacements and 20 appends are none.
	if n := k.Woken(); n > 3 {
		t.Errorf("the file watch's goroutine woke %d times for one append among %d neighbour writes, want at most 3", n, 2*writes)
	}
	if n := dirWaker.Woken(); n < writes {
		t.Errorf("the directory watch's goroutine woke %d times, want at least %d (the neighbours' events): the comparison measures nothing", n, writes)
	}
}

// TestFileWakerTruncated: a truncation is a wake-up.
func TestFileWakerTruncated(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.inbox")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k := fileWaker(t, path)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the truncation")
}

// TestFileWakerReplaced: a file renamed over the watched one wakes C, and
// from then on the new file is the one watched: an append to it wakes C.
// The old file is held open, so its replacement is its only event.
func TestFileWakerReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.inbox")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	k := fileWaker(t, path)
	repl := filepath.Join(dir, ".s.inbox.new")
	if err := os.WriteFile(repl, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(repl, path); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the replacement")
	if _, err := fsx.AppendLine(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "an append to the new file")
}

// TestFileWakerRemovedThenCreated: a file absent at the start is waited
// for through its directory; created, it wakes C and is watched itself: an
// append wakes C. Removed, it wakes C, and its creation again wakes C.
// Each step is one event (a creation without a write; an append; a
// removal while a descriptor holds the inode), so each wake-up waited for
// is that step's.
func TestFileWakerRemovedThenCreated(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.inbox")
	k := fileWaker(t, path)
	create := func() *os.File {
		t.Helper()
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	append1 := func(line string) {
		t.Helper()
		if _, err := fsx.AppendLine(path, []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	create()
	woken(t, k, "the creation")
	append1("one")
	woken(t, k, "an append to the created file")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the removal")
	create()
	woken(t, k, "the creation again")
	append1("two")
	woken(t, k, "an append to the file created again")
}

// TestFileWakerTwoFiles: two files of one directory, one absent at the
// start: a change of either wakes C, the absent one once it appears.
func TestFileWakerTwoFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	row, key := filepath.Join(dir, "1.json"), filepath.Join(dir, "1.key")
	if err := os.WriteFile(row, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	k := fileWaker(t, row, key)
	if _, err := fsx.AppendLine(row, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the row written")
	f, err := os.OpenFile(key, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	woken(t, k, "the key created")
	if _, err := fsx.AppendLine(key, []byte("k")); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the key written")
	if _, err := fsx.AppendLine(row, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the row written again")
}

// TestFileWakerDirectoryGone: the directory of an absent file removed
// leaves no inode to watch: C is woken, and the file is waited for as
// NewWaker waits (its directory through its ancestor), not by the
// fallback poll (an hour here): the directory made again and the file
// written in it wake C.
func TestFileWakerDirectoryGone(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "inbox")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.inbox")
	k := fileWaker(t, path)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the directory removed")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the file written in the directory made again")
}
