// Package fakedoor is an exported test double for a Claude Code session's
// messaging socket ("the door"), in the spirit of net/http/httptest: a real
// Unix-socket listener in a private temporary directory that reads
// newline-delimited frames by the rules of Claude Code 2.1.332's door
// (COMPATIBILITY.md, "Where 2.1.332 differs from what v0.1 measured"),
// never writes a byte, and records every line with the writer's SO_PEERCRED
// pid and what the real receiver would have done with it.
//
// It guarantees: a recorded [Frame] for every complete non-blank line (and a
// last unterminated line at half-close), in arrival order; a connection whose
// buffer exceeds 1,048,576 characters is dropped; a connection without a
// complete line within 30 s is closed; with [Door.Refuse] or [Options.RefuseWhen]
// a user frame makes it close the connection, the only way a real door
// refuses; with [Options.SessionID] and [Options.Guard] it drops what the real
// session drops (another session_id, a duplicate body within 30 s, a sender
// over its token bucket). [Door.Close] waits for every connection goroutine.
//
// Not modelled: the 50-message queue limit (the fake has no model draining
// it), the hop-chain checks, the 256-sender cap of the guard's table, and who
// is shown to the model (descent from the session's process).
package fakedoor

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
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/fakes"
	"github.com/oo-family/oo-claude/fakes/internal/fakewait"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/ingress"
	"github.com/oo-family/oo-claude/station"
)

// The receiver's limits, as Claude Code 2.1.332 has them.
const (
	// MaxBuffer is how many characters (UTF-16 code units) a connection may
	// have buffered before the receiver drops it.
	MaxBuffer = 1_048_576
	// FirstLineDeadline closes a connection that sent no complete line.
	FirstLineDeadline = 30 * time.Second
)

// ErrClosed is returned by [Door.WaitFrames] once the door is closed.
var ErrClosed = errors.New("fakedoor: closed")

// Disposition is what the real receiver would have done with a line.
type Disposition string

const (
	// Queued: a user frame the session takes (queues for the model).
	Queued Disposition = "queued"
	// Auth: an auth frame (on Linux optional, changes nothing).
	Auth Disposition = "auth"
	// Ignored: JSON without a string "type", or a type this fake does not
	// model (control frames and the like).
	Ignored Disposition = "ignored"
	// IgnoredContent: a user frame whose message.content is not a
	// non-empty string.
	IgnoredContent Disposition = "ignored-content"
	// DroppedSession: a user frame whose session_id is set and differs
	// from [Options.SessionID]'s.
	DroppedSession Disposition = "dropped-session-mismatch"
	// DroppedDuplicate: the guard's "identical body from the same sender
	// within the window" (the door accepted it; the model never sees it).
	DroppedDuplicate Disposition = "dropped-duplicate"
	// DroppedRateLimited: the sender's token bucket was empty.
	DroppedRateLimited Disposition = "dropped-rate-limited"
	// Unparseable: not JSON; the receiver logs it and reads on.
	Unparseable Disposition = "unparseable"
	// Refused: the fake closed the connection on this user frame
	// ([Door.Refuse], [Options.RefuseWhen]).
	Refused Disposition = "refused"
)

// Frame is one line a writer sent, with what the receiver made of it.
type Frame struct {
	Raw     []byte    // the line's bytes without "\n"
	Conn    int       // the connection's number, from 1 in accept order
	PeerPID int       // the writer's pid (SO_PEERCRED)
	Time    time.Time // when the line was complete ([Options.Now])
	Final   bool      // an unterminated last line taken at half-close

	Disposition Disposition
	Type        string        // the frame's "type" ("" when absent)
	Token       station.Token // an auth frame's token (redacted when printed)
	SessionID   string        // a user frame's session_id as sent
	From        string        // as the session records it: "unknown" when absent
	MsgID       string        // kept only when it is a UUID, like origin.msg_id
	Priority    string        // now, next or later; anything else reads as next
	Content     string        // message.content
}

// EndReason says why a connection ended.
type EndReason string

const (
	EndOpen     EndReason = ""         // still open
	EndEOF      EndReason = "eof"      // the writer closed (or half-closed)
	EndOversize EndReason = "oversize" // more than MaxBuffer characters buffered
	EndSilent   EndReason = "silent"   // no complete line within the first-line deadline
	EndRefused  EndReason = "refused"  // the fake refused a frame
	EndClosed   EndReason = "closed"   // Door.Close
	EndError    EndReason = "error"    // a read error
)

// ConnInfo describes one accepted connection.
type ConnInfo struct {
	N       int
	PeerPID int
	End     EndReason
}

// Guard mimics the real ingress guard, per sender key (the frame's from, or
// the peer pid when from is "unknown"). Zero fields take the real guard's
// values, noted beside each field. Its model is the one the doorman paces for.
type Guard struct {
	Capacity        float64       // token bucket size; 30
	RefillPerSecond float64       // 0.5
	DedupWindow     time.Duration // an identical body from the same sender within it is dropped; 30 s
}

// Options configure a [Door], set before it starts (as the fields of an
// httptest.Server are). The zero value is a door that queues every user
// frame, with the real receiver's limits.
type Options struct {
	// SessionID is the session's id: a user frame whose session_id is set
	// and differs is dropped. "" turns the check off.
	SessionID string
	// Transcript makes the door write the receiver's own record of each
	// line it queues, as Claude Code does: one row
	// {"type":"queue-operation","operation":"enqueue","timestamp":…,"sessionId":…,"content":<text>}
	// appended to the transcript at this path (created 0600, its
	// directory 0700) about when the line is read. A line the guard or the
	// session check drops leaves no row. sessionId is SessionID's, else
	// the frame's.
	Transcript string
	// Guard, when set, turns on the ingress guard.
	Guard *Guard
	// Now is the clock for Frame.Time and the guard; nil means time.Now.
	Now func() time.Time
	// RefuseWhen closes the connection on every user frame for which it
	// returns true (called with the parsed frame, Disposition not yet set).
	RefuseWhen func(Frame) bool
	// FirstLineDeadline replaces [FirstLineDeadline] (for tests of it); a
	// duration that is not positive keeps it.
	FirstLineDeadline time.Duration
	// MaxBuffer replaces [MaxBuffer] (for tests of it); a size that is not
	// positive keeps it.
	MaxBuffer int
}

type config struct {
	transcript string
	sessionID  string
	guard      *ingress.Guard
	now        func() time.Time
	refuseWhen func(Frame) bool
	firstLine  time.Duration
	maxBuffer  int
}

// Door is a running fake door. Make one with [New] or [Listen]: a Door
// not made by them (the zero value) is a closed door with no
// frames (Close does nothing, the waits return [ErrClosed]).
type Door struct {
	cfg     config
	path    string
	tempDir string // removed by Close; "" when the caller chose the path
	ln      *net.UnixListener
	refuse  atomic.Bool
	wg      sync.WaitGroup
	done    chan struct{}
	once    sync.Once

	mu       sync.Mutex
	frames   []Frame
	conns    []ConnInfo
	open     map[int]*net.UnixConn
	changed  fakewait.Signal // fired when frames or connections change
	guard    *ingress.Table  // nil without Options.Guard
	writeErr error           // the first transcript write that failed
}

// New starts a door configured by o in a fresh short temporary directory and closes it when
// tb's test ends. It fails tb when the listener cannot start.
func New(tb fakes.TB, o Options) *Door {
	tb.Helper()
	d, err := Listen("", o)
	if err != nil {
		tb.Fatalf("fakedoor: %v", err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// Listen starts a door at path (0600); an empty path means "door.sock" in a
// fresh 0700 temporary directory short enough for a Unix socket, removed by
// Close. The caller must Close the door.
func Listen(path string, o Options) (*Door, error) {
	cfg := config{transcript: o.Transcript, sessionID: o.SessionID, now: o.Now, refuseWhen: o.RefuseWhen,
		firstLine: o.FirstLineDeadline, maxBuffer: o.MaxBuffer}
	if g := o.Guard; g != nil {
		cfg.guard = &ingress.Guard{Capacity: g.Capacity, RefillPerSecond: g.RefillPerSecond, DedupWindow: g.DedupWindow}
	}
	// A nil clock and a deadline or buffer that is not positive are the
	// defaults, not a panic or a door that drops every connection.
	if cfg.now == nil {
		cfg.now = time.Now
	}
	if cfg.firstLine <= 0 {
		cfg.firstLine = FirstLineDeadline
	}
	if cfg.maxBuffer <= 0 {
		cfg.maxBuffer = MaxBuffer
	}
	d := &Door{
		cfg:  cfg,
		done: make(chan struct{}),
		open: map[int]*net.UnixConn{},
	}
	if cfg.guard != nil {
		d.guard = ingress.NewTable(*cfg.guard)
	}
	if path == "" {
		dir, err := shortTempDir()
		if err != nil {
			return nil, err
		}
		d.tempDir = dir
		path = filepath.Join(dir, "door.sock")
	}
	d.path = path
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		d.removeTemp()
		return nil, fmt.Errorf("fakedoor: listen: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		d.removeTemp()
		return nil, fmt.Errorf("fakedoor: %w", err)
	}
	d.ln = ln
	d.wg.Add(1)
	go d.accept()
	return d, nil
}

// shortTempDir makes a 0700 directory whose socket path fits the 108-byte
// sun_path, falling back to /tmp when $TMPDIR is long.
func shortTempDir() (string, error) {
	dir, err := os.MkdirTemp("", "door")
	if err == nil && len(dir)+len("/door.sock") < 100 {
		return dir, nil
	}
	if err == nil {
		os.Remove(dir)
	}
	dir, err = os.MkdirTemp("/tmp", "door")
	if err != nil {
		return "", fmt.Errorf("fakedoor: %w", err)
	}
	return dir, nil
}

func (d *Door) removeTemp() {
	if d.tempDir != "" {
		os.RemoveAll(d.tempDir)
	}
}

// Path returns the socket's path.
func (d *Door) Path() string {
	return d.path
}

// Refuse makes the door close each connection on its next user frame (true)
// or keep connections again (false).
func (d *Door) Refuse(on bool) {
	if d != nil {
		d.refuse.Store(on)
	}
}

// Close stops accepting, closes open connections, waits for their
// goroutines and removes the temporary directory. It is idempotent.
func (d *Door) Close() error {
	if !d.started() {
		return nil
	}
	var err error
	d.once.Do(func() {
		close(d.done)
		err = d.ln.Close()
		d.mu.Lock()
		for _, c := range d.open {
			c.Close()
		}
		d.mu.Unlock()
		d.wg.Wait()
		d.removeTemp()
		d.mu.Lock()
		if err == nil && d.writeErr != nil {
			err = fmt.Errorf("fakedoor: transcript: %w", d.writeErr)
		}
		d.mu.Unlock()
	})
	return err
}

// Frames returns a copy of every recorded frame, in arrival order.
func (d *Door) Frames() []Frame {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Frame(nil), d.frames...)
}

// Queued returns the frames the session would have taken.
func (d *Door) Queued() []Frame {
	var out []Frame
	for _, f := range d.Frames() {
		if f.Disposition == Queued {
			out = append(out, f)
		}
	}
	return out
}

// Conns returns every accepted connection so far.
func (d *Door) Conns() []ConnInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]ConnInfo(nil), d.conns...)
}

// WaitFrames blocks until at least n frames are recorded and returns them,
// or returns what it has with ctx.Err() or [ErrClosed].
func (d *Door) WaitFrames(ctx context.Context, n int) ([]Frame, error) {
	if !d.started() {
		return nil, ErrClosed
	}
	var out []Frame
	err := fakewait.Until(ctx, &d.changed, 0, d.done, ErrClosed, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		out = append([]Frame(nil), d.frames...)
		return len(out) >= n
	})
	return out, err
}

// WaitConns blocks until at least n connections have ended and returns
// every connection, or returns with ctx.Err() or [ErrClosed].
func (d *Door) WaitConns(ctx context.Context, n int) ([]ConnInfo, error) {
	if !d.started() {
		return nil, ErrClosed
	}
	var out []ConnInfo
	err := fakewait.Until(ctx, &d.changed, 0, d.done, ErrClosed, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		out = append([]ConnInfo(nil), d.conns...)
		ended := 0
		for _, c := range out {
			if c.End != EndOpen {
				ended++
			}
		}
		return ended >= n
	})
	return out, err
}

// started reports whether d was made by New or Listen.
func (d *Door) started() bool { return d != nil && d.ln != nil }

// notify wakes the waiters.
func (d *Door) notify() { d.changed.Notify() }

func (d *Door) accept() {
	defer d.wg.Done()
	for {
		c, err := d.ln.AcceptUnix()
		if err != nil {
			select {
			case <-d.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		pid := peerPID(c)
		d.mu.Lock()
		select {
		case <-d.done:
			d.mu.Unlock()
			c.Close()
			return
		default:
		}
		n := len(d.conns) + 1
		d.conns = append(d.conns, ConnInfo{N: n, PeerPID: pid})
		d.open[n] = c
		d.wg.Add(1)
		d.mu.Unlock()
		go d.serve(c, n, pid)
	}
}

func (d *Door) end(n int, c *net.UnixConn, why EndReason) {
	c.Close()
	d.mu.Lock()
	delete(d.open, n)
	select {
	case <-d.done:
		if why == EndError || why == EndSilent {
			why = EndClosed
		}
	default:
	}
	d.conns[n-1].End = why
	d.notify()
	d.mu.Unlock()
}

// serve reads one connection the way the real receiver does.
func (d *Door) serve(c *net.UnixConn, n, pid int) {
	defer d.wg.Done()
	c.SetReadDeadline(time.Now().Add(d.cfg.firstLine))
	sawLine := false
	var buf []byte
	chunk := make([]byte, 64<<10)
	for {
		k, err := c.Read(chunk)
		if k > 0 {
			buf = append(buf, chunk[:k]...)
			if utf16Len(buf) > d.cfg.maxBuffer {
				d.end(n, c, EndOversize)
				return
			}
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				line := buf[:i]
				buf = buf[i+1:]
				if !sawLine {
					sawLine = true
					c.SetReadDeadline(time.Time{})
				}
				if blankJS(line) {
					continue
				}
				if refused := d.take(line, n, pid, false); refused {
					d.end(n, c, EndRefused)
					return
				}
			}
			// Keep the unconsumed tail in its own array so the chunk
			// reads do not pin every earlier line.
			buf = append([]byte(nil), buf...)
		}
		if err != nil {
			switch {
			case errors.Is(err, io.EOF):
				if !blankJS(buf) {
					if refused := d.take(buf, n, pid, true); refused {
						d.end(n, c, EndRefused)
						return
					}
				}
				d.end(n, c, EndEOF)
			case errors.Is(err, os.ErrDeadlineExceeded):
				d.end(n, c, EndSilent)
			default:
				d.end(n, c, EndError)
			}
			return
		}
	}
}

// take records one line and reports whether the fake refuses it.
func (d *Door) take(line []byte, n, pid int, final bool) (refused bool) {
	f := Frame{Raw: append([]byte(nil), line...), Conn: n, PeerPID: pid, Time: d.cfg.now(), Final: final}
	var obj map[string]json.RawMessage
	var v any
	switch {
	case json.Unmarshal(line, &v) != nil:
		f.Disposition = Unparseable
	case json.Unmarshal(line, &obj) != nil || str(obj["type"]) == nil:
		f.Disposition = Ignored // valid JSON, but no object with a string type
	default:
		f.Type = *str(obj["type"])
		switch f.Type {
		case "auth":
			f.Disposition = Auth
			if t := str(obj["token"]); t != nil {
				f.Token = station.Token(*t)
			}
		case "user":
			refused = d.user(&f, obj, pid)
		default:
			f.Disposition = Ignored
		}
	}
	d.mu.Lock()
	if f.Disposition == Queued && d.cfg.transcript != "" {
		if err := d.enqueueRow(f); err != nil && d.writeErr == nil {
			d.writeErr = err
		}
	}
	d.frames = append(d.frames, f)
	d.notify()
	d.mu.Unlock()
	return refused
}

// enqueueRow appends the queue-operation enqueue row of f to the
// transcript, in the real receiver's key order. Called with d.mu held, so
// rows are in frame order.
func (d *Door) enqueueRow(f Frame) error {
	sid := d.cfg.sessionID
	if sid == "" {
		sid = f.SessionID
	}
	row := struct {
		Type      string `json:"type"`
		Operation string `json:"operation"`
		Timestamp string `json:"timestamp"`
		SessionID string `json:"sessionId"`
		Content   string `json:"content"`
	}{"queue-operation", "enqueue", f.Time.UTC().Format("2006-01-02T15:04:05.000Z"), sid, f.Content}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // JSON.stringify's escaping
	if err := enc.Encode(row); err != nil {
		return err
	}
	_, err := fsx.AppendLine(d.cfg.transcript, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return err
}

func (d *Door) user(f *Frame, obj map[string]json.RawMessage, pid int) (refused bool) {
	f.From = "unknown"
	if raw, ok := obj["from"]; ok && string(raw) != "null" {
		if s := str(raw); s != nil {
			f.From = *s
		} else {
			f.From = string(raw)
		}
	}
	if s := str(obj["msg_id"]); s != nil && station.IsSessionID(*s) {
		f.MsgID = *s
	}
	f.Priority = "next"
	if s := str(obj["priority"]); s != nil && (*s == "now" || *s == "next" || *s == "later") {
		f.Priority = *s
	}
	rawSID, hasSID := obj["session_id"]
	if s := str(rawSID); s != nil {
		f.SessionID = *s
	}
	var msg map[string]json.RawMessage
	content := (*string)(nil)
	if json.Unmarshal(obj["message"], &msg) == nil {
		content = str(msg["content"])
	}
	if content != nil {
		f.Content = *content
	}

	if d.refuse.Load() || (d.cfg.refuseWhen != nil && d.cfg.refuseWhen(*f)) {
		f.Disposition = Refused
		return true
	}
	switch {
	case content == nil || *content == "":
		f.Disposition = IgnoredContent
	case hasSID && d.cfg.sessionID != "" && (str(rawSID) == nil || *str(rawSID) != d.cfg.sessionID):
		f.Disposition = DroppedSession
	default:
		f.Disposition = d.admit(f, pid)
	}
	return false
}

// admit is the ingress guard (internal/ingress): duplicate check first,
// then the bucket.
func (d *Door) admit(f *Frame, pid int) Disposition {
	if d.guard == nil {
		return Queued
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch d.guard.Admit(ingress.Key(f.From, pid), f.Content, f.Time) {
	case ingress.Duplicate:
		return DroppedDuplicate
	case ingress.RateLimited:
		return DroppedRateLimited
	}
	return Queued
}

// str returns the JSON string raw holds, or nil.
func str(raw json.RawMessage) *string {
	if len(raw) == 0 || raw[0] != '"' {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// utf16Len counts b as the receiver's UTF-8 decoder does: UTF-16 code units,
// an invalid byte as one U+FFFD, an incomplete trailing sequence not yet.
func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		if !utf8.FullRune(b) {
			break
		}
		r, size := utf8.DecodeRune(b)
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		b = b[size:]
	}
	return n
}

// blankJS reports whether line is empty after JavaScript's String.trim.
func blankJS(line []byte) bool {
	for len(line) > 0 {
		r, size := utf8.DecodeRune(line)
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		default:
			if r < 0x2000 || r > 0x200a {
				return false
			}
		}
		line = line[size:]
	}
	return true
}
