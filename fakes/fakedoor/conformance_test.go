package fakedoor_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakedoor"
)

// conformance are the rules a writer can observe from its side of the
// socket. They run against the fake always, and against a real Claude Code
// door when OO_CLAUDE_E2E_CLAUDE names a claude binary, so the fake
// cannot drift from the real thing unnoticed.
var conformance = []struct {
	rule   string
	write  []string
	closeW bool // half-close after writing
	closed bool // the server closes the connection
}{
	{rule: "a valid auth and user frame: kept open, nothing written back",
		write: []string{`{"type":"auth","token":"0"}` + "\n" + user("conformance a") + "\n"}},
	{rule: "blank and unparseable lines: the connection continues",
		write: []string{"\n \r\n", "not json\n", user("conformance b") + "\n"}},
	{rule: "a frame split over writes: kept open",
		write: []string{user("conformance c")[:7], user("conformance c")[7:] + "\n"}},
	{rule: "a session_id that differs: dropped, the connection is kept",
		write: []string{strings.Replace(user("conformance d"), sid, other, 1) + "\n"}},
	{rule: "more than 1,048,576 characters buffered: the server closes",
		write: []string{strings.Repeat("x", fakedoor.MaxBuffer+1)}, closed: true},
	{rule: "at half-close the server closes too",
		write: []string{user("conformance e")}, closeW: true, closed: true},
}

// door is a listener under test and the pid that must listen there.
type doorUnderTest struct {
	path string
	pid  int
}

func TestConformance(t *testing.T) {
	doors := map[string]func(t *testing.T) doorUnderTest{
		"fake": func(t *testing.T) doorUnderTest {
			return doorUnderTest{fakedoor.New(t).Path(), os.Getpid()}
		},
	}
	if bin := os.Getenv("OO_CLAUDE_E2E_CLAUDE"); bin != "" {
		doors["real"] = func(t *testing.T) doorUnderTest { return realDoor(t, bin) }
	} else {
		t.Log("OO_CLAUDE_E2E_CLAUDE unset: checking the fake only")
	}
	for name, start := range doors {
		t.Run(name, func(t *testing.T) {
			d := start(t)
			for _, tt := range conformance {
				t.Run(tt.rule, func(t *testing.T) {
					c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: d.path, Net: "unix"})
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					if pid := peerPIDOf(t, c); pid != d.pid {
						t.Fatalf("listener pid %d, want %d", pid, d.pid)
					}
					for _, w := range tt.write {
						if _, err := c.Write([]byte(w)); err != nil {
							t.Fatal(err)
						}
					}
					if tt.closeW {
						c.CloseWrite()
					}
					wait := 300 * time.Millisecond
					if tt.closed {
						wait = 10 * time.Second
					}
					c.SetReadDeadline(time.Now().Add(wait))
					n, err := c.Read(make([]byte, 1))
					if n != 0 {
						t.Fatalf("the server wrote a byte")
					}
					gotClosed := !errors.Is(err, os.ErrDeadlineExceeded)
					if gotClosed != tt.closed {
						t.Errorf("closed by the server: %v (%v), want %v", gotClosed, err, tt.closed)
					}
				})
			}
		})
	}
}

// realDoor starts the claude binary headless with its API pointed at a
// listener that never answers, so the session stays up with its door open
// until the test ends.
func realDoor(t *testing.T, bin string) doorUnderTest {
	t.Helper()
	api, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := api.Accept()
			if err != nil {
				close(held)
				return
			}
			held <- c // keep it open, never answer
		}
	}()
	home := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-p", "conformance", "--output-format", "json", "--model", "claude-haiku-5-5")
	cmd.Dir = home
	// SIGTERM lets claude remove its socket, row and key; SIGKILL would not.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = []string{
		"HOME=" + home, "PATH=/usr/bin:/bin", "TMPDIR=" + os.TempDir(),
		"ANTHROPIC_BASE_URL=http://" + api.Addr().String(), "ANTHROPIC_API_KEY=sk-ant-test",
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	if err := cmd.Start(); err != nil {
		cancel()
		api.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		api.Close()
		for c := range held {
			c.Close()
		}
	})
	row := filepath.Join(home, ".claude", "sessions", strconv.Itoa(cmd.Process.Pid)+".json")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var r struct {
			Socket string `json:"messagingSocketPath"`
		}
		if b, err := os.ReadFile(row); err == nil && json.Unmarshal(b, &r) == nil && r.Socket != "" {
			if _, err := os.Stat(r.Socket); err == nil {
				return doorUnderTest{r.Socket, cmd.Process.Pid}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no door in %s within 30 s", row)
		}
		time.Sleep(100 * time.Millisecond) // polling another process's file; no event to wait on here
	}
}

func peerPIDOf(t *testing.T, c *net.UnixConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	pid := 0
	rc.Control(func(fd uintptr) { pid = ucredPID(t, int(fd)) })
	return pid
}
