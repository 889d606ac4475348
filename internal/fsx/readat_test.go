package fsx_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// openEntry opens path with OpenDirEntryReadAt, from its directory's
// listing.
func openEntry(path string) (*fsx.ReadAtFile, fs.FileInfo, error) {
	dir := filepath.Dir(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		if e.Name() == filepath.Base(path) {
			return fsx.OpenDirEntryReadAt(dir, e)
		}
	}
	return nil, nil, fs.ErrNotExist
}

func closeReadAt(f *fsx.ReadAtFile) {
	if f != nil {
		f.Close()
	}
}

// TestReadAtFile: both opens read a regular file at offsets as os.File's
// ReadAt does (io.EOF at the end), give the open's fstat, refuse a symlink
// and a missing file, and close once.
func TestReadAtFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("hello, world\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(string) (*fsx.ReadAtFile, fs.FileInfo, error){
		"OpenReadAt": fsx.OpenReadAt, "OpenDirEntryReadAt": openEntry,
	} {
		t.Run(name, func(t *testing.T) {
			f, fi, err := open(path)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.Stat(path)
			if fi.Size() != 13 || !fi.ModTime().Equal(want.ModTime()) || !fi.Mode().IsRegular() || fi.Name() != "f" {
				t.Errorf("FileInfo: size %d, mtime %v (want %v), mode %v, name %q", fi.Size(), fi.ModTime(), want.ModTime(), fi.Mode(), fi.Name())
			}
			buf := make([]byte, 5)
			if n, err := f.ReadAt(buf, 7); n != 5 || err != nil || string(buf) != "world" {
				t.Errorf("ReadAt(7) = %d %q, %v", n, buf[:n], err)
			}
			if n, err := f.ReadAt(buf, 10); n != 3 || !errors.Is(err, io.EOF) || string(buf[:n]) != "ld\n" {
				t.Errorf("ReadAt(10) = %d %q, %v; want 3, io.EOF", n, buf[:n], err)
			}
			if _, err := f.ReadAt(buf, -1); err == nil {
				t.Error("ReadAt(-1): no error")
			}
			if err := f.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := f.Close(); !errors.Is(err, os.ErrClosed) {
				t.Errorf("second Close: %v, want os.ErrClosed", err)
			}
			if _, err := f.ReadAt(buf, 0); !errors.Is(err, os.ErrClosed) {
				t.Errorf("ReadAt after Close: %v, want os.ErrClosed", err)
			}
			if _, _, err := open(filepath.Join(dir, "link")); !errors.Is(err, fsx.ErrSymlink) {
				t.Errorf("open of a symlink: %v, want ErrSymlink", err)
			}
			if _, _, err := open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("open of a missing file: %v, want fs.ErrNotExist", err)
			}
		})
	}
}
