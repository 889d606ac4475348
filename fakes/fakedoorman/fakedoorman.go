// Package fakedoorman is a scripted stand-in for a session's doorman, for
// tests of senders (claudeinbox.Send, oo-claude send, and programs that
// speak inbox contract v1). It is not the real doorman: it never opens a
// door. It follows an inbox file by file events, as the contract says a
// doorman does, and writes the two files a sender reads: the heartbeat
// (<inbox>.doorman.json, replaced atomically) and one ack per line
// (<inbox>.ack, one O_APPEND line each, with sha256 and line_offset).
//
// [Options] script what a sender must cope with: a busy or idle session, a
// slow ack, no ack, a refusal, a stale heartbeat, a heartbeat of another
// session, a stopped doorman, a dead doorman pid. [Start] runs it in one
// goroutine; [Doorman.Stop] (also registered as a cleanup) ends it and
// waits for that goroutine, so goleak stays quiet.
package fakedoorman

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/fakes"
	"github.com/oo-family/oo-claude/fakes/internal/fakewait"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// Options script the doorman. The zero value is a healthy doorman of a
// busy session that acks every line at once (delivered-steer).
type Options struct {
	// PeerStatus is the session's status the acks report: busy (default)
	// → delivered-steer, idle → delivered-start.
	PeerStatus string
	// AckDelay is how long each line waits before its ack.
	AckDelay time.Duration
	// NoAck reads lines but never acks them: a sender times out.
	NoAck bool
	// Refuse, when set, acks every line with class refused and this reason
	// (a claudeinbox Reason, as the real doorman's acks carry one).
	Refuse inboxv1.Reason
	// Stale writes last_seen a minute in the past.
	Stale bool
	// HeartbeatSession is the session id the heartbeat names; "" means the
	// doorman's own (set another to fake a heartbeat of another session).
	HeartbeatSession string
	// State is the heartbeat's state; "" means following.
	State inboxv1.State
	// PID is the heartbeat's doorman pid; 0 means this process. [DeadPID]
	// gives one that does not run.
	PID int
	// OwnerPID is the heartbeat's owner_pid, the session's claude process
	// (a real doorman names its parent there); 0 means this process. A
	// test whose session has a registry row of its own (a live process of
	// its own) names that row's pid, so a send by full id finds the row
	// by the heartbeat, as it does for a real doorman.
	OwnerPID int
	// NoHeartbeat writes no heartbeat at all.
	NoHeartbeat bool
	// HeartbeatEvery is the heartbeat interval; 0 (or less) means 1 s.
	HeartbeatEvery time.Duration
	// NoOffset writes acks without line_offset, as a v1 doorman does.
	NoOffset bool
	// LastError is the heartbeat's last_error: why lines are pending
	// (with NoAck, e.g. "receiver-did-not-queue": the door took the line
	// but the receiver queued nothing).
	LastError string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Door, when set, is a session's door socket (a fakedoor's Path): each
	// line is carried through it as the real doorman carries it (one user
	// frame with the session id, the sender and the ack's msg_id) before it
	// is acked, and the ack is confirmed as the real doorman's is by the
	// receiver's enqueue row (confirm "transcript", queued_at the time the
	// door took it); a line the door does not take is not acked. Without it
	// the doorman acks without delivering anything (and without confirm).
	Door string
	// Transcript, with Door, is the session's transcript, where the door
	// writes the receiver's enqueue row of each line it queues
	// (fakedoor.Options.Transcript; fakeowner.Owner.Transcript): each line's
	// ack waits for its row there, as the real doorman's ack does, so a
	// sender that reads the ack finds the row written and the door's frame
	// recorded, and queued_at is the row's timestamp. A line whose row
	// does not come within 10 s (or before Stop) is not acked (Err
	// reports it). "" acks as soon as the door write returned, with
	// queued_at the time it returned.
	Transcript string
	// BeforeAck, when set, is called with the msg_id of each line the
	// doorman delivers, before its ack is written (on the doorman's
	// goroutine): a test plays the session's transcript rows for the line
	// there, so a sender that reads the ack finds them written, however
	// loaded the machine (a row written after the ack races the sender's
	// wait). It is not called for a refused line, which has no msg_id.
	BeforeAck func(msgID string)
}

// confirmWait bounds the wait for a line's enqueue row
// (Options.Transcript): generous, for loaded test machines.
const confirmWait = 10 * time.Second

// Doorman is a running fake doorman. Make one with [Start]: a Doorman not
// made by it (the zero value) runs nothing and has read and acked
// nothing (Stop does nothing, the counts are 0, Err is nil).
type Doorman struct {
	// Files are the inbox's files it reads and writes.
	Files     inboxv1.Files
	sessionID string
	opts      Options
	stop      chan struct{}
	done      chan struct{}
	ctx       context.Context // ends at Stop
	cancel    context.CancelFunc
	once      sync.Once
	acked     atomic.Int64
	ackSignal fakewait.Signal // fired after each ack is written
	delivered atomic.Int64    // acks of a delivered-* class
	read      atomic.Int64
	since     time.Time
	offset    int64
	inode     atomic.Uint64 // the inbox's, as last read
	peerPID   atomic.Int64  // the door's listener, as last delivered to
	errMu     sync.Mutex
	err       error
}

// DeadPID returns a pid that no process has: above the kernel's largest
// pid_max (2^22), so it is never recycled into a live one.
func DeadPID() int { return 1<<22 + 7 }

// Start runs a fake doorman for session sessionID's inbox in dir (created
// 0700 if absent). It writes its first heartbeat before it returns, then
// replays the inbox from the start and follows it. Stop runs at cleanup.
func Start(tb fakes.TB, dir, sessionID string, opts Options) *Doorman {
	tb.Helper()
	if err := fsx.MkdirPrivate(dir); err != nil {
		tb.Fatalf("fakedoorman: %v", err)
	}
	if opts.PeerStatus == "" {
		opts.PeerStatus = station.StatusBusy
	}
	if opts.PID == 0 {
		opts.PID = os.Getpid()
	}
	if opts.OwnerPID == 0 {
		opts.OwnerPID = os.Getpid()
	}
	if opts.HeartbeatEvery <= 0 {
		opts.HeartbeatEvery = time.Second
	}
	d := &Doorman{
		Files: inboxv1.FilesFor(dir, sessionID), sessionID: sessionID, opts: opts,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.since = d.now()
	// Armed before the first read (loop's drain), so no append is missed.
	w := fsx.NewWaker(50*time.Millisecond, d.Files.Inbox)
	if err := d.heartbeat(inboxv1.StateFollowing); err != nil {
		w.Close()
		tb.Fatalf("fakedoorman: heartbeat: %v", err)
	}
	go d.loop(w)
	tb.Cleanup(d.Stop)
	return d
}

func (d *Doorman) now() time.Time {
	if d.opts.Now != nil {
		return d.opts.Now()
	}
	return time.Now()
}

// Stop ends the doorman, writes a stopped heartbeat (unless scripted to
// write none) and waits for its goroutine. It is safe to call twice.
func (d *Doorman) Stop() {
	if d.stop == nil {
		return
	}
	d.once.Do(func() {
		d.cancel()
		close(d.stop)
		<-d.done
		if err := d.heartbeat(inboxv1.StateStopped); err != nil {
			d.fail(err)
		}
	})
}

// Acked is how many acks it wrote.
func (d *Doorman) Acked() int {
	return int(d.acked.Load())
}

// errStopped is WaitAcked's error once the doorman has stopped.
var errStopped = errors.New("fakedoorman: stopped")

// WaitAcked blocks until the doorman has written at least n acks, woken by
// each ack it writes (no polling). It returns ctx.Err() when ctx ends first,
// and an error once the doorman has stopped with fewer (also for a Doorman
// not made by [Start]).
func (d *Doorman) WaitAcked(ctx context.Context, n int) error {
	if d.done == nil {
		return errStopped
	}
	return fakewait.Until(ctx, &d.ackSignal, 0, d.done, errStopped, func() bool { return d.Acked() >= n })
}

// Read is how many lines it read.
func (d *Doorman) Read() int {
	return int(d.read.Load())
}

// Err is the first error the doorman met, if any.
func (d *Doorman) Err() error {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	return d.err
}

func (d *Doorman) fail(err error) {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	if d.err == nil {
		d.err = err
	}
}

func (d *Doorman) loop(w *fsx.Waker) {
	defer close(d.done)
	defer w.Close()
	hb := time.NewTicker(d.opts.HeartbeatEvery)
	defer hb.Stop()
	d.drain()
	for {
		select {
		case <-d.stop:
			return
		case <-w.C:
			d.drain()
		case <-hb.C:
			if err := d.heartbeat(inboxv1.StateFollowing); err != nil {
				d.fail(err)
			}
		}
	}
}

// drain handles every complete line after the offset.
func (d *Doorman) drain() {
	f, err := fsx.OpenRead(d.Files.Inbox)
	if err != nil {
		return // not there yet
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		d.inode.Store(fsx.Inode(fi))
	}
	if _, err := f.Seek(d.offset, io.SeekStart); err != nil {
		d.fail(err)
		return
	}
	b, err := io.ReadAll(f)
	if err != nil {
		d.fail(err)
		return
	}
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return
		}
		line, start := b[:i], d.offset
		b = b[i+1:]
		d.offset += int64(i + 1)
		d.read.Add(1)
		if !d.handle(line, start) {
			return
		}
	}
}

// handle acks one line; it returns false when the doorman is stopping.
func (d *Doorman) handle(line []byte, start int64) bool {
	if d.opts.AckDelay > 0 {
		t := time.NewTimer(d.opts.AckDelay)
		select {
		case <-d.stop:
			t.Stop()
			return false
		case <-t.C:
		}
	}
	if d.opts.NoAck {
		return true
	}
	msgID := uuid.NewString()
	var queuedAt *string // when the door took the line
	if d.opts.Door != "" && d.opts.Refuse == "" {
		m, err := inbox.Decode(line)
		if err != nil {
			return true // undeliverable: the fake leaves it
		}
		var mark int64 // where the transcript ends before the write
		if d.opts.Transcript != "" {
			if fi, err := os.Lstat(d.opts.Transcript); err == nil {
				mark = fi.Size()
			}
		}
		ctx, cancel := context.WithTimeout(d.ctx, confirmWait) // generous: it ends at the door's answer
		cred, err := (&door.Dialer{Settle: door.NoSettle}).Deliver(ctx, d.opts.Door, door.Message{SessionID: d.sessionID, From: m.From, MsgID: msgID, Priority: door.Priority(m.Priority), Text: m.Text})
		cancel()
		if err != nil {
			d.fail(err)
			return true
		}
		d.peerPID.Store(int64(cred.PID))
		ts := d.now().UTC().Format("2006-01-02T15:04:05.000Z")
		if d.opts.Transcript != "" {
			var ok bool
			if ts, ok = d.awaitEnqueue(m.Text, mark); !ok {
				return d.ctx.Err() == nil
			}
		}
		queuedAt = &ts
	}
	a := inboxv1.Ack{
		TS: jsonrow.FormatTime(d.now()), SHA256: inbox.SHA256(line), SessionID: d.sessionID,
		PeerStatus: d.opts.PeerStatus, MsgID: msgID, DoormanPID: d.opts.PID, V: inboxv1.Version,
		PeerStatusRaw: d.opts.PeerStatus, Inode: d.inode.Load(),
	}
	if !d.opts.NoOffset {
		a.LineOffset = &start
	}
	switch {
	case d.opts.Refuse != "":
		// As the real doorman refuses: no door frame (no msg_id) and no
		// session status.
		a.Class, a.Reason = inboxv1.AckRefused, string(d.opts.Refuse)
		a.MsgID, a.PeerStatus, a.PeerStatusRaw = "", "", ""
	case d.opts.PeerStatus == station.StatusIdle:
		a.Class = inboxv1.AckDeliveredStart
	default:
		a.Class = inboxv1.AckDeliveredSteer
	}
	if queuedAt != nil && a.Class != inboxv1.AckRefused {
		a.Confirm, a.QueuedAt = inboxv1.ConfirmTranscript, queuedAt
	}
	if m, err := inbox.Decode(line); err == nil {
		a.From = m.From
		if a.Class != inboxv1.AckRefused {
			a.Priority = m.Priority
		}
	}
	if d.opts.BeforeAck != nil && a.Class != inboxv1.AckRefused {
		d.opts.BeforeAck(a.MsgID)
	}
	if err := inbox.AppendAck(d.Files.Ack, a); err != nil {
		d.fail(err)
		return true
	}
	if a.Class != inboxv1.AckRefused {
		d.delivered.Add(1)
	}
	d.acked.Add(1)
	d.ackSignal.Notify()
	return true
}

// awaitEnqueue waits for the receiver's enqueue row of text appended to
// the transcript after byte from, and returns its timestamp. It fails the
// doorman when none comes within confirmWait (not when Stop ends the wait).
func (d *Doorman) awaitEnqueue(text string, from int64) (string, bool) {
	ctx, cancel := context.WithTimeout(d.ctx, confirmWait)
	defer cancel()
	f := transcript.Follow(ctx, d.opts.Transcript, from, transcript.FollowOptions{Poll: time.Second})
	defer f.Close()
	for {
		l, err := f.Next(ctx)
		switch {
		case err == nil:
			row, err := transcriptfile.ParseRow(l.Raw)
			var content string
			if err == nil && row.Type == transcriptfile.RowQueueOperation && row.Operation == transcriptfile.QueueEnqueue &&
				json.Unmarshal(row.Content, &content) == nil && content == text {
				return row.Timestamp, true
			}
		case errors.Is(err, transcript.ErrTruncated), errors.Is(err, transcript.ErrReplaced), errors.Is(err, transcript.ErrRowTooLong):
			// Read on.
		default:
			if d.ctx.Err() == nil {
				d.fail(fmt.Errorf("fakedoorman: no enqueue row of the line in %s: %w", d.opts.Transcript, err))
			}
			return "", false
		}
	}
}

func (d *Doorman) heartbeat(state inboxv1.State) error {
	if d.opts.NoHeartbeat {
		return nil
	}
	now := d.now()
	seen := now
	if d.opts.Stale {
		seen = now.Add(-time.Minute)
	}
	sid := d.opts.HeartbeatSession
	if sid == "" {
		sid = d.sessionID
	}
	if d.opts.State != "" && state == inboxv1.StateFollowing {
		state = d.opts.State
	}
	h := inboxv1.Heartbeat{
		PID: d.opts.PID, SessionID: sid, Since: jsonrow.FormatTime(d.since), LastSeen: jsonrow.FormatTime(seen),
		Delivered: int(d.delivered.Load()), Offset: d.offset, State: state, Mode: "fake", OwnerPID: d.opts.OwnerPID,
		LastError: d.opts.LastError, Inode: d.inode.Load(), PeerPID: int(d.peerPID.Load()), Socket: d.opts.Door,
		Version: "fakedoorman",
	}
	if state == inboxv1.StateStopped {
		h.StoppedAt = jsonrow.FormatTime(now)
	}
	return inbox.WriteHeartbeat(d.Files.Heartbeat, h)
}
