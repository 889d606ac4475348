package door_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	sid    = "017c3f59-43cc-4dc8-bfb6-5e9a5625a864"
	msgID  = "5b0e7c1e-8a3f-4d6b-9c2e-0f1a2b3c4d5e"
	secret = "0123456789abcdef0123456789abcdef"
)

func msg() door.Message {
	return door.Message{SessionID: sid, From: "oo-claude", MsgID: msgID, Text: "hello"}
}

func TestFramesGolden(t *testing.T) {
	tests := []struct {
		name string
		edit func(*door.Message)
		want string
	}{
		{
			name: "plain",
			edit: func(*door.Message) {},
			want: `{"type":"user","session_id":"` + sid + `","from":"oo-claude","msg_id":"` + msgID + `","priority":"next","message":{"role":"user","content":"hello"}}` + "\n",
		},
		{
			name: "with token: auth frame first",
			edit: func(m *door.Message) { m.Token = secret },
			want: `{"type":"auth","token":"` + secret + `"}` + "\n" +
				`{"type":"user","session_id":"` + sid + `","from":"oo-claude","msg_id":"` + msgID + `","priority":"next","message":{"role":"user","content":"hello"}}` + "\n",
		},
		{
			name: "priority later, no from",
			edit: func(m *door.Message) { m.Priority = door.PriorityLater; m.From = "" },
			want: `{"type":"user","session_id":"` + sid + `","msg_id":"` + msgID + `","priority":"later","message":{"role":"user","content":"hello"}}` + "\n",
		},
		{
			name: "text kept unescaped but stays one line",
			edit: func(m *door.Message) { m.Text = "[chatgpt 📡] a<b & \"c\"\nline2\r\t\u2028end\x1b" },
			want: `{"type":"user","session_id":"` + sid + `","from":"oo-claude","msg_id":"` + msgID + `","priority":"next","message":{"role":"user","content":"[chatgpt 📡] a<b & \"c\"\nline2\r\t\u2028end\u001b"}}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := msg()
			tt.edit(&m)
			got, err := m.Frames()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Frames (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*door.Message)
		field string
		want  error
	}{
		{"no session id", func(m *door.Message) { m.SessionID = "" }, "session_id", door.ErrInvalidMessage},
		{"session id with newline", func(m *door.Message) { m.SessionID = "a\nb" }, "session_id", door.ErrInvalidMessage},
		{"from invalid utf8", func(m *door.Message) { m.From = "a\xff" }, "from", door.ErrInvalidMessage},
		{"from control", func(m *door.Message) { m.From = "a\x01" }, "from", door.ErrInvalidMessage},
		{"no msg id", func(m *door.Message) { m.MsgID = "" }, "msg_id", door.ErrInvalidMessage},
		{"msg id without dashes", func(m *door.Message) { m.MsgID = strings.ReplaceAll(msgID, "-", "") }, "msg_id", door.ErrInvalidMessage},
		{"msg id in braces", func(m *door.Message) { m.MsgID = "{" + msgID[:34] + "}" }, "msg_id", door.ErrInvalidMessage},
		{"bad priority", func(m *door.Message) { m.Priority = "soon" }, "priority", door.ErrInvalidMessage},
		{"empty text", func(m *door.Message) { m.Text = "" }, "text", door.ErrInvalidMessage},
		{"text invalid utf8", func(m *door.Message) { m.Text = "caf\xe9" }, "text", door.ErrInvalidMessage},
		{"text with NUL", func(m *door.Message) { m.Text = "a\x00b" }, "text", door.ErrInvalidMessage},
		{"token with newline", func(m *door.Message) { m.Token = secret + "\n" }, "token", door.ErrInvalidMessage},
		{"text too large", func(m *door.Message) { m.Text = strings.Repeat("x", door.MaxWriteBytes) }, "frames", door.ErrTooLarge},
		{"escapes push it over", func(m *door.Message) { m.Text = strings.Repeat("\x01", door.MaxWriteBytes/6+1) }, "frames", door.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := msg()
			tt.edit(&m)
			_, err := m.Frames()
			if !errors.Is(err, tt.want) {
				t.Fatalf("Frames err = %v, want %v", err, tt.want)
			}
			var me *door.MessageError
			if !errors.As(err, &me) {
				t.Fatalf("err %T is not a *MessageError", err)
			}
			if me.Field != tt.field {
				t.Errorf("Field = %q, want %q", me.Field, tt.field)
			}
		})
	}
	t.Run("largest that fits", func(t *testing.T) {
		m := msg()
		m.Text = "x"
		small, _ := m.Frames()
		m.Text = strings.Repeat("x", door.MaxWriteBytes-len(small)+1)
		got, err := m.Frames()
		if err != nil || len(got) != door.MaxWriteBytes {
			t.Fatalf("len %d err %v, want %d <nil>", len(got), err, door.MaxWriteBytes)
		}
	})
}

// rawListener accepts connections on a socket in a temp dir and reports the
// bytes each one received before the writer closed.
func rawListener(t *testing.T, closeAtOnce bool) (path string, received <-chan []byte) {
	t.Helper()
	dir, err := os.MkdirTemp("", "doortest")
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan []byte, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if closeAtOnce {
				c.Close()
				ch <- nil
				continue
			}
			b, _ := io.ReadAll(c)
			c.Close()
			ch <- b
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		os.RemoveAll(dir)
	})
	return path, ch
}

func TestDialPeer(t *testing.T) {
	fd := fakedoor.New(t, fakedoor.Options{})
	d := door.Dialer{ExpectPID: os.Getpid()}
	c, err := d.Dial(context.Background(), fd.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := door.Cred{PID: os.Getpid(), UID: os.Getuid(), GID: os.Getgid()}
	if diff := cmp.Diff(want, c.Peer()); diff != "" {
		t.Errorf("Peer (-want +got):\n%s", diff)
	}
	if c.Socket() != fd.Path() {
		t.Errorf("Socket = %q, want %q", c.Socket(), fd.Path())
	}
}

// TestPeerMismatchWritesNothing fails if the peer check is disabled: the
// listener would then receive the frames.
func TestPeerMismatchWritesNothing(t *testing.T) {
	path, received := rawListener(t, false)
	d := door.Dialer{ExpectPID: os.Getpid() + 1, Settle: door.NoSettle}
	m := msg()
	m.Token = secret
	_, err := d.Deliver(context.Background(), path, m)
	if !errors.Is(err, door.ErrPeerMismatch) {
		t.Fatalf("err = %v, want ErrPeerMismatch", err)
	}
	var pm *door.PeerMismatchError
	if !errors.As(err, &pm) {
		t.Fatalf("err %T is not a *PeerMismatchError", err)
	}
	uid := os.Geteuid()
	if diff := cmp.Diff(door.PeerMismatchError{Socket: path, Want: os.Getpid() + 1, Got: os.Getpid(), WantUID: uid, GotUID: uid}, *pm); diff != "" {
		t.Errorf("PeerMismatchError (-want +got):\n%s", diff)
	}
	if got := <-received; len(got) != 0 {
		t.Errorf("listener received %d bytes, want 0", len(got))
	}

	// The control: the same delivery with the right pid does arrive.
	d.ExpectPID = os.Getpid()
	if _, err := d.Deliver(context.Background(), path, m); err != nil {
		t.Fatal(err)
	}
	want, _ := m.Frames()
	if diff := cmp.Diff(string(want), string(<-received)); diff != "" {
		t.Errorf("received (-want +got):\n%s", diff)
	}
}

// TestDialChecksTheUserByDefault: the zero Dialer (and Dial) accepts only a
// listener of the caller's own user; with another expected uid nothing is
// written. It fails if the default check is dropped.
func TestDialChecksTheUserByDefault(t *testing.T) {
	path, received := rawListener(t, false)
	other := door.WithEUID(door.Dialer{Settle: door.NoSettle}, os.Geteuid()+1)
	_, err := other.Deliver(context.Background(), path, msg())
	var pm *door.PeerMismatchError
	if !errors.As(err, &pm) || !errors.Is(err, door.ErrPeerMismatch) {
		t.Fatalf("err = %v, want a *PeerMismatchError", err)
	}
	want := door.PeerMismatchError{Socket: path, Got: os.Getpid(), WantUID: os.Geteuid() + 1, GotUID: os.Geteuid()}
	if diff := cmp.Diff(want, *pm); diff != "" {
		t.Errorf("PeerMismatchError (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("runs as uid %d", os.Geteuid())) {
		t.Errorf("error %q does not name the listener's uid", err)
	}
	if got := <-received; len(got) != 0 {
		t.Errorf("listener received %d bytes, want 0", len(got))
	}

	// The control: the zero Dialer, the caller's own uid, delivers.
	path, received = rawListener(t, false)
	var zero door.Dialer
	c, err := zero.Dial(context.Background(), path)
	if err != nil {
		t.Fatalf("the zero Dialer refused the caller's own listener: %v", err)
	}
	if err := c.Deliver(context.Background(), msg()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := <-received; len(got) == 0 {
		t.Error("the listener received nothing")
	}
}

func TestDialErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := door.Dial(context.Background(), filepath.Join(dir, "none.sock"))
	var oe *door.OpError
	if !errors.As(err, &oe) || oe.Op != "dial" {
		t.Fatalf("err = %v, want an OpError for dial", err)
	}
	if !errors.Is(err, syscall.ENOENT) {
		t.Errorf("err = %v, want ENOENT inside", err)
	}

	pipeDial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		a, b := net.Pipe()
		b.Close()
		return a, nil
	}
	d := door.Dialer{DialContext: pipeDial}
	if _, err := d.Dial(context.Background(), "x.sock"); !errors.Is(err, door.ErrNotUnixConn) {
		t.Errorf("err = %v, want ErrNotUnixConn", err)
	}
}

func TestDeliver(t *testing.T) {
	const settle = 100 * time.Millisecond
	tests := []struct {
		name    string
		refuse  bool
		wantErr error
		wantOp  string
	}{
		{name: "kept: success after the settle"},
		{name: "closed within the settle: refused", refuse: true, wantErr: door.ErrRefused, wantOp: "settle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := fakedoor.New(t, fakedoor.Options{})
			fd.Refuse(tt.refuse)
			d := door.Dialer{ExpectPID: os.Getpid(), Settle: settle}
			start := time.Now()
			peer, err := d.Deliver(context.Background(), fd.Path(), msg())
			took := time.Since(start)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if peer.PID != os.Getpid() {
				t.Errorf("peer pid %d, want %d", peer.PID, os.Getpid())
			}
			if tt.wantErr == nil {
				if took < settle {
					t.Errorf("returned after %v, before the settle %v", took, settle)
				}
			} else {
				var oe *door.OpError
				if !errors.As(err, &oe) || oe.Op != tt.wantOp || oe.Socket != fd.Path() {
					t.Errorf("err = %#v, want an OpError %q on the socket", err, tt.wantOp)
				}
				if took >= settle {
					t.Errorf("refusal seen after %v, want before the settle ends", took)
				}
			}
			frames := fd.Frames()
			if len(frames) != 1 {
				t.Fatalf("got %d frames, want 1", len(frames))
			}
			f := frames[0]
			got := []string{f.SessionID, f.From, f.MsgID, f.Priority, f.Content}
			if diff := cmp.Diff([]string{sid, "oo-claude", msgID, "next", "hello"}, got); diff != "" {
				t.Errorf("frame (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeliverToClosedListener(t *testing.T) {
	path, received := rawListener(t, true)
	d := door.Dialer{Settle: time.Second}
	_, err := d.Deliver(context.Background(), path, msg())
	if !errors.Is(err, door.ErrRefused) {
		t.Fatalf("err = %v, want ErrRefused", err)
	}
	<-received
}

func TestDeliverContext(t *testing.T) {
	fd := fakedoor.New(t, fakedoor.Options{})
	t.Run("cancel ends the settle", func(t *testing.T) {
		d := door.Dialer{Settle: time.Minute}
		c, err := d.Dial(context.Background(), fd.Path())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = c.Deliver(ctx, msg())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("took %v", took)
		}
		if err := c.Deliver(context.Background(), msg()); !errors.Is(err, door.ErrBroken) {
			t.Errorf("second Deliver err = %v, want ErrBroken", err)
		}
	})
	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var d door.Dialer
		if _, err := d.Deliver(ctx, fd.Path(), msg()); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want Canceled", err)
		}
	})
}

func TestSeveralDeliveriesOneConn(t *testing.T) {
	fd := fakedoor.New(t, fakedoor.Options{})
	d := door.Dialer{Settle: door.NoSettle}
	c, err := d.Dial(context.Background(), fd.Path())
	if err != nil {
		t.Fatal(err)
	}
	m := msg()
	m.Token = secret
	for _, text := range []string{"one", "two"} {
		m.Text = text
		if err := c.Deliver(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	frames, err := fd.WaitFrames(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range frames {
		got = append(got, string(f.Disposition)+":"+f.Content)
	}
	if diff := cmp.Diff([]string{"auth:", "queued:one", "queued:two"}, got); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if frames[0].Token.Reveal() != secret {
		t.Errorf("the auth frame did not carry the token")
	}
}

func TestTokenNeverPrinted(t *testing.T) {
	m := msg()
	m.Token = secret
	var outs []string
	outs = append(outs, fmt.Sprintf("%v %+v %#v %s", m, m, m, m.Token))
	j, _ := json.Marshal(m)
	outs = append(outs, string(j))

	bad := m
	bad.Text = ""
	_, err := bad.Frames()
	outs = append(outs, err.Error(), fmt.Sprintf("%+v %#v", err, err))

	bad = m
	bad.Token = secret + "\x00"
	_, err = bad.Frames()
	outs = append(outs, err.Error(), fmt.Sprintf("%+v %#v", err, err))

	path, received := rawListener(t, false)
	_, err = (&door.Dialer{ExpectPID: 1}).Deliver(context.Background(), path, m)
	<-received
	outs = append(outs, err.Error(), fmt.Sprintf("%+v %#v", err, err))

	fd := fakedoor.New(t, fakedoor.Options{})
	fd.Refuse(true)
	_, err = (&door.Dialer{Settle: time.Second}).Deliver(context.Background(), fd.Path(), m)
	outs = append(outs, err.Error(), fmt.Sprintf("%+v %#v", err, err))
	outs = append(outs, fmt.Sprintf("%v %+v %#v", fd.Frames(), fd.Frames(), fd.Frames()))

	for i, s := range outs {
		if strings.Contains(s, secret) {
			t.Errorf("output %d carries the token: %s", i, s)
		}
	}
}

// FuzzFrames: any text gives one line of valid JSON per frame whose content
// round-trips, or a typed error.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{"hello", "", "a\nb", "\u2028\u2029", "<&>", "\x00", "\xff", "[x 📡] \"q\"\\", strings.Repeat("é", 100)} {
		f.Add(s, "oo-claude", true)
	}
	f.Fuzz(func(t *testing.T, text, from string, withToken bool) {
		m := msg()
		m.Text, m.From = text, from
		if withToken {
			m.Token = secret
		}
		b, err := m.Frames()
		if err != nil {
			if !errors.Is(err, door.ErrInvalidMessage) && !errors.Is(err, door.ErrTooLarge) {
				t.Fatalf("untyped error %v", err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatal("error carries the token")
			}
			return
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		if last := lines[len(lines)-1]; len(last) != 0 {
			t.Fatalf("frames do not end in a newline: %q", b)
		}
		lines = lines[:len(lines)-1]
		want := 1
		if withToken {
			want = 2
		}
		if len(lines) != want {
			t.Fatalf("%d lines, want %d: %q", len(lines), want, b)
		}
		var u struct {
			Type    string `json:"type"`
			From    string `json:"from"`
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		}
		for _, l := range lines {
			if !json.Valid(l) {
				t.Fatalf("not valid JSON: %q", l)
			}
		}
		if err := json.Unmarshal(lines[len(lines)-1], &u); err != nil {
			t.Fatal(err)
		}
		if u.Type != "user" || u.Message.Content != text || u.From != from {
			t.Fatalf("round trip: got %q from %q, want %q from %q", u.Message.Content, u.From, text, from)
		}
	})
}

func BenchmarkDeliver(b *testing.B) {
	for _, bc := range []struct {
		name   string
		settle time.Duration
	}{
		{"settle=0", door.NoSettle},
		{"settle=default", 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			fd := fakedoor.New(b, fakedoor.Options{})
			d := door.Dialer{ExpectPID: os.Getpid(), Settle: bc.settle}
			m := msg()
			m.Token = secret
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Deliver(ctx, fd.Path(), m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestConnNotFromDial: a Conn not from Dial (the zero value) is
// closed: Deliver of a valid message and Close return an *OpError wrapping
// net.ErrClosed (the zero value's Close dereferenced a nil connection).
func TestConnNotFromDial(t *testing.T) {
	m := door.Message{SessionID: "6c2b1c1e-4b7a-4f7e-9d2a-1a2b3c4d5e6f", From: "t", MsgID: "0b0e3c1a-2d4f-4a6b-8c9d-0e1f2a3b4c5d", Text: "hi", Token: "tok"}
	for name, c := range map[string]*door.Conn{"zero": {}} {
		t.Run(name, func(t *testing.T) {
			var op *door.OpError
			if err := c.Deliver(context.Background(), m); !errors.Is(err, net.ErrClosed) || !errors.As(err, &op) {
				t.Errorf("Deliver: %v, want an *OpError wrapping net.ErrClosed", err)
			}
			if err := c.Close(); !errors.Is(err, net.ErrClosed) || !errors.As(err, &op) {
				t.Errorf("Close: %v, want an *OpError wrapping net.ErrClosed", err)
			}
			if c.Socket() != "" || c.Peer() != (door.Cred{}) {
				t.Errorf("Socket %q, Peer %+v; want zero", c.Socket(), c.Peer())
			}
		})
	}
	// The zero Dialer: a missing socket is a dial error.
	var d door.Dialer
	if _, err := d.Dial(context.Background(), filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("the zero Dialer dialled a missing socket")
	}
}
