package glue

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakesession"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/station"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	fakeclaude.Main() // the test binary also plays claude
	// glue(c) {
	doorman.ServeIfInvoked(context.Background()) // started as a session's doorman, it serves and exits
	// }
	goleak.VerifyTestMain(m)
}

// worker is a station whose fake claude plays a steerable session (its
// doorman: this binary, glue(c)) until release exists.
type worker struct {
	st        *fakestation.Station
	cfg       station.Config
	r         *headless.Runner
	self, cwd string
	release   string
}

func newWorker(t *testing.T) *worker {
	st, fk := fakestation.New(t), fakeclaude.Install(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w := &worker{st: st, cfg: station.DefaultConfig(st.Paths), self: self, cwd: t.TempDir(), release: filepath.Join(t.TempDir(), "release")}
	w.cfg.ClaudeBin = fk.Claude
	w.r = &headless.Runner{Config: w.cfg, Environ: st.Env}
	fk.Script(fakeclaude.Script{Session: true, HoldUntil: w.release, Result: "built"})
	return w
}

// end lets the run end and checks it completed.
func (w *worker) end(t *testing.T, run *headless.Run) {
	t.Helper()
	os.WriteFile(w.release, nil, 0o600)
	if res, err := run.Wait(context.Background()); err != nil || res.Class != headless.Completed {
		t.Errorf("Wait = %s, %v; want completed", res.Class, err)
	}
}

// send sends line to target with NewSender's sender.
func send(t *testing.T, cfg station.Config, target, line string) claudeinbox.Verdict {
	t.Helper()
	v, err := claudeinbox.NewSender(cfg).Send(context.Background(), claudeinbox.Request{Target: target, Line: line, From: "dispatcher"})
	if err != nil || !v.Class.Delivered() {
		t.Fatalf("send to %s: %s (%s) %v, want delivered-*", target, v.Class, v.Note, err)
	}
	return v
}

// TestSteerableStart (a): the start returns once the session's doorman
// follows its inbox, so a line sent right then is delivered.
func TestSteerableStart(t *testing.T) {
	t.Parallel()
	w, ctx := newWorker(t), context.Background()
	// glue(a) {
	run, err := w.r.StartSteerable(ctx, headless.StartRequest{Prompt: "build it", CWD: w.cwd, Self: w.self})
	// }
	if err != nil {
		t.Fatalf("StartSteerable: %v", err)
	}
	send(t, w.cfg, run.SessionID(), "also test")
	w.end(t, run)
}

// TestOwnDoorman (c): with its own executable as Self, the session's
// doorman is this program (TestMain's glue(c)), and it delivers.
func TestOwnDoorman(t *testing.T) {
	t.Parallel()
	w := newWorker(t)
	run, err := w.r.StartSteerable(context.Background(), headless.StartRequest{Prompt: "build it", CWD: w.cwd, Self: w.self})
	if err != nil {
		t.Fatalf("StartSteerable: %v", err)
	}
	v := send(t, w.cfg, run.SessionID(), "also lint")
	if exe, err := os.Readlink("/proc/" + strconv.Itoa(v.Doorman.PID) + "/exe"); err != nil || exe != w.self {
		t.Errorf("the doorman (pid %d) runs %q (%v), want this program %s", v.Doorman.PID, exe, err, w.self)
	}
	w.end(t, run)
}

// TestKnownParent (e): a start names its lineage parent.
func TestKnownParent(t *testing.T) {
	t.Parallel()
	w, ctx := newWorker(t), context.Background()
	os.WriteFile(w.release, nil, 0o600) // the run ends at once
	const parent = "11111111-1111-4111-8111-111111111111"
	// glue(e) {
	res, err := w.r.Start(ctx, headless.StartRequest{Prompt: "build it", CWD: w.cwd, Self: w.self, Parent: parent})
	// }
	if err != nil || res.Class != headless.Completed {
		t.Fatalf("Start = %s, %v; want completed", res.Class, err)
	}
	row, ok, err := (&lineage.Ledger{Path: w.st.Paths.LineageFile()}).Parent(ctx, res.File.SessionID)
	if err != nil || !ok || row.ParentSession == nil || *row.ParentSession != parent {
		t.Errorf("the ledger's link of %s: %+v %v %v, want parent %s", res.File.SessionID, row, ok, err, parent)
	}
}

// session is a fake session that answers every line.
func session(t *testing.T) (*fakesession.Session, station.Config) {
	s := fakesession.Start(t, fakesession.Options{Answer: func(line string) fakesession.Turn {
		return fakesession.Turn{Text: "answer to: " + line}
	}})
	return s, station.DefaultConfig(s.Station.Paths)
}

// TestNextStep (b): every verdict says what to do next.
func TestNextStep(t *testing.T) {
	t.Parallel()
	s, cfg := session(t)
	sender := claudeinbox.NewSender(cfg)
	for _, c := range []struct {
		req  claudeinbox.Request
		want claudeinbox.Next
	}{
		{claudeinbox.Request{Target: s.SessionID(), Line: "build it", From: "a"}, claudeinbox.NextDone},
		{claudeinbox.Request{Target: s.SessionID(), Line: "build it again", From: "a"}, claudeinbox.NextRetryAfter},
		{claudeinbox.Request{Target: "nobody-at-all", Line: "hi", From: "a"}, claudeinbox.NextRefused},
		{claudeinbox.Request{Target: "22222222-2222-4222-8222-222222222222", Line: "hi", From: "a", ExpectStart: true}, claudeinbox.NextWait},
	} {
		v, _ := sender.Send(context.Background(), c.req)
		// glue(b) {
		next := v.Next()
		// }
		if next != c.want {
			t.Errorf("%q to %s: %s (%s) → %s, want %s", c.req.Line, c.req.Target, v.Class, v.Note, next, c.want)
		}
	}
}

// TestThrottleResend (d): a line the throttle drops is sent again once
// its interval is over, and delivered.
func TestThrottleResend(t *testing.T) {
	t.Parallel()
	s, cfg := session(t)
	cfg.MinInterval = time.Second // the throttle a program sets; the default is 30 s
	sender, ctx := claudeinbox.NewSender(cfg), context.Background()
	send(t, cfg, s.SessionID(), "build it")
	req := claudeinbox.Request{Target: s.SessionID(), Line: "build it again", From: "dispatcher"}
	// glue(d) {
	v, err := sender.SendRetry(ctx, req)
	// }
	if err != nil || !v.Class.Delivered() {
		t.Fatalf("SendRetry: %s (%s) %v, want delivered-*", v.Class, v.Note, err)
	}
}

// TestPerCallWaits (f): one call waits for the answer on NewSender's
// sender, with no witness set by hand and the sender left as it was.
func TestPerCallWaits(t *testing.T) {
	t.Parallel()
	s, cfg := session(t)
	sender, ctx := claudeinbox.NewSender(cfg), context.Background()
	// glue(f) {
	waits := sender.Waits()
	waits.Reply = time.Minute
	v, err := sender.Send(ctx, claudeinbox.Request{Target: s.SessionID(), Line: "status?", From: "dispatcher", Waits: &waits})
	// }
	if err != nil || v.Reply == nil || v.Reply.Text != "answer to: [dispatcher 📡] status?" {
		t.Fatalf("Send: %s (%s) reply %+v %v, want the answer", v.Class, v.Note, v.Reply, err)
	}
	if sender.ReplyWait != 0 {
		t.Errorf("the call changed the sender's ReplyWait to %v", sender.ReplyWait)
	}
}
