package fakeowner_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakeowner"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
	"go.uber.org/goleak"
)

// TestMain lets the test binary play the doorman child the owner starts.
func TestMain(m *testing.M) {
	if os.Getenv("FAKEOWNER_TEST_DOORMAN") == "1" {
		os.Exit(runDoorman())
	}
	goleak.VerifyTestMain(m)
}

func runDoorman() int {
	cfg, err := station.ConfigFromEnv(os.Getenv)
	if err != nil {
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dm := doorman.New(doorman.Options{Host: doorman.ThisProcess(cfg, os.Getenv), Config: cfg, Mode: doorman.ModeMCP, Once: true, Log: os.Stderr})
	if err := dm.Run(ctx); err != nil {
		return 3
	}
	return 0
}

// TestOwnerIsTheSession: the real doorman, started by the owner as its
// child with the owner's environment, finds the test process as its
// session and delivers through the owner's door with the test's token.
func TestOwnerIsTheSession(t *testing.T) {
	o := fakeowner.New(t, fakeowner.Options{Status: station.StatusIdle})
	off := o.Append("[t 📡] hello owner")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(o.Env(), "FAKEOWNER_TEST_DOORMAN=1")
	child := o.Start(cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code, err := child.Wait(ctx)
	if err != nil || code != 0 {
		t.Fatalf("doorman exit %d, %v\n%s", code, err, child.Stderr())
	}
	acks := o.Acks()
	if len(acks) != 1 || !acks[0].Matches(inbox.SHA256([]byte("[t 📡] hello owner")), off) || acks[0].Class != inboxv1.AckDeliveredStart {
		t.Fatalf("acks = %+v, want one delivered-start for offset %d", acks, off)
	}
	var user, auth int
	for _, f := range o.Door.Frames() {
		switch f.Type {
		case "user":
			user++
			if f.PeerPID != child.PID() || f.MsgID != acks[0].MsgID || f.SessionID != o.SessionID() {
				t.Errorf("frame from pid %d msg_id %s session %s; want the doorman %d, %s, %s", f.PeerPID, f.MsgID, f.SessionID, child.PID(), acks[0].MsgID, o.SessionID())
			}
		case "auth":
			auth++
			if f.Token.Reveal() != fakeowner.Token {
				t.Error("auth frame does not carry the owner's token")
			}
		}
	}
	if user != 1 || auth != 1 {
		t.Errorf("%d user and %d auth frames, want 1 and 1", user, auth)
	}
}

// TestOwnerNotFromNew: an Owner not made by New (the zero value)
// is no session: Start starts nothing, the waits return an error at once,
// writes do nothing; a Child not from Start has no process.
func TestOwnerNotFromNew(t *testing.T) {
	for name, o := range map[string]*fakeowner.Owner{"zero": {}} {
		t.Run(name, func(t *testing.T) {
			if c := o.Start(exec.Command("true")); c != nil {
				t.Errorf("Start = %v, want nil", c)
			}
			if _, err := o.WaitAcks(context.Background(), 1); err == nil {
				t.Error("WaitAcks: no error")
			}
			if _, err := o.WaitHeartbeat(context.Background(), nil); err == nil {
				t.Error("WaitHeartbeat: no error")
			}
			if off := o.Append("x\n"); off != 0 || o.Acks() != nil || o.Env() != nil || o.Files() != (inboxv1.Files{}) {
				t.Errorf("Append %d, Acks %v, Env %v, Files %+v; want none", off, o.Acks(), o.Env(), o.Files())
			}
		})
	}
	for name, c := range map[string]*fakeowner.Child{"zero": {}} {
		t.Run("child "+name, func(t *testing.T) {
			if _, err := c.Wait(context.Background()); err == nil {
				t.Error("Wait: no error")
			}
			if err := c.Signal(os.Interrupt); err == nil {
				t.Error("Signal: no error")
			}
			select {
			case <-c.Done():
			default:
				t.Error("Done is not closed")
			}
			if c.PID() != 0 {
				t.Errorf("PID = %d, want 0", c.PID())
			}
		})
	}
}
