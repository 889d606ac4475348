package claudeinbox_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
)

// TestNext: every class (and the refusals whose reason changes the step)
// has its one next step.
func TestNext(t *testing.T) {
	tests := []struct {
		class  claudeinbox.Class
		reason inboxv1.Reason
		want   claudeinbox.Next
		name   string
	}{
		{claudeinbox.DeliveredSteer, "", claudeinbox.NextDone, "done"},
		{claudeinbox.DeliveredStart, "", claudeinbox.NextDone, "done"},
		{claudeinbox.QueuedNoDoorman, inboxv1.ReasonHeartbeatStale, claudeinbox.NextWait, "wait"},
		{claudeinbox.QueuedOffline, "", claudeinbox.NextWait, "wait"},
		{claudeinbox.Timeout, "", claudeinbox.NextWait, "wait"},
		{claudeinbox.Interrupted, "", claudeinbox.NextWait, "wait"},
		{claudeinbox.Dropped, inboxv1.ReasonThrottled, claudeinbox.NextRetryAfter, "retry-after"},
		{claudeinbox.Refused, inboxv1.ReasonNewline, claudeinbox.NextRefused, "refused"},
		{claudeinbox.Refused, inboxv1.ReasonReceiverDidNotQueue, claudeinbox.NextRefused, "refused"},
		{claudeinbox.Refused, inboxv1.ReasonBadOption, claudeinbox.NextRefused, "refused"},
		{claudeinbox.Refused, inboxv1.ReasonCanceled, claudeinbox.NextCanceled, "canceled"},
		{claudeinbox.Refused, inboxv1.ReasonIO, claudeinbox.NextFailed, "failed"},
		{"a-later-class", "", claudeinbox.NextFailed, "failed"},
	}
	for _, tt := range tests {
		v := claudeinbox.Verdict{Class: tt.class, Reason: tt.reason}
		if got := v.Next(); got != tt.want || got.String() != tt.name {
			t.Errorf("%s %s: Next() = %v, want %v", tt.class, tt.reason, got, tt.name)
		}
	}
}

// TestWaitsPerCall: a request's Waits replace the Sender's for that call
// only; the Sender is not changed and a bad per-call wait is refused as a
// bad Sender field is.
func TestWaitsPerCall(t *testing.T) {
	w := newWorld(t)
	w.sender.Wait = time.Minute
	r := w.session(t, "work-w1")
	w.doorman(t, r.SessionID, fakedoorman.Options{NoAck: true})
	ws := w.sender.Waits()
	ws.Ack = 0 // look once, do not wait
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := w.sender.Send(ctx, claudeinbox.Request{Target: r.SessionID, Line: "x", Waits: &ws})
	if err != nil || v.Class != claudeinbox.Timeout || v.Wait != 0 {
		t.Fatalf("%s wait %v %v, want a timeout of the call's wait 0 (not the Sender's minute)", v.Class, v.Wait, err)
	}
	if w.sender.Wait != time.Minute {
		t.Errorf("the Sender's Wait is %v after the call, want it unchanged", w.sender.Wait)
	}
	for _, bad := range []claudeinbox.Waits{{Ack: -1}, {Seen: time.Second}, {Reply: time.Second}} {
		v, err := w.sender.Send(ctx, claudeinbox.Request{Target: r.SessionID, Line: "y", Waits: &bad})
		if !errors.Is(err, claudeinbox.ErrBadOption) || v.Reason != inboxv1.ReasonBadOption || v.Written {
			t.Errorf("waits %+v without a Witness: %s %s %v, want refused bad-option", bad, v.Class, v.Reason, err)
		}
	}
}

// TestTimeoutSaysThePendingReason: the doorman's last error is a typed
// field of the verdict and its receipt row, not only words in the note.
func TestTimeoutSaysThePendingReason(t *testing.T) {
	w := newWorld(t)
	w.sender.Wait = 100 * time.Millisecond
	r := w.session(t, "work-p1")
	why := string(inboxv1.ReasonReceiverDidNotQueue) + ": no enqueue row for the line at offset 0 within 2s of write 1 of 3"
	w.doorman(t, r.SessionID, fakedoorman.Options{NoAck: true, LastError: why})
	v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: "x"})
	if err != nil || v.Class != claudeinbox.Timeout || v.Doorman == nil {
		t.Fatalf("%s %v, want a timeout with the doorman's status", v.Class, err)
	}
	if v.Doorman.LastError != why || v.Doorman.Pending != inboxv1.ReasonReceiverDidNotQueue || v.Next() != claudeinbox.NextWait {
		t.Errorf("doorman last error %q pending %q next %v, want %q, %q, wait", v.Doorman.LastError, v.Doorman.Pending, v.Next(), why, inboxv1.ReasonReceiverDidNotQueue)
	}
	row := v.Row()
	if row.Doorman == nil || row.Doorman.LastError == nil || *row.Doorman.LastError != why || row.Doorman.Pending == nil || *row.Doorman.Pending != string(inboxv1.ReasonReceiverDidNotQueue) {
		t.Errorf("receipt doorman %+v lacks last_error and pending", row.Doorman)
	}
}

// TestSendRetry: a dropped line is sent again once the throttle admits
// it; a ctx that ends during the wait returns the dropped verdict and
// writes nothing more.
func TestSendRetry(t *testing.T) {
	w := newWorld(t)
	w.sender.MinInterval = 300 * time.Millisecond
	r := w.session(t, "work-r1")
	w.doorman(t, r.SessionID, fakedoorman.Options{})
	ctx := context.Background()
	if v, err := w.sender.Send(ctx, claudeinbox.Request{Target: r.SessionID, Line: "one"}); err != nil || !v.Class.Delivered() {
		t.Fatalf("first: %s %v", v.Class, err)
	}
	v, err := w.sender.SendRetry(ctx, claudeinbox.Request{Target: r.SessionID, Line: "two"})
	if err != nil || !v.Class.Delivered() || v.Next() != claudeinbox.NextDone {
		t.Fatalf("retry: %s %v, want delivered after the throttle's wait", v.Class, err)
	}

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.sender.MinInterval = time.Hour
	drops := func() int {
		b, _ := os.ReadFile(w.fs.Paths.ReceiptsFile())
		return strings.Count(string(b), `"class":"dropped"`)
	}
	before := drops() // the retry of "two" may have been dropped once already
	done := make(chan struct{})
	go func() {
		// End the wait once this line's drop receipt row is written:
		// SendRetry then waits out the hour-long interval.
		defer close(done)
		for cctx.Err() == nil {
			if drops() > before {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	v, err = w.sender.SendRetry(cctx, claudeinbox.Request{Target: r.SessionID, Line: "three"})
	if !errors.Is(err, context.Canceled) || v.Class != claudeinbox.Dropped || v.Written {
		t.Errorf("cancelled retry: %s written %v %v, want the dropped verdict and ctx's error", v.Class, v.Written, err)
	}
	<-done
}

// TestFullIDResolvesToTheDoormansOwner: a full id whose doorman's
// heartbeat names its claude process resolves to that process's row (the
// one row read, not the registry), even when a newer live row names the
// same session: the line goes to the owner's door.
func TestFullIDResolvesToTheDoormansOwner(t *testing.T) {
	w := newWorld(t)
	owner := w.fs.AddSession(fakestation.Session{PID: os.Getpid(), Name: "owner-o1", StartedAt: time.Now().Add(-time.Hour)})
	other := w.fs.AddSession(fakestation.Session{SessionID: owner.SessionID, Name: "newer-o2"})
	w.doorman(t, owner.SessionID, fakedoorman.Options{}) // its heartbeat's owner_pid is this process
	v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: strings.ToUpper(owner.SessionID), Line: "x"})
	if err != nil || !v.Class.Delivered() {
		t.Fatalf("%s %v", v.Class, err)
	}
	if v.PID != owner.PID || v.Name != owner.Name || v.SessionID != owner.SessionID {
		t.Errorf("resolved to pid %d %q, want the doorman's owner %d %q (not the newer row %d)", v.PID, v.Name, owner.PID, owner.Name, other.PID)
	}
}
