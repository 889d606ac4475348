package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFindDoormanProgram: the doorman program is the regular, executable
// file oo-claude-doorman beside oo-claude, not writable by others; anything
// else is errNoProgram with a message that says what to do.
func TestFindDoormanProgram(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		plant func(t *testing.T, path string)
		want  string // "" found; else in the error
	}{
		{"installed", func(t *testing.T, p string) { writeExec(t, p, 0o755) }, ""},
		{"missing", func(*testing.T, string) {}, "go install ./cli/..."},
		{"a directory", func(t *testing.T, p string) { mustT(t, os.Mkdir(p, 0o755)) }, "not a regular file"},
		{"a FIFO", func(t *testing.T, p string) { mustT(t, syscall.Mkfifo(p, 0o755)) }, "not a regular file"},
		{"not executable", func(t *testing.T, p string) { writeExec(t, p, 0o644) }, "not executable"},
		{"writable by everyone", func(t *testing.T, p string) { writeExec(t, p, 0o777) }, "writable by every user"},
		{"another user's", func(t *testing.T, p string) {
			if os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root (CI runs as root)")
			}
			writeExec(t, p, 0o755)
			mustT(t, os.Chown(p, 65534, 65534))
		}, "owned by another user"},
		{"a symlink to the program", func(t *testing.T, p string) {
			real := filepath.Join(t.TempDir(), "real")
			writeExec(t, real, 0o755)
			mustT(t, os.Symlink(real, p))
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, doormanProgram)
			c.plant(t, path)
			writeExec(t, filepath.Join(dir, "oo-claude"), 0o755)
			self := func() (string, error) { return filepath.Join(dir, "oo-claude"), nil }
			got, err := findProgram(self, doormanProgram)
			switch {
			case c.want == "" && (err != nil || got != path):
				t.Errorf("= %q, %v; want %q", got, err, path)
			case c.want != "" && (!errors.Is(err, errNoProgram) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path)):
				t.Errorf("= %q, %v; want errNoProgram naming %s and saying %q", got, err, path, c.want)
			}
		})
	}
	if _, err := findProgram(func() (string, error) { return "", errors.New("no /proc") }, doormanProgram); !errors.Is(err, errNoProgram) {
		t.Errorf("with this binary's path unknown: %v; want errNoProgram", err)
	}
}

// TestDoormanExecsTheProgramBeside: `oo-claude doorman` runs the doorman
// program installed beside it, and without one exits 1 saying so. The test
// binary, copied as oo-claude (and as oo-claude-doorman beside it), is
// both programs; a foreground doorman outside any session is not
// deliverable here (exit 3) and prints its status.
func TestDoormanExecsTheProgramBeside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self := filepath.Join(dir, "oo-claude")
	installAt(t, binary(t), self)
	env := []string{"OO_CLAUDE_TEST_AS_BINARY=1", "PATH=/usr/bin:/bin", childGORACE(), "HOME=" + t.TempDir(), "OO_CLAUDE_INBOX_DIR=" + t.TempDir()}
	args := []string{"doorman", "--allow-foreground", "--once", "--json"}

	r := runAt(t, self, env, args...)
	if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(dir, doormanProgram)) || !strings.Contains(r.stderr, "go install ./cli/...") {
		t.Fatalf("without the doorman program: exit %d, stderr %q; want 1 naming the missing program", r.code, r.stderr)
	}
	installAt(t, binary(t), filepath.Join(dir, doormanProgram))
	r = runAt(t, self, env, args...)
	if r.code != 3 || !strings.Contains(r.stdout, `"state"`) {
		t.Fatalf("with the doorman program: exit %d, stdout %q, stderr %q; want 3 and the status", r.code, r.stdout, r.stderr)
	}
}

// TestExecDoormanAfterASignal: a SIGINT or SIGTERM taken before the exec
// (Claude Code stopping the server as it starts) ends the process with the
// signal's exit code instead of starting a doorman that never hears it.
func TestExecDoormanAfterASignal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self := func() (string, error) { return filepath.Join(dir, "oo-claude"), nil }
	for _, c := range []struct {
		sig  os.Signal
		code int
	}{{os.Interrupt, 130}, {syscall.SIGTERM, 143}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(signalCause{c.sig})
		err := execProgram(self, os.Environ)(ctx, doormanProgram, []string{"doorman", "--mcp"}, nil, io.Discard, io.Discard)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != c.code {
			t.Errorf("after %v: %v; want exit %d", c.sig, err, c.code)
		}
	}
}

func writeExec(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	mustT(t, os.WriteFile(path, []byte("#!/bin/sh\n"), 0o600))
	mustT(t, os.Chmod(path, mode))
}

// installAt puts the program from at to: a hard link, else a copy. A copy
// just written can fail to start with ETXTBSY while another test's child,
// forked meanwhile, still holds the writing descriptor; runAt retries that.
func installAt(t *testing.T, from, to string) {
	t.Helper()
	if os.Link(from, to) == nil {
		return
	}
	in, err := os.Open(from)
	mustT(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	mustT(t, err)
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	mustT(t, out.Close())
}

func mustT(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
