package hangup

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAwaitPipeReaderGone: Await returns nil as soon as the pipe's reader
// closes, without anything written.
func TestAwaitPipeReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	done := make(chan error, 1)
	go func() { done <- Await(context.Background(), w) }()
	r.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Await = %v, want nil", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Await did not return after the reader closed")
	}
}

// TestAwaitSocketPeerGone: a socket whose peer closes (ssh's channel
// without a tty) hangs up too.
func TestAwaitSocketPeerGone(t *testing.T) {
	a, b := socketPair(t)
	defer a.Close()
	done := make(chan error, 1)
	go func() { done <- Await(context.Background(), a) }()
	b.Close()
	if err := <-done; err != nil {
		t.Fatalf("Await = %v, want nil", err)
	}
}

// TestAwaitContext: with the reader still there, Await waits for ctx.
func TestAwaitContext(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Await(ctx, w) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Await = %v, want context.Canceled", err)
	}
	if err := Await(ctx, nil); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Await(nil) = %v", err)
	}
}

func socketPair(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: t.TempDir() + "/s", Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.DialUnix("unix", nil, l.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	fa, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	fb, err := s.File()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	s.Close()
	return fa, fb
}
