package doorman_test

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/inboxv1"
)

// fakeClock is the doorman's clock and timer seam: every After call is
// handed to the test, which fires it (moving the clock on) or lets it be.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers chan fakeTimer
}

type fakeTimer struct {
	d time.Duration
	c chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), timers: make(chan fakeTimer, 1024)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	t := fakeTimer{d: d, c: make(chan time.Time, 1)}
	c.timers <- t
	return t.c
}

// fire moves the clock on by t's duration and fires it.
func (c *fakeClock) fire(t fakeTimer) {
	c.mu.Lock()
	c.now = c.now.Add(t.d)
	now := c.now
	c.mu.Unlock()
	t.c <- now
}

// failingDoor fails its first n deliveries as a refused dial does, then
// delivers through Door.
type failingDoor struct {
	mu     sync.Mutex
	n      int
	failed int
	doorman.Door
}

func (f *failingDoor) Deliver(ctx context.Context, socket string, expect int, m door.Message, settle bool) (int, error) {
	f.mu.Lock()
	if f.failed < f.n {
		f.failed++
		f.mu.Unlock()
		return 0, &door.OpError{Op: "dial", Socket: socket, Err: syscall.ECONNREFUSED}
	}
	f.mu.Unlock()
	return f.Door.Deliver(ctx, socket, expect, m, settle)
}

// TestFailedDeliveryBacksOff: a delivery that keeps failing is retried
// after 1, 2, 4, 8 and then 10 s (v0.1's backoff, 1 -> 10 s) on the
// doorman's clock, the line stays pending with no ack while it fails, and
// the first success writes exactly one ack. All on a fake clock: the test
// waits for no timer.
func TestFailedDeliveryBacksOff(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	clk := newFakeClock()
	w.clock = clk.Now
	stub := &stubDoor{peer: w.me}
	fd := &failingDoor{n: 6, Door: stub}
	cfg := w.config()
	cfg.DoorConfirm = 0 // acks rest on the settle: no transcript follow in real time
	cfg.DoormanHeartbeat = time.Hour
	cfg.DoormanPoll = time.Hour
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	w.appendLine(sid, "[a 📡] retried until the door takes it")
	dm, log, stop := w.running(doorman.Options{Host: w.host(fd), Config: cfg, After: clk.After})
	defer stop()

	var waits []time.Duration
	deadline := time.After(30 * time.Second)
	for len(waits) < fd.n {
		var tm fakeTimer
		select {
		case tm = <-clk.timers:
		case <-deadline:
			t.Fatalf("backoffs so far %v; log:\n%s", waits, log)
		}
		if tm.d >= time.Hour {
			continue // the heartbeat and the safety poll: never fired
		}
		if a := readAcks(t, files.Ack); len(a) != 0 {
			t.Fatalf("after %d failed deliveries: %d acks, want none (the line waits)", len(waits), len(a))
		}
		if st := dm.Status(); st.Offset != 0 || st.LastError == "" {
			t.Fatalf("after %d failures: offset %d, last_error %q; want 0 and the failure", len(waits), st.Offset, st.LastError)
		}
		waits = append(waits, tm.d)
		clk.fire(tm)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
	if want[0] != doorman.BackoffMin || want[len(want)-1] != doorman.BackoffMax {
		t.Errorf("the bounds are %v and %v", doorman.BackoffMin, doorman.BackoffMax)
	}
	acks := w.waitAcks(sid, 1)
	stop()
	if len(acks) != 1 || acks[0].Class != inboxv1.AckDeliveredSteer || acks[0].Confirm != inboxv1.ConfirmSettle {
		t.Fatalf("acks %+v, want one delivered-steer (confirm settle)", acks)
	}
	stub.mu.Lock()
	n := len(stub.delivered)
	stub.mu.Unlock()
	if n != 1 || fd.failed != fd.n {
		t.Errorf("%d deliveries after %d failures, want 1 after %d", n, fd.failed, fd.n)
	}
	if st := dm.Status(); st.Delivered != 1 || st.LastError != "" {
		t.Errorf("status delivered %d, last_error %q; want 1 and none", st.Delivered, st.LastError)
	}
}
