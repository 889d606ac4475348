package fsx

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAppendClosesOnce: each of the small-file readers closes the
// descriptor it opened once, whether the read succeeds or is refused after
// the open (too large, not regular). Before, a read closed it twice: the
// second close, between which and the first another goroutine could open
// a file under the same number, closed that file instead (the sessions
// document's parallel readers lost riders to "bad file descriptor").
func TestAppendClosesOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "row"), []byte("content"), 0o600); err != nil {
		t.Fatal(err)
	}
	closes := map[int]int{}
	closeFD = func(fd int) error { closes[fd]++; return unix.Close(fd) }
	t.Cleanup(func() { closeFD = unix.Close })
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	path := filepath.Join(dir, "row")
	for _, c := range []struct {
		what string
		read func() ([]byte, error)
		ok   bool
	}{
		{"AppendFile", func() ([]byte, error) { return AppendFile(nil, path, 100) }, true},
		{"AppendFile too large", func() ([]byte, error) { return AppendFile(nil, path, 3) }, false},
		{"AppendDirEntry", func() ([]byte, error) { return AppendDirEntry(nil, dir, ents[0], 100) }, true},
		{"Dir.AppendEntry", func() ([]byte, error) { return d.AppendEntry(nil, ents[0], 100) }, true},
		{"Dir.AppendEntry too large", func() ([]byte, error) { return d.AppendEntry(nil, ents[0], 3) }, false},
	} {
		clear(closes)
		b, err := c.read()
		if (err == nil) != c.ok || c.ok && string(b) != "content" {
			t.Fatalf("%s: %q, %v", c.what, b, err)
		}
		if len(closes) != 1 {
			t.Fatalf("%s: closes by descriptor %v, want one descriptor", c.what, closes)
		}
		for fd, n := range closes {
			if n != 1 {
				t.Errorf("%s: descriptor %d closed %d times, want once", c.what, fd, n)
			}
		}
	}
}
