package fsx_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/hostile"
)

// TestHostileTypesRefusedAtOnce plants every non-regular kind at a path and
// runs every fsx entry point on it: each is refused with its sentinel within
// the bound, and nothing is written through or over the planted file. Before
// the checked open, a FIFO hung OpenRead, OpenAppend and ReadFile, and
// WriteFileAtomic replaced a FIFO, device node or socket with a regular file.
func TestHostileTypesRefusedAtOnce(t *testing.T) {
	ops := []struct {
		name string
		do   func(path string) error
	}{
		{"OpenRead", func(p string) error { f, err := fsx.OpenRead(p); closeIf(f); return err }},
		{"ReadFile", func(p string) error { _, err := fsx.ReadFile(p); return err }},
		{"OpenAppend", func(p string) error { f, err := fsx.OpenAppend(p); closeIf(f); return err }},
		{"AppendLine", func(p string) error { _, err := fsx.AppendLine(p, []byte("x")); return err }},
		{"WriteFileAtomic", func(p string) error { return fsx.WriteFileAtomic(p, []byte("x")) }},
		{"WriteAdvisoryAtomic", func(p string) error { return fsx.WriteAdvisoryAtomic(p, []byte("x")) }},
		{"TryLock", func(p string) error { l, err := fsx.TryLock(p); l.Unlock(); return err }},
		{"ReadFileTrusted", func(p string) error { _, err := fsx.ReadFileTrusted(p, os.Geteuid()); return err }},
		{"AppendFile", func(p string) error { _, err := fsx.AppendFile(nil, p, 1<<10); return err }},
		{"CheckFileAt", func(p string) error { return fsx.CheckFileAt(p, os.Geteuid()) }},
		{"OpenReadAt", func(p string) error { f, _, err := fsx.OpenReadAt(p); closeReadAt(f); return err }},
		{"OpenDirEntryReadAt", func(p string) error { f, _, err := openEntry(p); closeReadAt(f); return err }},
	}
	for _, k := range hostile.Kinds() {
		for _, op := range ops {
			untrusted := k == hostile.Foreign || k == hostile.WorldWritable
			if untrusted && (op.name == "WriteFileAtomic" || op.name == "WriteAdvisoryAtomic") {
				continue // replacing it is what a state write does: TestWriteFileAtomicReplacesUntrusted
			}
			t.Run(string(k)+"/"+op.name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "f")
				decoy := filepath.Join(t.TempDir(), "decoy")
				if err := hostile.Plant(path, k, []byte("planted\n"), decoy); errors.Is(err, hostile.ErrNeedRoot) {
					t.Skip(err)
				} else if err != nil {
					t.Fatal(err)
				}
				before, _ := os.Lstat(path)
				done := make(chan error, 1)
				go func() { done <- op.do(path) }()
				var err error
				select {
				case err = <-done:
				case <-time.After(30 * time.Second): // milliseconds unless hung; generous for a loaded machine
					// Unblock the hung open so the goroutine ends.
					if k == hostile.FIFO {
						if f, e := os.OpenFile(path, os.O_RDWR, 0); e == nil {
							f.Close()
						}
					}
					<-done
					t.Fatalf("%s on a %s did not return within 3 s", op.name, k)
				}
				want := fsx.ErrNotRegular
				switch {
				case k == hostile.Symlink:
					want = fsx.ErrSymlink
				case untrusted:
					want = fsx.ErrUntrusted
				}
				if !errors.Is(err, want) {
					t.Errorf("%s on a %s: err = %v, want %v", op.name, k, err, want)
				}
				after, lerr := os.Lstat(path)
				if lerr != nil || after.Mode() != before.Mode() {
					t.Errorf("the %s was replaced or removed: before %v, after %v (%v)", k, before.Mode(), after, lerr)
				}
				if untrusted {
					if b, _ := os.ReadFile(path); string(b) != "planted\n" {
						t.Errorf("the %s file was written: %q", k, b)
					}
				}
				if k == hostile.Symlink {
					if b, _ := os.ReadFile(decoy); string(b) != "decoy\n" {
						t.Errorf("decoy changed: %q", b)
					}
				}
			})
		}
	}
}

// TestWriteFileAtomicReplacesUntrusted: a state write replaces a file another
// user planted (the rename drops it from the directory; its content is never
// read) and leaves a 0600 file of the user.
func TestWriteFileAtomicReplacesUntrusted(t *testing.T) {
	for _, k := range []hostile.Kind{hostile.Foreign, hostile.WorldWritable} {
		t.Run(string(k), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			if err := hostile.Plant(path, k, []byte("planted\n"), ""); errors.Is(err, hostile.ErrNeedRoot) {
				t.Skip(err)
			} else if err != nil {
				t.Fatal(err)
			}
			if err := fsx.WriteFileAtomic(path, []byte("ours\n")); err != nil {
				t.Fatal(err)
			}
			b, err := fsx.ReadFile(path)
			if err != nil || string(b) != "ours\n" {
				t.Errorf("after replace: %q, %v", b, err)
			}
			// The advisory write over it (an exchange, then the planted
			// file removed under the temporary name) too.
			if err := hostile.Plant(path+".hb", k, []byte("planted\n"), ""); err != nil {
				t.Fatal(err)
			}
			if err := fsx.WriteAdvisoryAtomic(path+".hb", []byte("ours\n")); err != nil {
				t.Fatal(err)
			}
			if b, err := fsx.ReadFile(path + ".hb"); err != nil || string(b) != "ours\n" {
				t.Errorf("after the advisory replace: %q, %v", b, err)
			}
			if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 2 {
				t.Errorf("files left: %v, want the two written", ents)
			}
		})
	}
}

func closeIf(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// TestOpenReadIsBlockingAfterCheck: the checked open clears O_NONBLOCK on the
// regular file it returns, so an ordinary read works as before.
func TestOpenReadIsBlockingAfterCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r")
	os.WriteFile(path, []byte("hello\n"), 0o600)
	f, err := fsx.OpenRead(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "hello\n" {
		t.Fatalf("read %q, %v", b, err)
	}
}

// TestAppendAfterTornLine: a file whose last line is torn (no newline) gets
// a newline before the appended line, in the same write, and the returned
// offset is that of the new line. Before, the new row was glued onto the
// torn one.
func TestAppendAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(path, []byte("{\"a\":1}\n{\"torn"), 0o600)
	off, err := fsx.AppendLine(path, []byte(`{"b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := "{\"a\":1}\n{\"torn\n{\"b\":2}\n"; string(b) != want {
		t.Fatalf("content %q, want %q", b, want)
	}
	if got := string(b[off:]); got != "{\"b\":2}\n" {
		t.Errorf("offset %d points at %q", off, got)
	}
	// An intact file gets no extra newline.
	off2, err := fsx.AppendLine(path, []byte("c"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if !bytes.HasSuffix(b, []byte("{\"b\":2}\nc\n")) || off2 != int64(len(b)-2) {
		t.Errorf("content %q, offset %d", b, off2)
	}
}

func TestCheckTrust(t *testing.T) {
	uid := os.Geteuid()
	dir := t.TempDir()
	mk := func(name string, m os.FileMode, isDir bool) string {
		p := filepath.Join(dir, name)
		if isDir {
			os.Mkdir(p, 0o700)
		} else {
			os.WriteFile(p, []byte("x"), 0o600)
		}
		os.Chmod(p, m)
		return p
	}
	cases := []struct {
		name  string
		path  string
		uid   int
		trust bool
	}{
		{"private file", mk("f600", 0o600, false), uid, true},
		{"group-writable file", mk("f660", 0o660, false), uid, true},
		{"world-writable file", mk("f666", 0o666, false), uid, false},
		{"private dir", mk("d700", 0o700, true), uid, true},
		{"group-writable dir", mk("d770", 0o770, true), uid, false},
		{"world-writable dir", mk("d777", 0o777, true), uid, false},
		{"file of another uid", mk("fother", 0o600, false), uid + 1, false},
		{"dir of another uid", mk("dother", 0o700, true), uid + 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fi, err := os.Lstat(c.path)
			if err != nil {
				t.Fatal(err)
			}
			err = fsx.CheckTrust(c.path, fi, c.uid)
			if (err == nil) != c.trust {
				t.Fatalf("CheckTrust = %v, want trusted=%v", err, c.trust)
			}
			var te *fsx.TrustError
			if err != nil && (!errors.Is(err, fsx.ErrUntrusted) || !errors.As(err, &te) || te.Fix == "") {
				t.Errorf("err %v is not a *TrustError with a fix matching ErrUntrusted", err)
			}
			if fi.IsDir() {
				if err2 := fsx.CheckDirTrust(c.path, c.uid); (err2 == nil) != c.trust {
					t.Errorf("CheckDirTrust = %v", err2)
				}
			} else if _, err2 := fsx.ReadFileTrusted(c.path, c.uid); (err2 == nil) != c.trust {
				t.Errorf("ReadFileTrusted = %v", err2)
			}
		})
	}
}
