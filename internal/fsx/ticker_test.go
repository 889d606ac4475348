package fsx_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/hostile"
)

// TestTickerTicks: a Ticker ticks once an interval; after Stop nothing is
// sent (its reader is gone: Stop waits for it) and a second Stop is a
// no-op.
func TestTickerTicks(t *testing.T) {
	const every = 10 * time.Millisecond
	tk := fsx.NewTicker(every)
	start := time.Now()
	backstop := time.After(time.Minute)
	var last time.Time
	for i := range 3 {
		select {
		case last = <-tk.C:
		case <-backstop:
			t.Fatalf("tick %d never came", i+1)
		}
	}
	if el := last.Sub(start); el < 3*every-time.Millisecond {
		t.Errorf("3 ticks of %v in %v: faster than the interval", every, el)
	}
	tk.Stop()
	tk.Stop()
	select { // at most the one tick sent before Stop
	case <-tk.C:
	default:
	}
	if n := len(tk.C); n != 0 {
		t.Errorf("%d ticks after Stop", n)
	}
}

// TestTickerIsATimerfd: on Linux a Ticker is a timerfd (no runtime timer,
// whose due time wakes the runtime's monitor thread, which then spins for
// the poller's late wake-up); Stop closes it.
func TestTickerIsATimerfd(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("timerfd is Linux's")
	}
	before := hostile.OpenFDs(t, hostile.TimerFD)
	tk := fsx.NewTicker(time.Hour)
	if n := hostile.OpenFDs(t, hostile.TimerFD); n != before+1 {
		t.Errorf("%d timerfds open with a Ticker, %d before: want one more", n, before)
	}
	tk.Stop()
	if n := hostile.OpenFDs(t, hostile.TimerFD); n != before {
		t.Errorf("%d timerfds open after Stop, %d before", n, before)
	}
}
