package fsx_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/hostile"
)

// TestAppendDirEntry: an entry the listing types as regular is read; a
// symlink, a FIFO and a directory are refused by their listed type; a
// regular file replaced by a symlink after the listing is refused by the
// open.
func TestAppendDirEntry(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "row"), []byte("content"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "later"), []byte("was regular"), 0o600))
	must(os.Symlink(filepath.Join(dir, "row"), filepath.Join(dir, "link")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	ents, err := os.ReadDir(dir)
	must(err)
	// Replaced since the listing: the entry still says regular.
	must(os.Remove(filepath.Join(dir, "later")))
	must(os.Symlink(filepath.Join(dir, "row"), filepath.Join(dir, "later")))
	want := map[string]error{"row": nil, "link": fsx.ErrSymlink, "fifo": fsx.ErrNotRegular, "sub": fsx.ErrNotRegular, "later": fsx.ErrSymlink}
	d, err := fsx.OpenDir(dir)
	must(err)
	defer d.Close()
	for _, e := range ents {
		// By path, and relative to the open directory (fsx.Dir): the
		// same checks.
		for how, read := range map[string]func() ([]byte, error){
			"AppendDirEntry":  func() ([]byte, error) { return fsx.AppendDirEntry([]byte("x:"), dir, e, 1<<10) },
			"Dir.AppendEntry": func() ([]byte, error) { return d.AppendEntry([]byte("x:"), e, 1<<10) },
		} {
			b, err := read()
			switch w := want[e.Name()]; {
			case w == nil && (err != nil || string(b) != "x:content"):
				t.Errorf("%s %s: %q %v, want x:content", how, e.Name(), b, err)
			case w != nil && (!errors.Is(err, w) || string(b) != "x:"):
				t.Errorf("%s %s: %q %v, want %v and the buffer as it was", how, e.Name(), b, err, w)
			}
		}
	}
	listed, err := d.Entries()
	if err != nil || len(listed) != len(ents) {
		t.Errorf("Dir.Entries: %d entries, %v; want %d", len(listed), err, len(ents))
	}
}

// TestOpenDirRefusesWhatIsNotADirectory: a FIFO, a regular file or a
// symlink to a FIFO where the directory should be is refused by the open
// at once (a FIFO opened for reading would block until a writer came); a
// missing directory is fs.ErrNotExist.
func TestOpenDirRefusesWhatIsNotADirectory(t *testing.T) {
	dir := t.TempDir()
	fifo, file := filepath.Join(dir, "fifo"), filepath.Join(dir, "file")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]error{"fifo": syscall.ENOTDIR, "file": syscall.ENOTDIR, "link": syscall.ENOTDIR, "missing": os.ErrNotExist} {
		hostile.Call(t, "OpenDir "+name, 30*time.Second, func() {
			d, err := fsx.OpenDir(filepath.Join(dir, name))
			if err == nil {
				d.Close()
			}
			if !errors.Is(err, want) {
				t.Errorf("OpenDir %s: %v, want %v", name, err, want)
			}
		})
	}
}
