package doorman

import (
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
)

// Guard describes the receiver's ingress guard the doorman stays inside.
// Zero fields take the values measured on Claude Code 2.1.332.
type Guard struct {
	Capacity        float64       // token bucket per sender; 30
	RefillPerSecond float64       // 0.5
	DedupWindow     time.Duration // an identical body from the same sender within it is dropped; 30 s
	// Off turns pacing off (tests that measure the loop alone).
	Off bool
}

// Measured ingress guard.
const (
	GuardCapacity = 30
	GuardRefill   = 0.5
	GuardDedup    = 30 * time.Second
)

// paceMargin is added to every computed wait so the receiver's own clock has
// surely moved past the limit.
const paceMargin = 50 * time.Millisecond

type sender struct {
	tokens   float64
	refilled time.Time
	lastBody string
	lastAt   time.Time
}

// pacer models the guard per sender key (the frame's from).
type pacer struct {
	g       Guard
	senders map[string]*sender
}

func newPacer(g Guard) *pacer {
	if g.Capacity == 0 {
		g.Capacity = GuardCapacity
	}
	if g.RefillPerSecond == 0 {
		g.RefillPerSecond = GuardRefill
	}
	if g.DedupWindow == 0 {
		g.DedupWindow = GuardDedup
	}
	return &pacer{g: g, senders: map[string]*sender{}}
}

func (p *pacer) get(from string, now time.Time) *sender {
	s := p.senders[from]
	if s == nil {
		s = &sender{tokens: p.g.Capacity, refilled: now}
		p.senders[from] = s
	}
	if el := now.Sub(s.refilled); el > 0 {
		s.tokens = min(p.g.Capacity, s.tokens+el.Seconds()*p.g.RefillPerSecond)
		s.refilled = now
	}
	return s
}

// delay is how long the line (from, body) must wait before the guard takes
// it. body is anything that is equal for equal bodies (the doorman passes
// the line's sha256).
func (p *pacer) delay(from, body string, now time.Time) time.Duration {
	if p.g.Off {
		return 0
	}
	s := p.get(from, now)
	var d time.Duration
	if s.tokens < 1 {
		d = time.Duration((1 - s.tokens) / p.g.RefillPerSecond * float64(time.Second))
	}
	if s.lastBody == body && !s.lastAt.IsZero() {
		if until := s.lastAt.Add(p.g.DedupWindow).Sub(now); until > d {
			d = until
		}
	}
	if d > 0 {
		d += paceMargin
	}
	return d
}

// record notes that (from, body) was delivered at now.
func (p *pacer) record(from, body string, now time.Time) {
	if p.g.Off {
		return
	}
	s := p.get(from, now)
	s.tokens--
	s.lastBody, s.lastAt = body, now
	// Forget senders that are full again and out of the window.
	if len(p.senders) > 1024 {
		for k, x := range p.senders {
			if now.Sub(x.lastAt) > p.g.DedupWindow && now.Sub(x.refilled).Seconds()*p.g.RefillPerSecond+x.tokens >= p.g.Capacity {
				delete(p.senders, k)
			}
		}
	}
}

// drain notes that the receiver did not queue a line from the sender at
// now: its bucket is taken to be empty.
func (p *pacer) drain(from string, now time.Time) {
	if p.g.Off {
		return
	}
	s := p.get(from, now)
	s.tokens = 0
}

// seed replays the deliveries of the recent acks, so a new doorman (a
// restart, a standby taking over, --once) starts with the buckets the
// receiver has, not full ones. Acks older than the receiver's memory (the
// duplicate window, or the time a bucket takes to refill) are left out.
func (p *pacer) seed(acks []claudeinbox.Ack, now time.Time) {
	if p.g.Off {
		return
	}
	for _, a := range acks {
		if at, ok := p.recent(a, now); ok {
			p.record(a.From, a.SHA256, at)
		}
	}
}

// recent reports whether a is a delivery the receiver still remembers at
// now (within the duplicate window, or the time a bucket takes to refill),
// and when it was.
func (p *pacer) recent(a claudeinbox.Ack, now time.Time) (time.Time, bool) {
	if p.g.Off || (a.Class != claudeinbox.AckDeliveredSteer && a.Class != claudeinbox.AckDeliveredStart) {
		return time.Time{}, false
	}
	memory := max(p.g.DedupWindow, time.Duration(p.g.Capacity/p.g.RefillPerSecond*float64(time.Second)))
	at, err := claudeinbox.ParseTime(a.TS)
	if err != nil || now.Sub(at) > memory || at.After(now) {
		return time.Time{}, false
	}
	return at, true
}
