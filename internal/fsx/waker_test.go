package fsx_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/hostile"
)

// woken waits (generously) for one wake-up of k.
func woken(t *testing.T, k *fsx.Waker, what string) {
	t.Helper()
	select {
	case <-k.C:
	case <-time.After(30 * time.Second):
		t.Fatalf("no wake-up after %s", what)
	}
}

// TestWakerWakesOnItsFile: an append after NewWaker returned wakes C, and
// the waker does not poll when it can watch (a fallback of an hour would
// never tick within the test).
func TestWakerWakesOnItsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.inbox")
	k := fsx.NewWaker(time.Hour, path)
	defer k.Close()
	if k.Polling() {
		t.Fatal("Polling with inotify available")
	}
	if _, err := fsx.AppendLine(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the append")
}

// TestWakerPollsWithoutInotify: when no inotify instance can be had (the
// per-user limit fs.inotify.max_user_instances, 128, shared by every
// process of the user; here the process's descriptor limit, which fails
// inotify_init1 with the same EMFILE) the Waker says it polls and wakes C
// on its fallback period, with no file changed. Not parallel: it lowers
// the process's descriptor limit for a moment.
func TestWakerPollsWithoutInotify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.inbox")
	restore := hostile.NoFreeFD(t)
	k := fsx.NewWaker(20*time.Millisecond, path)
	restore()
	defer k.Close()
	if !k.Polling() {
		t.Fatal("NewWaker set up a file watch with no descriptor free: the test's seam did not work")
	}
	start := time.Now()
	for i := range 3 {
		woken(t, k, fmt.Sprintf("tick %d of the 20 ms fallback poll", i+1))
	}
	t.Logf("three ticks of the 20 ms poll in %v", time.Since(start))
}

// TestWakerMissingDirectory: a file whose directory (and its parent) does
// not exist yet is waited for through the nearest existing ancestor; once
// the directories appear, a file written in them wakes C.
func TestWakerMissingDirectory(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	path := filepath.Join(root, "proj", "sub", "s.jsonl")
	k := fsx.NewWaker(time.Hour, path)
	defer k.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the directories appeared")
	for range 2 { // drain what the mkdir made
		select {
		case <-k.C:
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the file was written in the new directory")
}

// TestWakerDirectoryRecreated: the watched directory removed and made
// again is watched again (the kernel drops a removed directory's watch).
func TestWakerDirectoryRecreated(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "proj")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.jsonl")
	k := fsx.NewWaker(time.Hour, path)
	defer k.Close()
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the directory was removed")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the directory was made again")
	if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	woken(t, k, "the file was written in the new directory")
}

// TestFlockUntil: a lock another description holds is ErrLocked past the
// deadline; once released it is taken.
func TestFlockUntil(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "l.lock")
	held, err := fsx.TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fsx.FlockUntil(f, path, time.Now().Add(20*time.Millisecond)); !errors.Is(err, fsx.ErrLocked) {
		t.Fatalf("FlockUntil on a held lock: %v, want ErrLocked", err)
	}
	held.Unlock()
	if err := fsx.FlockUntil(f, path, time.Now().Add(30*time.Second)); err != nil {
		t.Fatalf("FlockUntil on a free lock: %v", err)
	}
}

// TestWakerDrop: Drop releases the watch without Close's wait (it is not
// counted by WaitedCloses), twice is harmless, and a Close after it
// returns once the descriptor is closed. Not parallel: it counts the
// process's inotify descriptors and its Close calls.
func TestWakerDrop(t *testing.T) {
	for _, tt := range []struct {
		name string
		new  func(time.Duration, ...string) *fsx.Waker
	}{{"NewWaker", fsx.NewWaker}, {"NewFileWaker", fsx.NewFileWaker}} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.ack")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			before, closes := hostile.OpenFDs(t, hostile.InotifyFD), fsx.WaitedCloses()
			k := tt.new(time.Hour, path)
			if k.Polling() {
				t.Skip("no inotify here")
			}
			if got := hostile.OpenFDs(t, hostile.InotifyFD); got != before+1 {
				t.Fatalf("%d inotify descriptors with the Waker, want %d", got, before+1)
			}
			k.Drop()
			k.Drop()
			if got := fsx.WaitedCloses() - closes; got != 0 {
				t.Fatalf("Drop counted %d waited closes, want 0", got)
			}
			k.Close() // waits for the Waker's goroutine, which closed the descriptor
			k.Close()
			if got := hostile.OpenFDs(t, hostile.InotifyFD); got != before {
				t.Errorf("%d inotify descriptors after Drop and Close, want %d", got, before)
			}
			var nilK *fsx.Waker
			nilK.Drop()
		})
	}
}
