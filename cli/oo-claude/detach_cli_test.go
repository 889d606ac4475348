package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/station"
)

// start --detach returns once the session's doorman follows its inbox,
// printing the result file so far (its id, state started, a supervisor that
// is not the exited start), and the run goes on under that supervisor to a
// completed result file.
func TestStartDetach(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	release := filepath.Join(t.TempDir(), "release")
	r.fk.Script(fakeclaude.Script{HoldUntil: release, Result: "DETACHED"})
	out := filepath.Join(t.TempDir(), "r.json")
	done := make(chan result, 1)
	go func() {
		done <- r.run(t, nil, "start", "do it", "--session-id", r.sid, "--detach", "--cwd", r.cwd, "--out", out, "--json")
	}()
	if calls, _ := r.fk.WaitCalls(ctxT(t, 30*time.Second), "claude", 1); len(calls) != 1 {
		t.Fatalf("claude did not run: %+v", drainResult(done))
	}
	select {
	case res := <-done:
		t.Fatalf("start --detach returned before the doorman followed: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	default:
	}
	// The session's doorman: the fake follows the inbox from now on.
	dm := fakedoorman.Start(t, r.fs.Paths.InboxDir, r.sid, fakedoorman.Options{})
	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("start --detach did not return within 30 s of the doorman following")
	}
	var f headless.StartFile
	if err := json.Unmarshal([]byte(res.stdout), &f); res.code != 0 || err != nil {
		t.Fatalf("exit %d (%v)\n%s\n%s", res.code, err, res.stdout, res.stderr)
	}
	if f.State != headless.Started || f.SessionID != r.sid || f.ResultFile != out || f.SupervisorPID == nil || f.PID == nil {
		t.Fatalf("answer %+v, want the started file of %s with its supervisor and claude", f, r.sid)
	}
	sup := *f.SupervisorPID
	if !(station.Proc{}).Alive(sup, "") {
		t.Fatalf("supervisor %d is not running after the start returned", sup)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if f = readStartFile(t, out); f.State != headless.Started {
			break
		}
	}
	if f.State != headless.Completed || f.Result == nil || *f.Result != "DETACHED" {
		t.Errorf("result file %+v, want completed DETACHED", f)
	}
	// The supervisor writes its receipt after the result file: let it end
	// before the test's directories go.
	for deadline := time.Now().Add(30 * time.Second); (station.Proc{}).Alive(sup, "") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	dm.Stop()
}

func drainResult(done <-chan result) any {
	select {
	case r := <-done:
		return r
	case <-time.After(100 * time.Millisecond):
		return "still running"
	}
}
