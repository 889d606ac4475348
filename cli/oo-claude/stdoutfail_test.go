package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
)

// fullWriter fails every write as a full disk does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}
}

// runFullStdout is runInProcess with a stdout where every write fails.
func runFullStdout(t *testing.T, getenv func(string) string, args ...string) result {
	t.Helper()
	var errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), fullWriter{}, &errb, testProc(getenv))
	code := exitCode(err, &errb)
	return result{stderr: errb.String(), code: code}
}

var _ io.Writer = fullWriter{}

// TestStdoutLost: a verb whose output could not be written is not done
// (exit 1, the write's error on stderr), in its human form as in --json;
// a send keeps its verdict's exit code (a delivered line is not reported
// refused because its row was lost) and says where the row is kept.
func TestStdoutLost(t *testing.T) {
	o := newObsStation(t)
	for _, args := range [][]string{
		{"riders"},
		{"riders", o.nameA},
		{"sessions"},
		{"read", o.sidA},
		{"read", o.sidA, "--json"},
	} {
		r := runFullStdout(t, o.fs.Getenv, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "no space left on device") {
			t.Errorf("%v: exit %d stderr %q, want 1 and the write's error", args, r.code, r.stderr)
		}
	}
	fs := fakestation.New(t)
	row := fs.AddSession(fakestation.Session{Name: "work-e9"})
	fakedoorman.Start(t, fs.Paths.InboxDir, row.SessionID, fakedoorman.Options{})
	for _, args := range [][]string{
		{"send", "work-e9", "hi", "--from", "luna", "--min-interval", "0"},
		{"send", "work-e9", "hi again", "--from", "luna", "--min-interval", "0", "--json"},
	} {
		r := runFullStdout(t, fs.Getenv, args...)
		if r.code != 0 || !strings.Contains(r.stderr, "the verdict was not printed in full") || !strings.Contains(r.stderr, "oo-claude receipt ") {
			t.Errorf("%v: exit %d stderr %q, want 0 (delivered) and a note naming the receipt", args, r.code, r.stderr)
		}
	}
	r := runFullStdout(t, fs.Getenv, "send", "work-e9", "", "--json")
	if r.code != 1 || !strings.Contains(r.stderr, "the verdict was not printed in full") {
		t.Errorf("a refused send: exit %d stderr %q, want 1 (refused) and the note", r.code, r.stderr)
	}
}
