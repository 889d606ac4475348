package fleet

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestSilentStation: a host that accepts the connection and never speaks
// is ssh's failure within the connect timeout, not a call that waits for
// good (the real ssh client; the timeout shortened to 1 s).
func TestSilentStation(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh client:", err)
	}
	defer func(d time.Duration) { connectTimeout = d }(connectTimeout)
	connectTimeout = time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan []net.Conn, 1)
	go func() {
		var conns []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				held <- conns
				return
			}
			conns = append(conns, c) // held open, never a word
		}
	}()
	defer func() {
		l.Close()
		for _, c := range <-held {
			c.Close()
		}
	}()
	h := Host{Dest: "ssh://127.0.0.1:" + strings.TrimPrefix(l.Addr().String(), "127.0.0.1:"), SSH: []string{"ssh", "-F", "/dev/null"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err = h.Run(ctx, []string{"sessions", "--json"}, nil)
	if !errors.Is(err, ErrSSH) || ctx.Err() != nil || time.Since(start) > 15*time.Second {
		t.Errorf("a silent host: %v after %v, want ssh's failure within the connect timeout", err, time.Since(start))
	}
}
