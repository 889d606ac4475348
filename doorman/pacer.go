package doorman

import (
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/ingress"
	"github.com/oo-family/oo-claude/internal/jsonrow"
)

// paceMargin is added to every computed wait so the receiver's own clock has
// surely moved past the limit.
const paceMargin = 50 * time.Millisecond

// pacer holds lines back to stay inside the receiver's ingress guard: it
// keeps the guard's table (internal/ingress, the model fakes/fakedoor uses
// too) as the receiver would have it after this doorman's deliveries.
type pacer struct {
	t   *ingress.Table
	pid int  // this doorman's pid: the receiver's key of a frame without from
	off bool // no pacing (tests that measure the loop alone)
}

func newPacer(g ingress.Guard, pid int, off bool) *pacer {
	return &pacer{t: ingress.NewTable(g), pid: pid, off: off}
}

func (p *pacer) guard() ingress.Guard { return p.t.Guard() }

// delay is how long the line (from, body) must wait before the guard takes
// it. body is anything that is equal for equal bodies (the doorman passes
// the line's sha256).
func (p *pacer) delay(from, body string, now time.Time) time.Duration {
	if p.off {
		return 0
	}
	d := p.t.Wait(ingress.Key(from, p.pid), body, now)
	if d > 0 {
		d += paceMargin
	}
	return d
}

// record notes that (from, body) was delivered at now.
func (p *pacer) record(from, body string, now time.Time) {
	if !p.off {
		p.t.Take(ingress.Key(from, p.pid), body, now)
	}
}

// drain notes that the receiver did not queue a line from the sender at
// now: its bucket is taken to be empty.
func (p *pacer) drain(from string, now time.Time) {
	if !p.off {
		p.t.Drain(ingress.Key(from, p.pid), now)
	}
}

// seed replays the deliveries of the recent acks, so a new doorman (a
// restart, a standby taking over, --once) starts with the buckets the
// receiver has, not full ones. Acks older than the receiver's memory (the
// duplicate window, or the time a bucket takes to refill) are left out. A
// delivery without from was keyed by the pid of the doorman that made it.
func (p *pacer) seed(acks []inboxv1.Ack, now time.Time) {
	if p.off {
		return
	}
	for _, a := range acks {
		if at, ok := p.recent(a, now); ok {
			p.t.Take(ingress.Key(a.From, a.DoormanPID), a.SHA256, at)
		}
	}
}

// recent reports whether a is a delivery the receiver still remembers at
// now, and when it was.
func (p *pacer) recent(a inboxv1.Ack, now time.Time) (time.Time, bool) {
	if p.off || (a.Class != inboxv1.AckDeliveredSteer && a.Class != inboxv1.AckDeliveredStart) {
		return time.Time{}, false
	}
	at, err := jsonrow.ParseTime(a.TS)
	if err != nil || now.Sub(at) > p.t.Guard().Memory() || at.After(now) {
		return time.Time{}, false
	}
	return at, true
}
