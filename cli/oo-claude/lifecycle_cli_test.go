package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/station"
)

// A foreground start killed with SIGKILL (an OOM kill) takes its claude
// with it, and its result file, while claude ran, named claude's pid, the
// supervisor's pid and the deadline, so a reader tells the abandoned run
// from a live one.
func TestStartKilledSupervisorTakesClaudeWithIt(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.fk.Script(fakeclaude.Script{DelayMS: 120_000})
	out := filepath.Join(t.TempDir(), "start.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := command(ctx, t, r.env, "start", "work", "--session-id", r.sid, "--out", out, "--cwd", r.cwd, "--timeout", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	calls, _ := r.fk.WaitCalls(ctxT(t, 20*time.Second), "claude", 1)
	if len(calls) != 1 {
		cmd.Process.Kill()
		t.Fatalf("claude never ran")
	}
	claude := calls[0].PID
	var f headless.StartFile
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if json.Unmarshal(b, &f) == nil && f.PID != nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the result file never named claude's pid: %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if *f.PID != claude || f.SupervisorPID == nil || *f.SupervisorPID != cmd.Process.Pid || f.Deadline == nil || f.State != headless.Started {
		t.Errorf("result file while running: pid %v supervisor %v deadline %v state %s; want %d, %d, a deadline, started",
			f.PID, f.SupervisorPID, f.Deadline, f.State, claude, cmd.Process.Pid)
	}
	if d, err := time.Parse(time.RFC3339, *f.Deadline); err != nil || time.Until(d) < 9*time.Minute {
		t.Errorf("deadline %v (%v), want about 600 s ahead", *f.Deadline, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	gone := time.Now().Add(10 * time.Second)
	for (station.Proc{}).Alive(claude, "") {
		if time.Now().After(gone) {
			syscall.Kill(claude, syscall.SIGKILL)
			t.Fatalf("claude (pid %d) outlived its killed supervisor", claude)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A budget that is not a finite number above 0 is a usage error (exit 2)
// of resume and start, before anything runs.
func TestBudgetNotFiniteIsUsage(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.transcriptFor(t, r.sid)
	// A hex float and underscores too: "0x1p1" ran claude with
	// --max-budget-usd 2 and "1_0" with 10.
	for _, b := range []string{"NaN", "nan", "Inf", "+Inf", "-Inf", "0", "-0", "-1", "1e400", "0x1p1", "0X1P1", "1_0", "+1", ""} {
		for _, args := range [][]string{
			{"resume", r.sid, "hi", "--budget", b},
			{"start", "hi", "--cwd", r.cwd, "--budget", b},
		} {
			if res := r.run(t, nil, args...); res.code != 2 {
				t.Errorf("%v: exit %d, want 2 (usage)\nstderr %s", args, res.code, res.stderr)
			}
		}
	}
	if n := len(r.fk.Calls("claude")); n != 0 {
		t.Errorf("claude ran %d times", n)
	}
}

// --max-turns is a whole number ≥ 1 in decimal digits, else a usage error
// (exit 2) of resume and start before anything runs: 0 ran start with the
// default 4 turns, -1 was a refusal (exit 1), and "0x2" or "1_0" were
// read as 2 and 10. --turns of read takes the same rule.
func TestMaxTurnsNotPositiveIsUsage(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.transcriptFor(t, r.sid)
	for _, n := range []string{"0", "-1", "-0", "+1", "0x2", "1_0", "1.0", "1e1", "", "99999999999999999999"} {
		for _, args := range [][]string{
			{"resume", r.sid, "hi", "--max-turns", n},
			{"start", "hi", "--cwd", r.cwd, "--max-turns", n},
			{"read", r.sid, "--turns", n},
		} {
			if res := r.run(t, nil, args...); res.code != 2 {
				t.Errorf("%v: exit %d, want 2 (usage)\nstderr %s", args, res.code, res.stderr)
			}
		}
	}
	if n := len(r.fk.Calls("claude")); n != 0 {
		t.Errorf("claude ran %d times", n)
	}
}
