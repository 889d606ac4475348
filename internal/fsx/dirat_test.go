package fsx_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/hostile"
)

// TestDirReadDirRelative: the entries of Dir.ReadDir, sorted by name, are
// stat'ed and opened relative to their open directory: with the
// directory renamed away under the same descriptor, Info (as os.Lstat
// gives it), AppendDirEntry and OpenDirEntryReadAt still reach the files
// by their names; after Close they go by the path, which is gone. Before,
// every one of them resolved the whole path again.
func TestDirReadDirRelative(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"b", "a", "c"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("content "+n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.Lstat(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := fsx.OpenDirNoFollow(dir)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := d.ReadDir()
	if err != nil || len(ents) != 3 || ents[0].Name() != "a" || ents[2].Name() != "c" {
		t.Fatalf("ReadDir: %v, %v", ents, err)
	}
	if err := os.Rename(dir, filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	fi, err := ents[0].Info()
	if err != nil {
		t.Fatalf("Info relative to the open directory: %v", err)
	}
	if fi.Name() != "a" || fi.Size() != want.Size() || fi.Mode() != want.Mode() || !fi.ModTime().Equal(want.ModTime()) ||
		fi.IsDir() || fsx.Inode(fi) != fsx.Inode(want) {
		t.Errorf("Info %v %v %v %v, os.Lstat %v %v %v %v", fi.Name(), fi.Size(), fi.Mode(), fi.ModTime(), want.Name(), want.Size(), want.Mode(), want.ModTime())
	}
	if b, err := fsx.AppendDirEntry(nil, dir, ents[1], 100); err != nil || string(b) != "content b" {
		t.Errorf("AppendDirEntry relative: %q, %v", b, err)
	}
	f, rfi, err := fsx.OpenDirEntryReadAt(dir, ents[2])
	if err != nil {
		t.Fatalf("OpenDirEntryReadAt relative: %v", err)
	}
	buf := make([]byte, rfi.Size())
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "content c" {
		t.Errorf("ReadAt: %q, %v", buf, err)
	}
	f.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fsx.AppendDirEntry(nil, dir, ents[1], 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("AppendDirEntry after Close: %v, want the path's ErrNotExist", err)
	}
	if _, err := ents[0].Info(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Info after Close: %v, want the path's ErrNotExist", err)
	}
}

// TestOpenDirNoFollow: a symlink to a directory, a FIFO, a file and a
// socket in the directory's place are refused at the open, which never
// blocks; so is each in a subdirectory's place (Dir.OpenDir).
func TestOpenDirNoFollow(t *testing.T) {
	dir := t.TempDir()
	parent, err := fsx.OpenDirNoFollow(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()
	for _, k := range []hostile.Kind{hostile.Symlink, hostile.FIFO, hostile.Socket, hostile.WorldWritable} {
		name := "in-place-" + string(k)
		path := filepath.Join(dir, name)
		if err := hostile.Plant(path, k, []byte("x"), t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if d, err := fsx.OpenDirNoFollow(path); err == nil {
			d.Close()
			t.Errorf("%s: opened as a directory", k)
		} else if !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("%s: %v, want ELOOP or ENOTDIR", k, err)
		}
		if d, err := parent.OpenDir(name); err == nil {
			d.Close()
			t.Errorf("%s: opened as a subdirectory", k)
		}
	}
}
