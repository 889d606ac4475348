package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScript runs testdata/script/*.txtar: each is a session at a terminal
// (the oo-claude binary, its exact stdout, stderr and exit code) in a fresh
// HOME with no OO_CLAUDE_* knob set; $PROJ is a project directory (not
// made) and $PROJDIR the directory of its transcripts under HOME.
//
// Besides testscript's own commands, a script has
//
//	exits N oo-claude ARGS...
//
// which runs oo-claude and fails unless it exits with code N; its stdout
// and stderr are then checked with stdout, stderr and cmp as after exec;
// and
//
//	mkfifo PATH
//
// which makes a FIFO (and its parent directories) at PATH under $WORK.
func TestScript(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			env.Setenv("HOME", home)
			env.Setenv("XDG_RUNTIME_DIR", filepath.Join(env.WorkDir, "run"))
			// A project directory, and where Claude Code keeps its
			// transcripts, for scripts that write a session's.
			proj := filepath.Join(env.WorkDir, "proj")
			env.Setenv("PROJ", proj)
			env.Setenv("PROJDIR", filepath.Join(home, ".claude", "projects", transcriptfile.EncodeProjectDir(proj)))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":  exits,
			"mkfifo": mkfifo,
		},
	})
}

// exits is the script command "exits N command args...".
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	got := 0
	err = ts.Exec(args[1], args[2:]...)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// mkfifo is the script command "mkfifo path".
func mkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo path")
	}
	p := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o700))
	ts.Check(syscall.Mkfifo(p, 0o600))
}
