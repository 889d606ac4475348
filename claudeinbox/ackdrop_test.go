package claudeinbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/internal/fsx"
)

// TestAckWaitDropsItsWaker: a send whose first look misses the ack arms a
// file watch for the wait, and drops it when the wait ends (the ack seen,
// or the wait over) instead of closing it: a close waits for the kernel
// to retire the watch, milliseconds the verdict, its receipt and the
// process's exit would wait too. No Waker is closed with Close during
// the send (fsx.WaitedCloses). Not parallel: it counts the process's
// Close calls.
func TestAckWaitDropsItsWaker(t *testing.T) {
	for _, tt := range []struct {
		name  string
		opts  fakedoorman.Options
		wait  time.Duration
		class claudeinbox.Class
	}{
		// No ack ever comes: the first look misses, the watch is armed.
		{"timeout", fakedoorman.Options{NoAck: true}, 100 * time.Millisecond, claudeinbox.Timeout},
		{"delivered late", fakedoorman.Options{AckDelay: 150 * time.Millisecond}, 30 * time.Second, claudeinbox.DeliveredSteer},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.sender.Wait = tt.wait
			r := w.session(t, "drop-e9")
			w.doorman(t, r.SessionID, tt.opts)
			before := fsx.WaitedCloses()
			v, err := w.sender.Send(context.Background(), line(r.SessionID, "hello"))
			if v.Class != tt.class || err != nil {
				t.Fatalf("class %s (%v), want %s", v.Class, err, tt.class)
			}
			if got := fsx.WaitedCloses() - before; got != 0 {
				t.Errorf("the send closed %d Wakers with Close (waiting for the kernel), want 0: the ack wait drops its Waker", got)
			}
		})
	}
}
