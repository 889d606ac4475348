package fsx_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// TestStatEntry: a regular file's Sig is what its stat says, and changes
// with its content and its times; a symlink, a FIFO, a directory, a file
// others can write and one past the bound are refused without an open.
func TestStatEntry(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "row"), []byte("content"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "big"), make([]byte, 2048), 0o600))
	must(os.WriteFile(filepath.Join(dir, "open"), []byte("x"), 0o600))
	must(os.Chmod(filepath.Join(dir, "open"), 0o606))
	must(os.Symlink(filepath.Join(dir, "row"), filepath.Join(dir, "link")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	d, err := fsx.OpenDir(dir)
	must(err)
	defer d.Close()
	for name, want := range map[string]error{
		"link": fsx.ErrSymlink, "fifo": fsx.ErrNotRegular, "sub": fsx.ErrNotRegular,
		"open": fsx.ErrUntrusted, "big": fsx.ErrTooLarge, "missing": os.ErrNotExist,
	} {
		if _, err := d.StatEntry(name, 1024); !errors.Is(err, want) {
			t.Errorf("StatEntry(%s) = %v; want %v", name, err, want)
		}
	}
	sig, err := d.StatEntry("row", 1024)
	must(err)
	fi, err := os.Stat(filepath.Join(dir, "row"))
	must(err)
	st := fi.Sys().(*syscall.Stat_t)
	if sig.Size != 7 || sig.Ino != uint64(st.Ino) || sig.Mtime != fi.ModTime().UnixNano() || sig.Ctime == 0 {
		t.Fatalf("Sig %+v; want size 7, inode %d, mtime %d", sig, st.Ino, fi.ModTime().UnixNano())
	}
	// The same bytes read under it.
	b, rsig, err := d.AppendNameSig([]byte("x:"), "row", 1024)
	if err != nil || string(b) != "x:content" || rsig != sig {
		t.Fatalf("AppendNameSig = %q, %+v, %v; want x:content under %+v", b, rsig, err, sig)
	}
	if b, _, err := d.AppendNameSig([]byte("x:"), "link", 1024); !errors.Is(err, fsx.ErrSymlink) || string(b) != "x:" {
		t.Errorf("AppendNameSig(link) = %q, %v; want ErrSymlink and the buffer as it was", b, err)
	}
	// Rewritten in place to the same size, with other times: another Sig.
	must(os.WriteFile(filepath.Join(dir, "row"), []byte("CONTENT"), 0o600))
	later := time.Now().Add(time.Minute)
	must(os.Chtimes(filepath.Join(dir, "row"), later, later))
	again, err := d.StatEntry("row", 1024)
	must(err)
	if again == sig || again.Ino != sig.Ino || again.Size != sig.Size {
		t.Fatalf("Sig after a rewrite %+v; before %+v: want the same inode and size, other times", again, sig)
	}
	// The directory's own Sig changes with a name added.
	dsig, err := d.Sig()
	must(err)
	must(os.WriteFile(filepath.Join(dir, "new"), nil, 0o600))
	must(os.Chtimes(dir, later.Add(time.Minute), later.Add(time.Minute)))
	if dsig2, err := d.Sig(); err != nil || dsig2 == dsig {
		t.Fatalf("directory Sig after a name added: %+v, %v; before %+v", dsig2, err, dsig)
	}
	must(d.Close())
	if _, err := d.StatEntry("row", 1024); err == nil {
		t.Error("StatEntry on a closed Dir: no error")
	}
}

// TestNames: every name of a large directory, once, without "." and "..".
func TestNames(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 1500 { // more than one getdents call
		name := fmt.Sprintf("%d.json", 100000+i)
		want = append(want, name)
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d, err := fsx.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, err := d.Names()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("Names: %d names; want %d, the files'", len(got), len(want))
	}
}

// TestSigsHold: a temporary directory on this machine's local file system
// holds (CI's and ours are ext4, tmpfs or overlayfs); /proc does not.
func TestSigsHold(t *testing.T) {
	d, err := fsx.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !d.SigsHold() {
		t.Skip("the temporary directory's file system is not one SigsHold names")
	}
	p, err := fsx.OpenDir("/proc")
	if err != nil {
		t.Skip(err)
	}
	defer p.Close()
	if p.SigsHold() {
		t.Error("/proc: SigsHold says its stats vouch for content")
	}
}

// TestEntryStat: an entry's stat, from fsx's listing or from os.ReadDir's,
// gives its modification time and the Sig StatEntry gives; a file others
// can write, or another user's, and a symlink give the zero Sig; a file
// gone since the listing is an error.
func TestEntryStat(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"ok": 0o600, "open": 0o606} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("ok", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gone"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := fsx.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want, err := d.StatEntry("ok", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := d.ReadDir()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	uid := os.Geteuid()
	for _, list := range [][]os.DirEntry{ents, plain} {
		for _, e := range list {
			mtime, sig, err := fsx.EntryStat(e, uid)
			switch e.Name() {
			case "ok":
				if err != nil || sig != want || !mtime.Equal(fi.ModTime()) {
					t.Errorf("%T ok: %v %+v %v; want %v %+v", e, mtime, sig, err, fi.ModTime(), want)
				}
			case "open", "link":
				if err != nil || sig != (fsx.Sig{}) {
					t.Errorf("%T %s: %+v %v; want the zero Sig", e, e.Name(), sig, err)
				}
			case "gone":
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%T gone: %v; want not exist", e, err)
				}
			}
		}
		i := slices.IndexFunc(list, func(e os.DirEntry) bool { return e.Name() == "ok" })
		if _, sig, err := fsx.EntryStat(list[i], uid+1); err != nil || sig != (fsx.Sig{}) {
			t.Errorf("%T: another uid's file gave %+v, %v", list[i], sig, err)
		}
	}
}
