package fsx

import (
	"sync"
	"time"
)

// Ticker sends the time on C once an interval, like a time.Ticker (a
// tick nobody took is dropped, not queued), for a process that is
// otherwise asleep. On Linux it is a timerfd in the runtime's poller, not
// a runtime timer: a runtime timer's due time wakes the runtime's
// monitor thread (sysmon) on the dot, while the poller, sleeping in
// epoll_wait, is woken by the kernel up to 0.1% of the timeout later (its
// slack: 5 ms for 5 s), and the monitor spins in 20 µs sleeps for the
// overdue timer until then. A timerfd wakes the poller itself, and the
// monitor stays asleep until the woken goroutine's first system call.
// Elsewhere, and where a timerfd cannot be made, it is a time.Ticker.
// Stop it when done.
type Ticker struct {
	C <-chan time.Time

	stop func()
	once sync.Once
}

// NewTicker returns a Ticker whose first tick comes every after now, and
// one every after that. every must be above 0.
func NewTicker(every time.Duration) *Ticker {
	if t := newTimerfdTicker(every); t != nil {
		return t
	}
	tt := time.NewTicker(every)
	return &Ticker{C: tt.C, stop: tt.Stop}
}

// Stop ends the ticks: none is sent after Stop returns. C is not closed.
// Stop may be called more than once.
func (t *Ticker) Stop() {
	t.once.Do(t.stop)
}
