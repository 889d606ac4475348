package programs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeExec(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestBeside: a program is the regular, executable file of its name beside
// oo-claude, root's or oo-claude's owner's, not writable by others;
// anything else is ErrUnusable (and a missing one ErrMissing) with a
// message that names the path and says what is wrong.
func TestBeside(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		plant   func(t *testing.T, path string)
		want    string // "" found; else in the error
		missing bool
	}{
		{"installed", func(t *testing.T, p string) { writeExec(t, p, 0o755) }, "", false},
		{"missing", func(*testing.T, string) {}, "go install ./cli/...", true},
		{"a directory", func(t *testing.T, p string) { must(t, os.Mkdir(p, 0o755)) }, "not a regular file", false},
		{"a FIFO", func(t *testing.T, p string) { must(t, syscall.Mkfifo(p, 0o755)) }, "not a regular file", false},
		{"not executable", func(t *testing.T, p string) { writeExec(t, p, 0o644) }, "not executable", false},
		{"writable by everyone", func(t *testing.T, p string) { writeExec(t, p, 0o777) }, "writable by every user", false},
		{"another user's", func(t *testing.T, p string) {
			if os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root (CI runs as root)")
			}
			writeExec(t, p, 0o755)
			must(t, os.Chown(p, 65534, 65534))
		}, "owned by another user", false},
		{"a dangling symlink", func(t *testing.T, p string) { must(t, os.Symlink(filepath.Join(t.TempDir(), "gone"), p)) }, "go install ./cli/...", true},
		{"a symlink to the program", func(t *testing.T, p string) {
			real := filepath.Join(t.TempDir(), "real")
			writeExec(t, real, 0o755)
			must(t, os.Symlink(real, p))
		}, "", false},
	}
	for _, c := range cases {
		for _, name := range All() {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				path := filepath.Join(dir, name)
				c.plant(t, path)
				self := filepath.Join(dir, "oo-claude")
				writeExec(t, self, 0o755)
				got, err := Beside(self, name)
				switch {
				case c.want == "" && (err != nil || got != path):
					t.Errorf("= %q, %v; want %q", got, err, path)
				case c.want != "" && (!errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path)):
					t.Errorf("= %q, %v; want ErrUnusable naming %s and saying %q", got, err, path, c.want)
				case c.want != "" && errors.Is(err, ErrMissing) != c.missing:
					t.Errorf("= %v; ErrMissing %v, want %v", err, errors.Is(err, ErrMissing), c.missing)
				}
			})
		}
	}
}
