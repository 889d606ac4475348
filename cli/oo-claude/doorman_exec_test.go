package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/oo-family/oo-claude/internal/programs"
)

// TestFindProgram: a program is looked up beside this binary by the one
// rule (internal/programs, whose tests hold each refusal), named in the
// error with what to do; with this binary's path unknown there is none.
func TestFindProgram(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeExec(t, filepath.Join(dir, "oo-claude"), 0o755)
	writeExec(t, filepath.Join(dir, programs.Doorman), 0o755)
	self := func() (string, error) { return filepath.Join(dir, "oo-claude"), nil }
	if got, err := findProgram(self, programs.Doorman); err != nil || got != filepath.Join(dir, programs.Doorman) {
		t.Errorf("installed: %q, %v", got, err)
	}
	_, err := findProgram(self, programs.Top)
	if !errors.Is(err, programs.ErrUnusable) || !strings.HasPrefix(err.Error(), programs.Top+": ") || !strings.Contains(err.Error(), "go install ./cli/...") {
		t.Errorf("missing: %v; want ErrUnusable, named, saying what installs it", err)
	}
	if _, err := findProgram(func() (string, error) { return "", errors.New("no /proc") }, programs.Doorman); !errors.Is(err, programs.ErrUnusable) {
		t.Errorf("with this binary's path unknown: %v; want ErrUnusable", err)
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
	if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(dir, programs.Doorman)) || !strings.Contains(r.stderr, "go install ./cli/...") {
		t.Fatalf("without the doorman program: exit %d, stderr %q; want 1 naming the missing program", r.code, r.stderr)
	}
	installAt(t, binary(t), filepath.Join(dir, programs.Doorman))
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
		err := execProgram(self, os.Environ)(ctx, programs.Doorman, []string{"doorman", "--mcp"}, nil, io.Discard, io.Discard)
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

// TestDoctorChecksThePrograms: doctor, run as an installed oo-claude
// without its programs beside it, reports each missing with the install
// command; once they are installed, its programs check is ok.
func TestDoctorChecksThePrograms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self := filepath.Join(dir, "oo-claude")
	installAt(t, binary(t), self)
	env := []string{"OO_CLAUDE_TEST_AS_BINARY=1", "PATH=/usr/bin:/bin", childGORACE(), "HOME=" + t.TempDir(), "OO_CLAUDE_DOCTOR_MCP=0"}
	check := func(r result) (status string, missing []string) {
		var rep struct {
			Checks   []struct{ Name, Status string }
			Findings []struct{ Kind, Path, Fix string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("doctor --json: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
		for _, c := range rep.Checks {
			if c.Name == "programs" {
				status = c.Status
			}
		}
		for _, f := range rep.Findings {
			if f.Kind == "program-missing" && strings.Contains(f.Fix, "go install ./cli/...") {
				missing = append(missing, filepath.Base(f.Path))
			}
		}
		return status, missing
	}
	status, missing := check(runAt(t, self, env, "doctor", "--json"))
	if status != "finding" || strings.Join(missing, " ") != programs.Doorman+" "+programs.Top {
		t.Fatalf("without the programs: %s, missing %q; want a finding for each", status, missing)
	}
	installAt(t, binary(t), filepath.Join(dir, programs.Doorman))
	installAt(t, binary(t), filepath.Join(dir, programs.Top))
	if status, missing := check(runAt(t, self, env, "doctor", "--json")); status != "ok" || len(missing) != 0 {
		t.Fatalf("with the programs: %s, missing %q; want ok", status, missing)
	}
}
