package dispatcher

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/station"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	fakeclaude.Main() // the test binary also plays claude
	goleak.VerifyTestMain(m)
}

// TestStartWorker: the worker is handed back once its doorman follows (a
// fake claude plays the session, a fake doorman its doorman), a line sent
// right then is delivered, and Wait gives the completed run.
func TestStartWorker(t *testing.T) {
	st, fk := fakestation.New(t), fakeclaude.Install(t)
	cfg := station.DefaultConfig(st.Paths)
	cfg.ClaudeBin = fk.Claude
	r := &headless.Runner{Config: cfg, Environ: st.Env}
	release := filepath.Join(t.TempDir(), "release")
	fk.Script(fakeclaude.Script{HoldUntil: release, Result: "built"})
	go func() { // the session comes up once claude runs: its row, its doorman
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if calls, _ := fk.WaitCalls(ctx, "claude", 1); len(calls) == 1 {
			sid := calls[0].Args[slices.Index(calls[0].Args, "--session-id")+1]
			st.AddSession(fakestation.Session{PID: calls[0].PID, SessionID: sid})
			fakedoorman.Start(t, st.Paths.InboxDir, sid, fakedoorman.Options{})
		}
	}()
	run, err := StartWorker(context.Background(), r, "/opt/oo/oo-claude", t.TempDir(), "build it")
	if err != nil {
		t.Fatalf("StartWorker: %v", err)
	}
	v, err := claudeinbox.NewSender(cfg).Send(context.Background(), claudeinbox.Request{Target: run.SessionID(), Line: "also test", From: "dispatcher"})
	if err != nil || !v.Class.Delivered() {
		t.Fatalf("send to the worker: %s (%s) %v, want delivered-*", v.Class, v.Note, err)
	}
	os.WriteFile(release, nil, 0o600)
	if res, err := run.Wait(context.Background()); err != nil || res.Class != headless.Completed {
		t.Errorf("Wait = %s, %v; want completed", res.Class, err)
	}
}
