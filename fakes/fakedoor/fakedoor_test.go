package fakedoor_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/oo-family/oo-claude/fakes/fakedoor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	sid   = "017c3f59-43cc-4dc8-bfb6-5e9a5625a864"
	other = "11111111-2222-4333-8444-555555555555"
	msgID = "5b0e7c1e-8a3f-4d6b-9c2e-0f1a2b3c4d5e"
)

func user(text string) string {
	return `{"type":"user","session_id":"` + sid + `","from":"oo-claude","msg_id":"` + msgID + `","priority":"next","message":{"role":"user","content":"` + text + `"}}`
}

// send writes each chunk in its own write, half-closes unless keep, and
// waits until the door has ended it, its only connection (or, with keep, until want
// frames arrived).
func send(t *testing.T, d *fakedoor.Door, keep bool, want int, chunks ...string) *net.UnixConn {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: d.Path(), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, ch := range chunks {
		if _, err := c.Write([]byte(ch)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if keep {
		if _, err := d.WaitFrames(ctx, want); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c.CloseWrite()
	if _, err := d.WaitConns(ctx, 1); err != nil { // one connection per door in these tests
		t.Fatal(err)
	}
	return c
}

type seen struct {
	Disposition fakedoor.Disposition
	Type        string
	From        string
	MsgID       string
	Priority    string
	Content     string
	Final       bool
}

func summary(fs []fakedoor.Frame) []seen {
	var out []seen
	for _, f := range fs {
		out = append(out, seen{f.Disposition, f.Type, f.From, f.MsgID, f.Priority, f.Content, f.Final})
	}
	return out
}

func queued(content string) seen {
	return seen{fakedoor.Queued, "user", "oo-claude", msgID, "next", content, false}
}

// TestFakeFollowsFacts states each measured rule of the real door and
// checks the fake against it.
func TestFakeFollowsFacts(t *testing.T) {
	tests := []struct {
		rule   string
		opts   fakedoor.Options
		chunks []string
		want   []seen
		end    fakedoor.EndReason
	}{
		{
			rule:   "UTF-8 lines ending in \\n; several frames on one connection are all taken",
			chunks: []string{user("a") + "\n" + user("b") + "\n", user("c") + "\n"},
			want:   []seen{queued("a"), queued("b"), queued("c")},
			end:    fakedoor.EndEOF,
		},
		{
			rule:   "a line split over writes is one line",
			chunks: []string{user("a")[:10], user("a")[10:] + "\n"},
			want:   []seen{queued("a")},
			end:    fakedoor.EndEOF,
		},
		{
			rule:   "a last line without \\n is taken at half-close",
			chunks: []string{user("a") + "\n" + user("last")},
			want:   []seen{queued("a"), {fakedoor.Queued, "user", "oo-claude", msgID, "next", "last", true}},
			end:    fakedoor.EndEOF,
		},
		{
			rule:   "blank lines are skipped (JavaScript trim: also \\r, tabs, NBSP, U+FEFF)",
			chunks: []string{"\n \r\n\t\n\u00a0\ufeff\u2003\n" + user("a") + "\n  "},
			want:   []seen{queued("a")},
			end:    fakedoor.EndEOF,
		},
		{
			rule:   "an unparseable line is logged and the connection continues",
			chunks: []string{"not json\n{\"type\":\n" + user("a") + "\n"},
			want: []seen{
				{Disposition: fakedoor.Unparseable}, {Disposition: fakedoor.Unparseable}, queued("a"),
			},
			end: fakedoor.EndEOF,
		},
		{
			rule:   "a line without a string type is ignored; unknown types are not user lines",
			chunks: []string{"5\n[]\n{\"type\":5}\n{\"type\":\"control\",\"action\":\"x\"}\n"},
			want: []seen{
				{Disposition: fakedoor.Ignored}, {Disposition: fakedoor.Ignored}, {Disposition: fakedoor.Ignored},
				{Disposition: fakedoor.Ignored, Type: "control"},
			},
			end: fakedoor.EndEOF,
		},
		{
			rule:   "the auth frame is optional and changes nothing on Linux",
			chunks: []string{`{"type":"auth","token":"t"}` + "\n" + user("a") + "\n"},
			want:   []seen{{Disposition: fakedoor.Auth, Type: "auth"}, queued("a")},
			end:    fakedoor.EndEOF,
		},
		{
			rule: "message.content must be a non-empty string, else the line is ignored",
			chunks: []string{
				`{"type":"user","message":{"role":"user","content":""}}` + "\n" +
					`{"type":"user","message":{"role":"user","content":["x"]}}` + "\n" +
					`{"type":"user","message":"x"}` + "\n" +
					`{"type":"user"}` + "\n",
			},
			want: []seen{
				{fakedoor.IgnoredContent, "user", "unknown", "", "next", "", false},
				{fakedoor.IgnoredContent, "user", "unknown", "", "next", "", false},
				{fakedoor.IgnoredContent, "user", "unknown", "", "next", "", false},
				{fakedoor.IgnoredContent, "user", "unknown", "", "next", "", false},
			},
			end: fakedoor.EndEOF,
		},
		{
			rule: "a session_id that is set and differs is dropped (also null); an absent one is taken",
			opts: fakedoor.Options{SessionID: sid},
			chunks: []string{
				strings.Replace(user("other"), sid, other, 1) + "\n" +
					strings.Replace(user("null"), `"`+sid+`"`, "null", 1) + "\n" +
					`{"type":"user","from":"oo-claude","msg_id":"` + msgID + `","message":{"content":"absent"}}` + "\n" +
					user("same") + "\n",
			},
			want: []seen{
				{fakedoor.DroppedSession, "user", "oo-claude", msgID, "next", "other", false},
				{fakedoor.DroppedSession, "user", "oo-claude", msgID, "next", "null", false},
				queued("absent"),
				queued("same"),
			},
			end: fakedoor.EndEOF,
		},
		{
			rule: "from defaults to unknown; msg_id is kept only if it is a UUID; priority is now|next|later, else next",
			chunks: []string{
				`{"type":"user","msg_id":"not-a-uuid","priority":"soon","message":{"content":"a"}}` + "\n" +
					`{"type":"user","from":null,"msg_id":"` + strings.ToUpper(msgID) + `","priority":"now","message":{"content":"b"}}` + "\n" +
					`{"type":"user","from":"z","priority":"later","message":{"content":"c"}}` + "\n",
			},
			want: []seen{
				{fakedoor.Queued, "user", "unknown", "", "next", "a", false},
				{fakedoor.Queued, "user", "unknown", strings.ToUpper(msgID), "now", "b", false},
				{fakedoor.Queued, "user", "z", "", "later", "c", false},
			},
			end: fakedoor.EndEOF,
		},
		{
			rule:   "more than 1,048,576 characters buffered: the connection is dropped",
			chunks: []string{strings.Repeat("x", fakedoor.MaxBuffer+1)},
			end:    fakedoor.EndOversize,
		},
		{
			rule:   "exactly 1,048,576 characters buffered is kept",
			chunks: []string{user("a") + "\n" + strings.Repeat(" ", fakedoor.MaxBuffer-1) + "\n"},
			want:   []seen{queued("a")},
			end:    fakedoor.EndEOF,
		},
		{
			rule:   "characters are UTF-16 code units: an emoji counts two",
			chunks: []string{strings.Repeat("😀", fakedoor.MaxBuffer/2) + "x"},
			end:    fakedoor.EndOversize,
		},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			d := fakedoor.New(t, tt.opts)
			send(t, d, false, 0, tt.chunks...)
			if diff := cmp.Diff(tt.want, summary(d.Frames())); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
			if got := d.Conns()[0].End; got != tt.end {
				t.Errorf("connection end %q, want %q", got, tt.end)
			}
		})
	}

	t.Run("no complete line within the deadline (30 s): closed", func(t *testing.T) {
		d := fakedoor.New(t, fakedoor.Options{FirstLineDeadline: 50 * time.Millisecond})
		c := send(t, d, true, 0, "{\"type\":")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		conns, err := d.WaitConns(ctx, 1)
		if err != nil || conns[0].End != fakedoor.EndSilent {
			t.Fatalf("conns %+v err %v, want one ended silent", conns, err)
		}
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Errorf("read %d, %v after the close; want 0 bytes and EOF", n, err)
		}
	})
	t.Run("a complete line lifts the deadline", func(t *testing.T) {
		d := fakedoor.New(t, fakedoor.Options{FirstLineDeadline: 50 * time.Millisecond})
		send(t, d, true, 0, "\n")
		time.Sleep(150 * time.Millisecond) // longer than the deadline, on purpose
		if got := d.Conns()[0].End; got != fakedoor.EndOpen {
			t.Errorf("connection end %q, want still open", got)
		}
	})
	t.Run("the server never writes a byte", func(t *testing.T) {
		d := fakedoor.New(t, fakedoor.Options{})
		c := send(t, d, true, 2, `{"type":"auth","token":"t"}`+"\n"+user("a")+"\n")
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := c.Read(make([]byte, 1))
		if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read %d, %v; want 0 bytes and a timeout", n, err)
		}
	})
	t.Run("a refusal shows only as a close; the rest of the buffer is not read", func(t *testing.T) {
		d := fakedoor.New(t, fakedoor.Options{})
		d.Refuse(true)
		c := send(t, d, true, 2, `{"type":"auth","token":"t"}`+"\n"+user("a")+"\n"+user("b")+"\n")
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Errorf("read %d, %v; want 0 bytes and EOF", n, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := d.WaitConns(ctx, 1); err != nil {
			t.Fatal(err)
		}
		want := []seen{{Disposition: fakedoor.Auth, Type: "auth"}, {fakedoor.Refused, "user", "oo-claude", msgID, "next", "a", false}}
		if diff := cmp.Diff(want, summary(d.Frames())); diff != "" {
			t.Errorf("frames (-want +got):\n%s", diff)
		}
		if got := d.Conns()[0].End; got != fakedoor.EndRefused {
			t.Errorf("end %q, want refused", got)
		}
	})
	t.Run("the writer's pid is recorded", func(t *testing.T) {
		d := fakedoor.New(t, fakedoor.Options{})
		send(t, d, false, 0, user("a")+"\n")
		if got := d.Frames()[0].PeerPID; got != os.Getpid() {
			t.Errorf("PeerPID %d, want %d", got, os.Getpid())
		}
	})
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestGuardFollowsFacts: the ingress guard per sender key (from, else the
// peer pid): an identical body within 30 s is dropped silently; a token
// bucket of 30 refilled at 0.5/s.
func TestGuardFollowsFacts(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	d := fakedoor.New(t, fakedoor.Options{Guard: &fakedoor.Guard{}, Now: clock.Now})
	c := send(t, d, true, 0)
	n := 0
	step := func(line string) fakedoor.Disposition {
		t.Helper()
		if _, err := c.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		n++
		fs, err := d.WaitFrames(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		return fs[n-1].Disposition
	}
	from := func(f, text string) string {
		return `{"type":"user","from":"` + f + `","message":{"content":"` + text + `"}}`
	}
	check := func(name string, got, want fakedoor.Disposition) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}

	check("first", step(from("a", "same")), fakedoor.Queued)
	check("identical body from the same sender", step(from("a", "same")), fakedoor.DroppedDuplicate)
	check("identical body from another sender", step(from("b", "same")), fakedoor.Queued)
	clock.Advance(29 * time.Second)
	check("still within 30 s", step(from("a", "same")), fakedoor.DroppedDuplicate)
	clock.Advance(time.Second)
	check("after 30 s", step(from("a", "same")), fakedoor.Queued)

	// Sender c: 30 tokens, then empty; 2 s refill one.
	for i := range 30 {
		check(fmt.Sprintf("burst %d", i), step(from("c", fmt.Sprint(i))), fakedoor.Queued)
	}
	check("31st in a burst", step(from("c", "31")), fakedoor.DroppedRateLimited)
	check("a rate-limited body is not remembered", step(from("c", "31")), fakedoor.DroppedRateLimited)
	clock.Advance(2 * time.Second)
	check("after 2 s one token", step(from("c", "32")), fakedoor.Queued)
	check("and only one", step(from("c", "33")), fakedoor.DroppedRateLimited)

	// "unknown" is keyed by the peer pid: a missing from and "unknown" share it.
	check("no from", step(`{"type":"user","message":{"content":"p"}}`), fakedoor.Queued)
	check("from unknown is the same sender (pid)", step(from("unknown", "p")), fakedoor.DroppedDuplicate)
}

func TestWaitFrames(t *testing.T) {
	d := fakedoor.New(t, fakedoor.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := d.WaitFrames(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
	done := make(chan error)
	go func() {
		_, err := d.WaitFrames(context.Background(), 1)
		done <- err
	}()
	d.Close()
	if err := <-done; !errors.Is(err, fakedoor.ErrClosed) {
		t.Errorf("err = %v, want ErrClosed", err)
	}
	if _, err := os.Stat(d.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after Close: %v", err)
	}
}

func TestCloseEndsOpenConnections(t *testing.T) {
	d := fakedoor.New(t, fakedoor.Options{})
	send(t, d, true, 1, user("a")+"\n")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got := d.Conns()[0].End; got != fakedoor.EndClosed {
		t.Errorf("end %q, want closed", got)
	}
}

func TestListenPath(t *testing.T) {
	dir, err := os.MkdirTemp("", "fd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := dir + "/x.sock"
	d, err := fakedoor.Listen(path, fakedoor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Errorf("socket %v %v, want a 0600 socket", fi, err)
	}
	d.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("Close removed the caller's directory: %v", err)
	}
}

// TestZeroOptionsAreDefaults: a nil clock, and a first-line
// deadline or buffer that is not positive are the defaults: the door
// still takes a line (a nil clock used to panic on the first frame, a zero
// buffer to drop every connection).
func TestZeroOptionsAreDefaults(t *testing.T) {
	d := fakedoor.New(t, fakedoor.Options{Now: nil, FirstLineDeadline: 0, MaxBuffer: -1, Guard: &fakedoor.Guard{Capacity: -1, RefillPerSecond: -1, DedupWindow: -1}})
	send(t, d, false, 1, user("hello")+"\n")
	q := d.Queued()
	if len(q) != 1 || q[0].Content != "hello" || q[0].Time.IsZero() {
		t.Fatalf("queued %+v, want the line with its time", q)
	}
	if c := d.Conns(); len(c) != 1 || c[0].End != fakedoor.EndEOF {
		t.Errorf("conns %+v, want one ended at EOF", c)
	}
}

// TestDoorNotStarted: a Door not made by New or Listen (the zero
// value) is a closed door: Close does nothing, the waits return ErrClosed
// at once (the zero value's Close closed a nil channel).
func TestDoorNotStarted(t *testing.T) {
	for name, d := range map[string]*fakedoor.Door{"zero": {}} {
		t.Run(name, func(t *testing.T) {
			if err := d.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if _, err := d.WaitFrames(context.Background(), 1); !errors.Is(err, fakedoor.ErrClosed) {
				t.Errorf("WaitFrames: %v, want ErrClosed", err)
			}
			if _, err := d.WaitConns(context.Background(), 1); !errors.Is(err, fakedoor.ErrClosed) {
				t.Errorf("WaitConns: %v, want ErrClosed", err)
			}
			if d.Path() != "" || d.Frames() != nil || d.Conns() != nil || d.Queued() != nil {
				t.Errorf("Path %q, Frames %v, Conns %v; want none", d.Path(), d.Frames(), d.Conns())
			}
		})
	}
}
