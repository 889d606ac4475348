package headless_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/claudeproc"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/station"
)

func TestStartSystemdRunFails(t *testing.T) {
	r, fs, fk := newRunner(t)
	fk.ScriptFor(fakeclaude.NameSystemdRun, fakeclaude.Script{Exit: 1, Stderr: "Failed to connect to bus: No medium found\n"})
	exe, _ := os.Executable()
	res, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Systemd: true, Self: exe})
	if err == nil || res.Class != headless.Failed || res.Class.ExitCode() != 4 {
		t.Fatalf("class %s, err %v; want failed", res.Class, err)
	}
	out := filepath.Join(fs.Paths.StateDir, "start", sid+".json")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var f headless.StartFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.State != headless.Failed || f.Unit == nil || *f.Unit != "oo-claude-0b5c8a1e" || f.Reason == nil {
		t.Errorf("result file %s", b)
	}
	if _, err := os.Stat(claudeproc.PromptFile(out)); !os.IsNotExist(err) {
		t.Errorf("prompt file left behind: %v", err)
	}
	if n := len(fk.Calls("claude")); n != 0 {
		t.Errorf("claude ran %d times", n)
	}
}

func TestRunUnitRefusesForeignFiles(t *testing.T) {
	r, _, _ := newRunner(t)
	p := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(p, []byte(`{"state":"completed"}`), 0o600)
	for _, path := range []string{"relative.json", p, filepath.Join(t.TempDir(), "missing.json")} {
		res, err := r.RunUnit(context.Background(), path)
		if res.Class != headless.Refused || err == nil {
			t.Errorf("%s: class %s err %v", path, res.Class, err)
		}
	}
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A start names its supervisor (pid and start time) from its first write,
// so a reader can tell a live run from a lost one: ReadStartFile reads a
// running start as started, a finished one as it ended, and a started file
// whose supervisor is gone as lost, finalizing it; a unit's body refuses a
// file a reader found lost.
func TestStartSupervisorAndReadStartFile(t *testing.T) {
	if string(headless.Lost) != claudeproc.StateLost || string(headless.Started) != claudeproc.StateStarted {
		t.Fatalf("classes %q %q, the result file's states %q %q", headless.Lost, headless.Started, claudeproc.StateLost, claudeproc.StateStarted)
	}
	r, _, fk := newRunner(t)
	fk.Script(fakeclaude.Script{DelayMS: 3000})
	sid := uuid.NewString()
	out := filepath.Join(t.TempDir(), "r.json")
	done := make(chan headless.StartResult, 1)
	go func() {
		res, _ := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Self: self, Out: out})
		done <- res
	}()
	if calls, _ := fk.WaitCalls(ctxT(t, 30*time.Second), "claude", 1); len(calls) != 1 {
		t.Fatal("claude did not run")
	}
	me, err := (station.Proc{}).Info(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.ReadStartFile(out)
	if err != nil || f.State != headless.Started || f.SupervisorPID == nil || *f.SupervisorPID != os.Getpid() ||
		f.SupervisorProcStart == nil || *f.SupervisorProcStart != me.StartTicks {
		t.Errorf("running: %v state %s supervisor %v start %v, want started by pid %d tick %s", err, f.State, f.SupervisorPID, f.SupervisorProcStart, os.Getpid(), me.StartTicks)
	}
	if res := <-done; res.Class != headless.Completed {
		t.Fatalf("class %s", res.Class)
	}
	if f, err := r.ReadStartFile(out); err != nil || f.State != headless.Completed {
		t.Errorf("finished: %v state %s, want completed", err, f.State)
	}

	// The same file as a killed supervisor leaves it.
	var m map[string]any
	b, _ := os.ReadFile(out)
	json.Unmarshal(b, &m)
	m["state"], m["ended_at"], m["supervisor_pid"] = "started", nil, deadPID(t)
	b, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(out, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err = r.ReadStartFile(out)
	if err != nil || f.State != headless.Lost || f.EndedAt == nil || f.Reason == nil || !strings.HasPrefix(*f.Reason, "supervisor-gone") ||
		f.Result == nil || f.State.ExitCode() != 4 {
		t.Errorf("supervisor gone: %v state %s ended_at %v reason %v, want lost with the run's keys kept", err, f.State, f.EndedAt, f.Reason)
	}
}
