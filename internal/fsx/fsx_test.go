package fsx_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/oo-family/oo-claude/internal/fsx"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestAppendLineModesAndOffsets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "inbox")
	path := filepath.Join(dir, "x.inbox")
	off1, err := fsx.AppendLine(path, []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	off2, err := fsx.AppendLine(path, []byte("second line"))
	if err != nil {
		t.Fatal(err)
	}
	if off1 != 0 || off2 != 6 {
		t.Errorf("offsets = %d, %d; want 0, 6", off1, off2)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("file mode %o, want 600", m)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("dir mode %o, want 700", m)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "first\nsecond line\n" {
		t.Errorf("content %q", b)
	}
}

func TestAppendConcurrentOffsetsExact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.inbox")
	const workers, each = 16, 100
	offsets := make(map[int64]string)
	lockedOut := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				line := fmt.Sprintf("w%02d-%03d %s", w, i, bytes.Repeat([]byte{'x'}, (w*i)%300))
				off, err := fsx.AppendLine(path, []byte(line))
				for errors.Is(err, fsx.ErrLocked) {
					// Past the bounded lock wait (a loaded machine
					// descheduled a holder): nothing was written, so
					// the caller may append again, as this one does.
					mu.Lock()
					lockedOut++
					mu.Unlock()
					off, err = fsx.AppendLine(path, []byte(line))
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				offsets[off] = line
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if lockedOut > 0 {
		t.Logf("%d appends waited past the lock bound and were made again", lockedOut)
	}
	b, _ := os.ReadFile(path)
	if len(offsets) != workers*each {
		t.Fatalf("%d distinct offsets, want %d", len(offsets), workers*each)
	}
	if n := bytes.Count(b, []byte("\n")); n != workers*each {
		t.Errorf("%d newlines for %d lines: a racing append took a line in progress for a torn one", n, workers*each)
	}
	for off, line := range offsets {
		got := b[off : off+int64(len(line))+1]
		if string(got) != line+"\n" {
			t.Fatalf("at %d: %q, want %q", off, got, line)
		}
	}
}

func TestSymlinksRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep\n"), 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := fsx.AppendLine(link, []byte("evil")); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("AppendLine through symlink: err = %v, want ErrSymlink", err)
	}
	if _, err := fsx.ReadFile(link); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("ReadFile through symlink: err = %v", err)
	}
	if err := fsx.WriteFileAtomic(link, []byte("evil")); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("WriteFileAtomic over symlink: err = %v", err)
	}
	if _, err := fsx.TryLock(link); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("TryLock through symlink: err = %v", err)
	}
	dlink := filepath.Join(dir, "dlink")
	os.Symlink(dir, dlink)
	if err := fsx.MkdirPrivate(dlink); !errors.Is(err, fsx.ErrSymlink) {
		t.Errorf("MkdirPrivate on symlink: err = %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Errorf("target changed: %q", b)
	}
	if _, err := fsx.AppendLine(dir, []byte("x")); err == nil {
		t.Error("append to a directory succeeded")
	}
}

// TestWriteFileAtomic: both atomic writes replace the content (the
// advisory one by an exchange and a removal on Linux), leave the file 0600
// and no temporary file behind, and a descriptor open on the old file
// still reads the old content.
func TestWriteFileAtomic(t *testing.T) {
	for name, write := range map[string]func(string, []byte) error{
		"WriteFileAtomic": fsx.WriteFileAtomic, "WriteAdvisoryAtomic": fsx.WriteAdvisoryAtomic,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			var old *os.File
			for _, s := range []string{"one", "two", "three"} {
				if err := write(path, []byte(s)); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(path); string(b) != s {
					t.Errorf("content %q, want %q", b, s)
				}
				if old == nil {
					f, err := os.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					old = f
				}
			}
			if b, _ := io.ReadAll(old); string(b) != "one" {
				t.Errorf("the old file reads %q, want %q", b, "one")
			}
			if m := mode(t, path); m != 0o600 {
				t.Errorf("mode %o", m)
			}
			ents, _ := os.ReadDir(filepath.Dir(path))
			if len(ents) != 1 {
				t.Errorf("temporary files left: %v", ents)
			}
		})
	}
}

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := fsx.TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsx.TryLock(path); !errors.Is(err, fsx.ErrLocked) {
		t.Errorf("second TryLock: err = %v, want ErrLocked", err)
	}
	l.Unlock()
	l.Unlock()
	l2, err := fsx.TryLock(path)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	l2.Unlock()
}
