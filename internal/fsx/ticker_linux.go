package fsx

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// newTimerfdTicker is a Ticker on a timerfd (CLOCK_MONOTONIC), read by one
// goroutine through the runtime's poller; nil when no timerfd can be made.
func newTimerfdTicker(every time.Duration) *Ticker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	ts := unix.NsecToTimespec(every.Nanoseconds())
	if err := unix.TimerfdSettime(fd, 0, &unix.ItimerSpec{Interval: ts, Value: ts}, nil); err != nil {
		unix.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "timerfd") // non-blocking: in the poller
	c := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var n [8]byte // the expirations since the last read
		for {
			if _, err := f.Read(n[:]); err != nil {
				return // closed by Stop
			}
			select {
			case c <- time.Now():
			default:
			}
		}
	}()
	return &Ticker{C: c, stop: func() {
		f.Close()
		<-done
	}}
}
