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
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/transcript"
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
	// For TestConformanceEnqueue: the session's id and where its
	// transcript is (found once it exists).
	sessionID  string
	transcript func() string
}

func TestConformance(t *testing.T) {
	doors := map[string]func(t *testing.T) doorUnderTest{
		"fake": func(t *testing.T) doorUnderTest {
			return doorUnderTest{path: fakedoor.New(t, fakedoor.Options{}).Path(), pid: os.Getpid()}
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
			Socket    string `json:"messagingSocketPath"`
			SessionID string `json:"sessionId"`
		}
		if b, err := os.ReadFile(row); err == nil && json.Unmarshal(b, &r) == nil && r.Socket != "" {
			if _, err := os.Stat(r.Socket); err == nil {
				projects := filepath.Join(home, ".claude", "projects")
				return doorUnderTest{path: r.Socket, pid: cmd.Process.Pid, sessionID: r.SessionID, transcript: func() string {
					p, _ := transcript.Locate(projects, r.SessionID, home)
					return p
				}}
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

// TestConformanceEnqueue: the receiver's own record of a queued line, the
// enqueue row a doorman confirms by, is the same for the fake and the real
// door: one row per line it queues, none for a body repeated by the same
// sender within 30 s, with the real row's keys in the real order.
func TestConformanceEnqueue(t *testing.T) {
	const fakeSID = "6f4333bb-8aef-4dfe-81b7-7feca9be5559"
	doors := map[string]func(t *testing.T) doorUnderTest{
		"fake": func(t *testing.T) doorUnderTest {
			p := filepath.Join(t.TempDir(), "-home-u-proj", fakeSID+".jsonl")
			d := fakedoor.New(t, fakedoor.Options{SessionID: fakeSID, Guard: &fakedoor.Guard{}, Transcript: p})
			return doorUnderTest{path: d.Path(), pid: os.Getpid(), sessionID: fakeSID, transcript: func() string { return p }}
		},
	}
	if bin := os.Getenv("OO_CLAUDE_E2E_CLAUDE"); bin != "" {
		doors["real"] = func(t *testing.T) doorUnderTest { return realDoor(t, bin) }
	} else {
		t.Log("OO_CLAUDE_E2E_CLAUDE unset: checking the fake only")
	}
	frame := func(sid, text string) string {
		return `{"type":"user","session_id":"` + sid + `","from":"conformance","msg_id":"` + msgID + `","priority":"next","message":{"role":"user","content":"` + text + `"}}` + "\n"
	}
	for name, start := range doors {
		t.Run(name, func(t *testing.T) {
			d := start(t)
			c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: d.path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			w := frame(d.sessionID, "enq one") + frame(d.sessionID, "enq one") + frame(d.sessionID, "enq two")
			if _, err := c.Write([]byte(w)); err != nil {
				t.Fatal(err)
			}
			var got []string
			var keys string
			read := func() {
				got, keys = nil, ""
				p := d.transcript()
				if p == "" {
					return
				}
				b, _ := os.ReadFile(p)
				for _, l := range strings.Split(string(b), "\n") {
					row, err := transcriptfile.ParseRow([]byte(l))
					if err != nil || row.Type != transcriptfile.RowQueueOperation || row.Operation != transcriptfile.QueueEnqueue {
						continue
					}
					var text string
					if json.Unmarshal(row.Content, &text) != nil || !strings.HasPrefix(text, "enq ") {
						continue
					}
					got = append(got, text)
					keys = keyOrder(t, l)
				}
			}
			for deadline := time.Now().Add(60 * time.Second); len(got) < 2 && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond) // another process's file: polled
				read()
			}
			time.Sleep(300 * time.Millisecond) // a row for the duplicate would have come by now
			read()
			if strings.Join(got, "|") != "enq one|enq two" {
				t.Errorf("enqueue rows for %q, want one each for enq one and enq two (the repeated body dropped)", got)
			}
			if keys != "type,operation,timestamp,sessionId,content" {
				t.Errorf("enqueue row keys %s", keys)
			}
		})
	}
}

// keyOrder returns the top-level keys of a JSON object in order.
func keyOrder(t *testing.T, line string) string {
	dec := json.NewDecoder(strings.NewReader(line))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Join(keys, ",")
}
