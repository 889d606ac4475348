// Package fakewait is the one wait of the fakes: a [Signal] a fake fires
// when what its callers wait for may have changed (a frame recorded, an
// ack written, a request served), and [Until], which checks the caller's
// condition at each firing until it holds or the wait ends. Every Wait
// method of the fakes (fakedoor's WaitFrames, fakedoorman's WaitAcked,
// fakemodel's WaitRequest, fakeowner's WaitAcks, fakeclaude's WaitCalls, …)
// is written with it, so each takes a context and none sleeps between looks
// at what its own process writes.
package fakewait

import (
	"context"
	"sync"
	"time"
)

// Signal wakes the waiters of [Until]. Its zero value is ready to use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// Notify wakes every waiter, which then checks its condition again.
func (s *Signal) Notify() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
	}
	s.ch = make(chan struct{})
}

// next is the channel the next Notify closes.
func (s *Signal) next() <-chan struct{} {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Until returns nil once ok returns true. It calls ok at once and again at
// every Notify of s (nil: never), and every poll when poll is positive (for
// files that other processes write, which no Signal of this process sees).
// It returns ctx.Err() when ctx ends first, and closedErr when closed is
// closed first (a fake that stopped). A Notify between a look and the wait
// is never missed: the wait takes the signal's channel before it looks.
func Until(ctx context.Context, s *Signal, poll time.Duration, closed <-chan struct{}, closedErr error, ok func() bool) error {
	var tick <-chan time.Time
	if poll > 0 {
		t := time.NewTicker(poll)
		defer t.Stop()
		tick = t.C
	}
	for {
		ch := s.next()
		if ok() {
			return nil
		}
		select {
		case <-ch:
		case <-tick:
		case <-ctx.Done():
			return ctx.Err()
		case <-closed:
			if ok() {
				return nil
			}
			return closedErr
		}
	}
}
