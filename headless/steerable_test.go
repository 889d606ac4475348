package headless_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/internal/fsx"
)

// StartSteerable returns once the started session's doorman follows its
// inbox (not before: the fake doorman starts only after claude runs), a
// line sent then is delivered, and Wait gives the run's completed result
// once claude ends.
//
// The wait wakes on the heartbeat's file event: the fallback poll is put
// out of reach (an hour) here, so a wait that polled would not return.
func TestStartSteerable(t *testing.T) {
	if k := fsx.NewWaker(time.Second, filepath.Join(t.TempDir(), "f")); k.Polling() {
		k.Close()
		t.Skip("no file events here: the waits poll")
	} else {
		k.Close()
	}
	defer func(d time.Duration) { *headless.SteerablePoll = d }(*headless.SteerablePoll)
	*headless.SteerablePoll = time.Hour
	r, fs, fk := newRunner(t)
	release := filepath.Join(t.TempDir(), "release")
	fk.Script(fakeclaude.Script{HoldUntil: release, Result: "DONE"})
	sid := uuid.NewString()
	type started struct {
		h   *headless.Run
		err error
	}
	ch := make(chan started, 1)
	go func() {
		h, err := r.StartSteerable(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Self: self})
		ch <- started{h, err}
	}()
	calls, _ := fk.WaitCalls(ctxT(t, 30*time.Second), "claude", 1)
	if len(calls) != 1 {
		t.Fatal("claude did not run")
	}
	select {
	case s := <-ch:
		t.Fatalf("StartSteerable returned before any doorman followed: %v", s.err)
	default:
	}
	// The fake claude plays the session: its registry row, its doorman.
	fs.AddSession(fakestation.Session{PID: calls[0].PID, SessionID: sid})
	dm := fakedoorman.Start(t, fs.Paths.InboxDir, sid, fakedoorman.Options{})
	var s started
	select {
	case s = <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("StartSteerable did not return within 30 s of the doorman following")
	}
	if s.err != nil || s.h.SessionID() != sid || s.h.File().State != headless.Started || s.h.File().PID == nil {
		t.Fatalf("StartSteerable = %+v, %v; want the started file of %s", s.h.File(), s.err, sid)
	}
	snd := claudeinbox.NewSender(r.Config)
	v, err := snd.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "steer", From: "test", ExpectStart: true})
	if err != nil || !v.Class.Delivered() {
		t.Fatalf("send right after: %s (%s) %v, want delivered-*", v.Class, v.Note, err)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := s.h.Wait(context.Background())
	if err != nil || res.Class != headless.Completed || res.File.Result == nil || *res.File.Result != "DONE" {
		t.Fatalf("Wait = %s %v (%+v), want completed DONE", res.Class, err, res.File)
	}
	dm.Stop()
	if f, err := r.ReadStartFile(res.File.ResultFile); err != nil || f.State != headless.Completed {
		t.Errorf("result file %s %v, want completed", f.State, err)
	}
}

// A run that ends before its doorman follows returns with ErrNotSteerable
// and its outcome; a start with no doorman at all is refused, as a
// detached one is.
func TestStartSteerableEndsFirst(t *testing.T) {
	r, _, fk := newRunner(t)
	fk.Script(fakeclaude.Script{Result: "quick"})
	h, err := r.StartSteerable(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: uuid.NewString(), Self: self})
	if !errors.Is(err, headless.ErrNotSteerable) || h == nil {
		t.Fatalf("err %v, want ErrNotSteerable", err)
	}
	if res, err := h.Wait(context.Background()); res.Class != headless.Completed || err != nil {
		t.Errorf("Wait = %s %v, want the completed outcome", res.Class, err)
	}
	for _, req := range []headless.StartRequest{
		{Prompt: "go", CWD: t.TempDir(), Self: self, Doorman: headless.DoormanNone},
		{Prompt: "go", CWD: t.TempDir(), Self: self, Doorman: headless.DoormanNone, Detach: true},
	} {
		h, err := r.StartSteerable(context.Background(), req)
		if !errors.Is(err, headless.ReasonBadDoorman) || h == nil {
			t.Errorf("no doorman (detach %v): err %v, want bad-doorman", req.Detach, err)
		}
	}
	if n := len(fk.Calls("claude")); n != 1 {
		t.Errorf("claude ran %d times, want 1", n)
	}
}
