package claudeproc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/internal/claudeproc"
	"github.com/oo-family/oo-claude/station"
)

// fakeProcfs is a procfs root holding processes with a command line and
// an executable (a symlink to a file of the test's bin directory).
type fakeProcfs struct {
	t    *testing.T
	root string
	bin  string // the directory of the executables
}

func newFakeProcfs(t *testing.T) *fakeProcfs {
	return &fakeProcfs{t: t, root: t.TempDir(), bin: t.TempDir()}
}

// exe returns the path of the executable called name, creating it.
func (f *fakeProcfs) exe(name string) string {
	p := filepath.Join(f.bin, name)
	if _, err := os.Stat(p); err != nil {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o700); err != nil {
			f.t.Fatal(err)
		}
	}
	return p
}

// add makes process pid running exe (a path, or "" for none) with args.
func (f *fakeProcfs) add(pid int, exe string, args ...string) {
	dir := filepath.Join(f.root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		f.t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (%s) S 1 %d 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0", pid, filepath.Base(args[0]), pid)
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o600); err != nil {
		f.t.Fatal(err)
	}
	if exe != "" {
		if err := os.Symlink(exe, filepath.Join(dir, "exe")); err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestProcessNamingOnlyClaude: a wrapper whose command line carries a
// start's or resume's arguments (timeout, bash -c, strace, env, nice,
// nohup) does not hold the session; a claude process does, its binary run
// directly, under another name (a symlink), wrapped, or as an
// interpreter's script, and so does a process whose executable cannot be
// told.
func TestProcessNamingOnlyClaude(t *testing.T) {
	f := newFakeProcfs(t)
	claude := f.exe("claude")
	wrappers := [][]string{
		{"timeout", "30", "/usr/local/bin/oo-claude", "start", "x", "--session-id", sid},
		{"bash", "-c", "oo-claude start x --session-id " + sid + "; echo done"},
		{"bash", "-c", "oo-claude resume " + sid + " hi", "sh", "--resume", sid},
		{"strace", "-f", "oo-claude", "start", "x", "--session-id", sid},
		{"env", "A=1", "oo-claude", "start", "x", "--session-id", sid},
		{"nice", "-n", "5", "oo-claude", "resume", "-r", sid},
		{"nohup", "oo-claude", "start", "x", "--session-id=" + sid},
		{"oo-claude", "start", "x", "--session-id", sid}, // another oo-claude: its lock tells
	}
	for i, w := range wrappers {
		f.add(100+i, f.exe(w[0]), w...)
	}
	p := station.Proc{Root: f.root}
	if pid, err := claudeproc.ProcessNaming(p, claude, sid, 0); err != nil || pid != 0 {
		t.Fatalf("with wrappers only: pid %d (%v), want 0: a wrapper does not hold the session", pid, err)
	}

	holders := []struct {
		name string
		exe  string
		args []string
	}{
		{"claude itself", claude, []string{claude, "-p", "--session-id", sid, "x"}},
		{"claude under another name", claude, []string{"/home/u/.local/bin/claude", "-r" + sid}},
		{"claude as a script", f.exe("node"), []string{"node", claude, "--resume", sid}},
		{"another install of claude", f.exe("2.1.340"), []string{"/home/u/.local/bin/claude", "--resume", sid}},
		{"an executable that cannot be told", "", []string{"claude", "--resume", sid}},
	}
	for i, h := range holders {
		t.Run(h.name, func(t *testing.T) {
			pid := 200 + i
			f.add(pid, h.exe, h.args...)
			defer os.RemoveAll(filepath.Join(f.root, strconv.Itoa(pid)))
			if h.exe == "" {
				// /proc/<pid>/exe that exists but cannot be read: a
				// symlink loop stands for the refused readlink.
				link := filepath.Join(f.root, strconv.Itoa(pid), "exe")
				if err := os.Symlink(link, link); err != nil {
					t.Fatal(err)
				}
			}
			got, err := claudeproc.ProcessNaming(p, claude, sid, 0)
			if err != nil || got != pid {
				t.Errorf("pid %d (%v), want %d", got, err, pid)
			}
			if got, _ := claudeproc.ProcessNaming(p, claude, sid, pid); got != 0 {
				t.Errorf("skipping %d: pid %d, want 0", pid, got)
			}
		})
	}

	// A claude binary that cannot be read: every naming process holds.
	if pid, _ := claudeproc.ProcessNaming(p, filepath.Join(f.bin, "missing"), sid, 0); pid == 0 {
		t.Errorf("with the claude binary unreadable a wrapper is not taken for claude")
	}
}
