package doorman

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/ingress"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/station"
)

// Timings that are not knobs.
const (
	// identityEvery is how often the identity is re-checked while idle (it
	// is also re-checked before each delivery).
	identityEvery = 2 * time.Second
	// standbyPoll is how often a standby doorman tries the inbox lock.
	standbyPoll = 250 * time.Millisecond
	// backoffMin and backoffMax bound the retry delay of a failed delivery.
	backoffMin = time.Second
	backoffMax = 10 * time.Second
	// readChunk is the read chunk: a line longer than it is refused
	// (too-long) without being held in memory.
	readChunk = 1 << 20
)

// Options configure a [Doorman].
type Options struct {
	// Host is every input about the machine and this process; nil means
	// [ThisProcess](Config, nil): the running process, without an
	// environment. A nil Host.Station or Host.Door is Config's.
	Host   *Host
	Config station.Config // paths, DoormanEnabled, DoormanPoll, DoormanHeartbeat
	Mode   Mode
	// Session, when set, is the session the caller expects the owner to
	// be; it must equal the owner's registry row (StateSessionMismatch,
	// StateSessionUnverifiable otherwise). "" follows the owner's.
	Session string
	// Once replays the unread lines and returns; a failed delivery is then
	// a [*DeliveryError] instead of a retry.
	Once bool
	// Log receives human log lines (stderr). nil discards them.
	Log io.Writer
	// After is the timer seam; nil means time.After.
	After func(time.Duration) <-chan time.Time
	// Version is reported in the heartbeat.
	Version string

	// Test seams (export_test.go).
	guard    ingress.Guard // the receiver's guard to pace for; zero: as measured
	noPacing bool          // no pacing: tests that measure the loop alone
	pollOnly bool          // follow by the safety poll alone, without file events
	caughtUp func()        // called each time the follow loop has handled every line there is (tests)
}

// Status is what a doorman reports about itself: the MCP tool's answer
// ([Report]) and the heartbeat are made from it.
type Status struct {
	State        inboxv1.State `json:"state"`
	Detail       string        `json:"detail,omitempty"`
	Mode         Mode          `json:"mode"`
	PID          int           `json:"pid"`
	SessionID    string        `json:"session_id,omitempty"`
	Inbox        string        `json:"inbox,omitempty"`
	OwnerPID     int           `json:"owner_pid,omitempty"`
	PeerPID      int           `json:"peer_pid,omitempty"`
	Socket       string        `json:"socket,omitempty"`
	Holder       bool          `json:"lock_holder"`
	Since        string        `json:"since,omitempty"`
	Delivered    int           `json:"delivered"`
	Confirmed    int           `json:"confirmed"`
	Unconfirmed  int           `json:"unconfirmed"`
	Refused      int           `json:"refused"`
	Offset       int64         `json:"offset"`
	Inode        uint64        `json:"inode,omitempty"`
	PendingBytes int64         `json:"pending_bytes"`
	Pacing       int           `json:"pacing,omitempty"`
	LastError    string        `json:"last_error,omitempty"`
	ThreadAlive  bool          `json:"thread_alive"`
}

// Doorman is one receiver. Create it with [New]; Run it once.
type Doorman struct {
	o   Options
	log *syncWriter

	mu sync.Mutex
	st Status

	// changed wakes the heartbeat loop after a status change (at most one
	// wake-up waits); hbMu guards hbLast, the heartbeat last written.
	changed chan struct{}
	hbMu    sync.Mutex
	hbLast  inboxv1.Heartbeat

	// ticker: the clock is the real one (no After seam), so the
	// heartbeat's interval is one fsx.Ticker, re-armed by the kernel as it
	// fires, instead of a new timer asked for after each beat (which
	// wakes the runtime's poller thread once more an interval). It is a
	// timerfd, not a runtime timer: it is an idle doorman's only timer,
	// and a runtime timer's due time wakes the runtime's monitor thread
	// too, which then spins in 20 µs sleeps until the poller's
	// epoll_wait, woken up to 0.1% of 5 s late, runs the beat.
	ticker bool

	wakeups atomic.Int64
	// inboxWatch is the current follower's inbox watch (tests count its
	// goroutine's wake-ups).
	inboxWatch atomic.Pointer[fsx.Waker]
}

// New returns a doorman for o. Zero fields take their defaults; a nil
// Host is [ThisProcess] of o.Config with no environment.
func New(o Options) *Doorman {
	if o.Mode == "" {
		o.Mode = ModeCLI
	}
	if o.Host == nil {
		o.Host = ThisProcess(o.Config, nil)
	} else {
		h := *o.Host // a copy: the defaults below do not touch the caller's
		if h.Station == nil {
			h.Station = station.New(o.Config.Paths)
		}
		if h.Door == nil {
			h.Door = DoorDialer{Settle: settleOf(o.Config)}
		}
		o.Host = &h
	}
	ticker := o.After == nil
	if o.After == nil {
		o.After = time.After
	}
	w := o.Log
	if w == nil {
		w = io.Discard
	}
	d := &Doorman{o: o, log: &syncWriter{w: w}, changed: make(chan struct{}, 1), ticker: ticker}
	d.st = Status{Mode: o.Mode, PID: o.Host.PID, State: StateStarting}
	return d
}

// Status returns a snapshot of the doorman's state.
func (d *Doorman) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st
}

// update changes the status and, when it changed, wakes the heartbeat
// loop, which writes the heartbeat if what it says changed. An update that
// changes nothing (the idle safety poll's pending bytes, still 0) wakes
// nobody.
func (d *Doorman) update(f func(*Status)) {
	d.mu.Lock()
	before := d.st
	f(&d.st)
	same := d.st == before
	d.mu.Unlock()
	if same {
		return
	}
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

func (d *Doorman) logf(format string, a ...any) {
	fmt.Fprintf(d.log, "oo-claude doorman: "+format+"\n", a...)
}

// DeliveryError is a line that could not be delivered; it stays pending.
type DeliveryError struct {
	Inbox  string
	Offset int64
	Err    error
	// RetryIn, when set, is when the line may next be written (a line the
	// receiver did not queue waits out the receiver's windows).
	RetryIn time.Duration
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("deliver %s at offset %d: %v", e.Inbox, e.Offset, e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// ErrDeliveryFailed is wrapped by every [*DeliveryError].
var ErrDeliveryFailed = errors.New("delivery failed, the line waits")

// errNotNew is Run's answer on a Doorman that New did not make.
var errNotNew = errors.New("doorman: not made by New")

// errSwitch ends serving one inbox: the identity changed.
var errSwitch = errors.New("identity changed")

// Run is the doorman: identity, lock, replay, follow, until ctx ends (or,
// with Once, until the unread lines are handled). It returns nil on a
// normal stop, an [*IdentityError] when this process may not deliver here
// (at once in the foreground; an MCP doorman keeps re-checking), and a
// [*DeliveryError] when Once met a line that could not be delivered. A
// Doorman not made by [New] (the zero value) returns an error.
func (d *Doorman) Run(ctx context.Context) error {
	if d.o.Host == nil {
		return errNotNew
	}
	d.update(func(s *Status) { s.ThreadAlive = true })
	defer d.update(func(s *Status) { s.ThreadAlive = false })
	if !d.o.Config.DoormanEnabled {
		d.update(func(s *Status) {
			s.State, s.Detail = inboxv1.StateSilenced, "OO_CLAUDE_DOORMAN=0: nothing is followed or written"
		})
		d.logf("silenced (OO_CLAUDE_DOORMAN=0)")
		if d.o.Once {
			return nil
		}
		<-ctx.Done()
		return nil
	}
	var prev identity
	var logged inboxv1.State
	for {
		id := d.o.Host.identify(ctx, d.o.Mode, d.o.Session, prev)
		if ctx.Err() != nil {
			d.update(func(s *Status) { s.State = inboxv1.StateStopped })
			return nil
		}
		if !id.ok() {
			d.update(func(s *Status) {
				s.State, s.Detail = id.State, id.Detail
				s.OwnerPID, s.PeerPID, s.Socket, s.SessionID = id.OwnerPID, id.PeerPID, id.Socket, id.SessionID
			})
			if id.State != logged {
				d.logf("%s: %s; writing nothing", id.State, id.Detail)
				logged = id.State
			}
			if d.o.Mode != ModeMCP || d.o.Once {
				return &IdentityError{State: id.State, Detail: id.Detail}
			}
			select {
			case <-ctx.Done():
				d.update(func(s *Status) { s.State = inboxv1.StateStopped })
				return nil
			case <-d.o.After(identityEvery):
			}
			prev = id
			continue
		}
		logged = ""
		err := d.serve(ctx, id)
		if ue := (*untrustedError)(nil); errors.As(err, &ue) && ctx.Err() == nil {
			// Found untrusted while it was followed: as at the start.
			err = d.untrusted(ctx, inboxv1.FilesFor(d.o.Config.InboxDir, id.SessionID), ue.cause)
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errSwitch) {
			prev = identity{}
			continue
		}
		if err != nil || d.o.Once {
			return err
		}
	}
}

// serve holds one session's inbox until ctx ends or the identity changes.
func (d *Doorman) serve(ctx context.Context, id identity) error {
	files := inboxv1.FilesFor(d.o.Config.InboxDir, id.SessionID)
	d.update(func(s *Status) {
		s.SessionID, s.Inbox, s.OwnerPID, s.PeerPID, s.Socket = id.SessionID, files.Inbox, id.OwnerPID, id.PeerPID, id.Socket
	})
	if err := inbox.CheckTrust(files, d.o.Host.Station.UID()); err != nil {
		return d.untrusted(ctx, files, err)
	}
	if err := ensureInbox(files.Inbox); err != nil {
		d.logf("cannot create inbox: %v", err)
		d.update(func(s *Status) { s.LastError = err.Error() })
		return err
	}
	lk, err := d.standby(ctx, files, id)
	if err != nil || lk == nil {
		return err
	}
	defer lk.Unlock()
	now := d.o.Host.now()
	d.update(func(s *Status) {
		s.Holder, s.State, s.Detail, s.Since = true, inboxv1.StateFollowing, id.Detail, jsonrow.FormatTime(now)
		s.LastError = ""
	})
	d.logf("following %s (%s)", files.Inbox, id.Detail)

	f, err := newFollower(d, files, id)
	if err != nil {
		d.update(func(s *Status) { s.LastError = err.Error() })
		d.logf("%v", err)
		return err
	}
	defer f.close()

	hbCtx, hbStop := context.WithCancel(context.Background())
	var hbDone sync.WaitGroup
	hbDone.Add(1)
	var beat func()
	if f.idEvents && d.pollEvery() == d.heartbeatEvery() {
		// One wake-up an interval for both (an idle doorman's only one).
		f.pollOnBeat, beat = true, f.poke
	}
	go func() {
		defer hbDone.Done()
		d.heartbeatLoop(hbCtx, files, beat)
	}()
	final := inboxv1.StateStopped
	defer func() {
		hbStop()
		hbDone.Wait()
		d.update(func(s *Status) {
			s.State, s.Holder = final, false
		})
		if err := d.writeHeartbeat(files, true); err != nil {
			d.logf("stopped heartbeat: %v", err)
		}
	}()
	if err := d.writeHeartbeat(files, false); err != nil {
		d.logf("heartbeat: %v", err)
	}
	err = f.run(ctx)
	if errors.Is(err, errSwitch) {
		cur := f.id
		if cur.ok() && cur.SessionID != id.SessionID {
			final = inboxv1.StateSwitched
		} else if !cur.ok() {
			final = cur.State
		}
	}
	return err
}

// untrustedError is what the follower returns when the inbox it follows
// fails inbox.CheckTrust (made writable by others, its directory too, a
// file replaced by another user's): serve's caller reports it as untrusted
// does at the start, after the follower let go of the inbox.
type untrustedError struct{ cause error }

func (e *untrustedError) Error() string { return "inbox untrusted: " + e.cause.Error() }
func (e *untrustedError) Unwrap() error { return e.cause }

// untrusted reports an inbox that fails inbox.CheckTrust (or is not a
// regular file): nothing is delivered from it, and the heartbeat says why,
// so sessions and doctor show it. In the foreground (and with Once) it is an
// *IdentityError; an MCP doorman checks again every identityEvery.
func (d *Doorman) untrusted(ctx context.Context, files inboxv1.Files, cause error) error {
	detail := cause.Error() + "; nothing is delivered from this inbox until it is fixed"
	prev := d.Status()
	d.update(func(s *Status) {
		s.State, s.Detail, s.LastError, s.Holder = inboxv1.StateUntrusted, detail, cause.Error(), false
	})
	if prev.State != inboxv1.StateUntrusted || prev.Detail != detail {
		d.logf("untrusted: %s", detail)
	}
	if err := d.writeHeartbeat(files, false); err != nil {
		d.logf("heartbeat: %v", err)
	}
	if d.o.Mode != ModeMCP || d.o.Once {
		return &IdentityError{State: inboxv1.StateUntrusted, Detail: detail}
	}
	select {
	case <-ctx.Done():
		d.update(func(s *Status) { s.State = inboxv1.StateStopped })
		return nil
	case <-d.o.After(identityEvery):
	}
	return errSwitch
}

// standby takes the inbox lock, waiting while another doorman holds it.
// It returns a nil lock (and nil error) when ctx ended.
func (d *Doorman) standby(ctx context.Context, files inboxv1.Files, id identity) (*fsx.Lock, error) {
	lk, err := fsx.TryLock(files.Lock)
	if err == nil {
		return lk, nil
	}
	if !errors.Is(err, fsx.ErrLocked) {
		d.logf("lock: %v", err)
		return nil, err
	}
	d.update(func(s *Status) {
		s.State, s.Detail = inboxv1.StateStandby, "another doorman holds "+files.Lock
	})
	d.logf("standby: another doorman follows %s", files.Inbox)
	if d.o.Once {
		return nil, &IdentityError{State: inboxv1.StateStandby, Detail: "another doorman holds " + files.Lock}
	}
	recheck := d.o.Host.now().Add(identityEvery)
	for {
		select {
		case <-ctx.Done():
			d.update(func(s *Status) { s.State = inboxv1.StateStopped })
			return nil, nil
		case <-d.o.After(standbyPoll):
		}
		if lk, err := fsx.TryLock(files.Lock); err == nil {
			d.logf("took over %s", files.Inbox)
			return lk, nil
		} else if !errors.Is(err, fsx.ErrLocked) {
			return nil, err
		}
		if now := d.o.Host.now(); now.After(recheck) {
			recheck = now.Add(identityEvery)
			nid := d.o.Host.identify(ctx, d.o.Mode, d.o.Session, id)
			if !nid.ok() || nid.SessionID != id.SessionID {
				return nil, errSwitch
			}
		}
	}
}

// defaultHeartbeat is the heartbeat interval when Config has none: the
// contract's (refreshed at least every 5 s; readers take it as fresh for
// 15 s).
const defaultHeartbeat = 5 * time.Second

// heartbeatEvery is Config.DoormanHeartbeat, else defaultHeartbeat.
func (d *Doorman) heartbeatEvery() time.Duration {
	if every := d.o.Config.DoormanHeartbeat; every > 0 {
		return every
	}
	return defaultHeartbeat
}

// pollEvery is the safety poll, Config.DoormanPoll, else 5 s.
func (d *Doorman) pollEvery() time.Duration {
	if poll := d.o.Config.DoormanPoll; poll > 0 {
		return poll
	}
	return 5 * time.Second
}

// heartbeatLoop writes the heartbeat when what it says changes and, to
// show the doorman lives, once an interval (heartbeatEvery): an idle
// doorman wakes once an interval, for one write, and never fsyncs it
// (advisory state, inbox.WriteHeartbeat). beat, when set, is called after
// each interval's write: the follower's safety poll rides on the
// heartbeat's wake-up instead of a timer of its own. On the real clock
// the interval is one fsx.Ticker; on an Options.After seam one timer is
// asked for at a time, and each is waited out (none is left behind to fire
// for nobody).
func (d *Doorman) heartbeatLoop(ctx context.Context, files inboxv1.Files, beat func()) {
	every := d.heartbeatEvery()
	var due <-chan time.Time
	if d.ticker {
		t := fsx.NewTicker(every)
		defer t.Stop()
		due = t.C
	} else {
		due = d.o.After(every)
	}
	for {
		interval := false
		select {
		case <-ctx.Done():
			return
		case <-d.changed:
			if !d.heartbeatChanged() {
				continue
			}
		case <-due:
			interval = true
		}
		if ctx.Err() != nil {
			return
		}
		if err := d.writeHeartbeat(files, false); err != nil {
			d.logf("heartbeat: %v", err)
		}
		if interval {
			if !d.ticker {
				due = d.o.After(every)
			}
			if beat != nil {
				beat()
			}
		}
	}
}

// heartbeat is the heartbeat of the current status, its last_seen now.
func (d *Doorman) heartbeat(stopped bool) inboxv1.Heartbeat {
	st := d.Status()
	now := jsonrow.FormatTime(d.o.Host.now())
	h := inboxv1.Heartbeat{
		PID: st.PID, SessionID: st.SessionID, Since: st.Since, LastSeen: now,
		Delivered: st.Delivered, Offset: st.Offset,
		State: st.State, Inode: st.Inode, OwnerPID: st.OwnerPID, PeerPID: st.PeerPID, Socket: st.Socket,
		Mode: string(st.Mode), Version: d.o.Version, PendingBytes: st.PendingBytes, LastError: st.LastError,
		Pacing: st.Pacing, Confirmed: st.Confirmed, Unconfirmed: st.Unconfirmed,
	}
	if stopped {
		h.StoppedAt = now
	}
	return h
}

// heartbeatChanged reports whether the heartbeat would say something other
// than the last one written (last_seen aside).
func (d *Doorman) heartbeatChanged() bool {
	h := d.heartbeat(false)
	d.hbMu.Lock()
	defer d.hbMu.Unlock()
	h.LastSeen = d.hbLast.LastSeen
	return h != d.hbLast
}

// writeHeartbeat replaces <inbox>.doorman.json with the current status.
func (d *Doorman) writeHeartbeat(files inboxv1.Files, stopped bool) error {
	h := d.heartbeat(stopped)
	d.hbMu.Lock()
	defer d.hbMu.Unlock()
	if err := inbox.WriteHeartbeat(files.Heartbeat, h); err != nil {
		return err
	}
	d.hbLast = h
	return nil
}

// ensureInbox creates the inbox file (0600, its directory 0700) if absent.
func ensureInbox(path string) error {
	f, err := fsx.OpenAppend(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// syncWriter serialises log lines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// inodeOf returns the inode of an open file.
func inodeOf(fi os.FileInfo) uint64 { return fsx.Inode(fi) }

// Report is the answer of the MCP tool: the status, the heartbeat on disk
// (nil when this doorman holds no inbox and none exists) and the complete
// lines after the offset.
func (d *Doorman) Report() Report {
	st := d.Status()
	r := Report{
		Inbox: st.Inbox, SessionID: st.SessionID, State: st.State, Detail: st.Detail,
		Delivered: st.Delivered, Refused: st.Refused, PendingBytes: st.PendingBytes,
		ThreadAlive: st.ThreadAlive, LastError: st.LastError,
	}
	if st.Inbox == "" {
		return r
	}
	files := inboxv1.FilesFor(d.o.Config.InboxDir, st.SessionID)
	if h, err := inbox.ReadHeartbeat(files.Heartbeat); err == nil {
		r.Heartbeat = &h
	}
	off := st.Offset
	if !st.Holder {
		if n, err := inbox.ReadOffset(files.Offset); err == nil {
			off = n
		}
	}
	r.Pending, r.PendingBytes = countLines(files.Inbox, off)
	return r
}

// countLines counts the complete lines after off (reading at most 64 MiB).
func countLines(path string, off int64) (int, int64) {
	f, err := fsx.OpenRead(path)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= off {
		return 0, 0
	}
	n := 0
	buf := make([]byte, 64<<10)
	r := io.NewSectionReader(f, off, min(fi.Size()-off, 64<<20))
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil {
			break
		}
	}
	return n, fi.Size() - off
}
