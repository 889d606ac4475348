package fakewait

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestUntil: the condition is checked at each Notify (no poll), the wait
// ends with ctx's error or the closed error, and a Notify made while the
// condition is being checked is not lost.
func TestUntil(t *testing.T) {
	var s Signal
	var n atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- Until(context.Background(), &s, 0, nil, nil, func() bool { return n.Load() >= 3 })
	}()
	for range 3 {
		n.Add(1)
		s.Notify()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Until(ctx, &s, 0, nil, nil, func() bool { return false }); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v, want context.Canceled", err)
	}
	closed := make(chan struct{})
	close(closed)
	stopped := errors.New("stopped")
	if err := Until(context.Background(), nil, 0, closed, stopped, func() bool { return false }); err != stopped {
		t.Errorf("a closed wait: %v, want %v", err, stopped)
	}
	// A poll finds what no Signal announces.
	var m atomic.Int64
	go func() { m.Store(1) }()
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := Until(ctx, nil, time.Millisecond, nil, nil, func() bool { return m.Load() == 1 }); err != nil {
		t.Fatal(err)
	}
}
