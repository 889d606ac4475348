// Package ingress is the one model of a Claude Code session's ingress
// guard: what the receiver behind the door does with a user frame before
// the model sees it. Per sender key (the frame's from, or the peer pid when
// from is absent or "unknown") an identical body within the duplicate
// window is dropped, and a token bucket (refilled continuously, capped at
// its capacity) drops a frame that finds it below one token.
//
// The doorman's pacer asks [Table.Wait] how long a line must be held so the
// guard takes it; fakes/fakedoor asks [Table.Admit] what the guard does with
// a frame. Both read the same table, so the pacer and the fake cannot drift.
package ingress

import (
	"strconv"
	"time"
)

// The guard's parameters as measured (see COMPATIBILITY.md).
const (
	DefaultCapacity    = 30
	DefaultRefill      = 0.5 // tokens per second
	DefaultDedupWindow = 30 * time.Second
)

// Guard is the guard's parameters. Zero fields take the defaults.
type Guard struct {
	Capacity        float64       // the bucket per sender
	RefillPerSecond float64       // its refill
	DedupWindow     time.Duration // an identical body from the same sender within it is dropped
}

// WithDefaults returns g with its zero fields set to the defaults.
func (g Guard) WithDefaults() Guard {
	if g.Capacity <= 0 {
		g.Capacity = DefaultCapacity
	}
	if g.RefillPerSecond <= 0 {
		g.RefillPerSecond = DefaultRefill
	}
	if g.DedupWindow <= 0 {
		g.DedupWindow = DefaultDedupWindow
	}
	return g
}

// Memory is how long the receiver remembers a delivery: the duplicate
// window, or the time an empty bucket takes to fill, whichever is longer.
func (g Guard) Memory() time.Duration {
	g = g.WithDefaults()
	return max(g.DedupWindow, time.Duration(g.Capacity/g.RefillPerSecond*float64(time.Second)))
}

// Key is the receiver's sender key of a frame: its from, or the writer's
// pid (SO_PEERCRED) when from is absent ("") or "unknown", the receiver's
// default.
func Key(from string, peerPID int) string {
	if from == "" || from == "unknown" {
		return "pid:" + strconv.Itoa(peerPID)
	}
	return "from:" + from
}

// Verdict is what the guard does with a frame.
type Verdict int

const (
	Admitted    Verdict = iota // the session takes it
	Duplicate                  // an identical body from the same sender within the window
	RateLimited                // the sender's bucket is below one token
)

type sender struct {
	tokens   float64
	refilled time.Time
	lastBody string
	lastAt   time.Time // zero: no body yet
}

// maxSenders is how many senders a Table keeps before it forgets those the
// receiver no longer remembers either.
const maxSenders = 1024

// Table is the guard's state per sender. The zero Table is not usable;
// make one with [NewTable]. It is not safe for concurrent use.
type Table struct {
	g       Guard
	senders map[string]*sender
}

// NewTable returns an empty table for g (zero fields take the defaults).
func NewTable(g Guard) *Table {
	return &Table{g: g.WithDefaults(), senders: map[string]*sender{}}
}

// Guard returns the table's parameters, defaults filled in.
func (t *Table) Guard() Guard { return t.g }

// get returns key's sender, its bucket refilled up to now (a clock that
// went back refills nothing).
func (t *Table) get(key string, now time.Time) *sender {
	s := t.senders[key]
	if s == nil {
		s = &sender{tokens: t.g.Capacity, refilled: now}
		t.senders[key] = s
	}
	if el := now.Sub(s.refilled); el > 0 {
		s.tokens = min(t.g.Capacity, s.tokens+el.Seconds()*t.g.RefillPerSecond)
		s.refilled = now
	}
	return s
}

// check says what the guard does with (key, body) at now and, when it
// drops it, how long until it would not.
func (t *Table) check(s *sender, body string, now time.Time) (Verdict, time.Duration) {
	v, wait := Admitted, time.Duration(0)
	if !s.lastAt.IsZero() && s.lastBody == body {
		if until := s.lastAt.Add(t.g.DedupWindow).Sub(now); until > 0 {
			v, wait = Duplicate, until
		}
	}
	if s.tokens < 1 {
		if v == Admitted {
			v = RateLimited
		}
		wait = max(wait, time.Duration((1-s.tokens)/t.g.RefillPerSecond*float64(time.Second)))
	}
	return v, wait
}

// Admit is the guard at work: it says what the receiver does with a frame
// of body from key at now, and takes a token and remembers the body when
// it admits it.
func (t *Table) Admit(key, body string, now time.Time) Verdict {
	s := t.get(key, now)
	v, _ := t.check(s, body, now)
	if v == Admitted {
		t.take(s, body, now)
	}
	return v
}

// Wait is how long from now a frame of body from key must wait so that
// [Table.Admit] admits it: zero when it would now.
func (t *Table) Wait(key, body string, now time.Time) time.Duration {
	_, wait := t.check(t.get(key, now), body, now)
	return wait
}

// Take records that the receiver took a frame of body from key at now:
// one token less (a bucket may go below zero when deliveries are replayed
// from records), body remembered.
func (t *Table) Take(key, body string, now time.Time) {
	t.take(t.get(key, now), body, now)
	if len(t.senders) > maxSenders {
		for k, x := range t.senders {
			full := now.Sub(x.refilled).Seconds()*t.g.RefillPerSecond+x.tokens >= t.g.Capacity
			if now.Sub(x.lastAt) > t.g.DedupWindow && full {
				delete(t.senders, k)
			}
		}
	}
}

func (t *Table) take(s *sender, body string, now time.Time) {
	s.tokens--
	s.lastBody, s.lastAt = body, now
}

// Drain empties key's bucket at now: what the doorman assumes when the
// receiver did not take a frame it was written.
func (t *Table) Drain(key string, now time.Time) {
	t.get(key, now).tokens = 0
}
