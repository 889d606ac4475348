package doorman

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oo-family/oo-claude/internal/ids"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// delivery is one line on its way through the door: the line, whom it
// goes to, what an earlier write of it left, and this write's frame,
// record and confirmation. deliver carries it through its steps in order:
// look for a prior write → wait out the windows → pace → frame → record →
// write → confirm → ack.
type delivery struct {
	msg inbox.Message
	sha string
	off int64
	id  identity

	// prev is the recorded door write of the line before this one (by this
	// doorman or one that died), when hasPrev.
	prev    inbox.Attempt
	hasPrev bool

	paced time.Duration // how long the pacer held the line
	frame door.Message  // this write's frame, with its own msg_id

	// confirm: the session's transcript is located, so the write is
	// confirmed by the receiver's enqueue row (mark is its end before the
	// write, follow reads it after); else the write settles.
	confirm bool
	mark    transcriptMark
	follow  *transcript.Follower
	since   time.Time // the first write's time: an older row is not this line's

	att    inbox.Attempt // this write's record
	lateTS string        // a late row of an earlier write, found just before the write
	peer   int           // the listener's pid, once the write went out
}

// deliver carries one line through the door and acks it; an error leaves
// it pending (errStop: stopping; errSwitch: the identity changed).
func (fl *follower) deliver(ctx context.Context, msg inbox.Message, sha string, off int64) error {
	dl := &delivery{msg: msg, sha: sha, off: off}
	if err := fl.refreshIdentity(ctx, dl); err != nil {
		return err
	}
	if done, err := fl.earlierWrite(ctx, dl); done {
		return err
	}
	if err := fl.pace(ctx, dl); err != nil {
		return err
	}
	if err := fl.makeFrame(dl); err != nil {
		return err
	}
	fl.prepareRecord(ctx, dl)
	if done, err := fl.writeResult(ctx, dl, fl.write(ctx, dl)); done {
		return err
	}
	fl.pacer.record(msg.From, sha, fl.d.o.Host.now())
	if !dl.confirm {
		return fl.ackDelivered(ctx, dl, dl.frame.MsgID, inboxv1.ConfirmSettle, nil)
	}
	return fl.confirmWrite(ctx, dl)
}

// refreshIdentity takes the identity the line goes out under, worked out
// again if it may have changed (recheckIdentity): errSwitch when it no
// longer allows serving this inbox for this owner.
func (fl *follower) refreshIdentity(ctx context.Context, dl *delivery) error {
	err := fl.recheckIdentity(ctx)
	dl.id = fl.id
	return err
}

// earlierWrite settles what an earlier write of the line decides, if there
// was one (done reports that it decided, with err the step's result): a
// row the receiver queued for it is acked (a queued line is never written
// again); a write still inside the confirmation bound and the receiver's
// windows keeps the line waiting, looking for the late row meanwhile
// (whether that write was unconfirmed or its fate is unknown: the doorman
// died in its wait, the write failed part way); past the write limit the
// line is refused.
func (fl *follower) earlierWrite(ctx context.Context, dl *delivery) (done bool, err error) {
	d := fl.d
	dl.prev, dl.hasPrev = fl.attemptFor(dl.off, dl.sha)
	if !dl.hasPrev {
		return false, nil
	}
	if ts, ok := fl.lookLate(ctx, dl.id, dl.prev, dl.msg.Text); ok {
		d.logf("the line at offset %d was queued by the receiver at %s (an earlier write): acking it", dl.off, ts)
		return true, fl.ackDelivered(ctx, dl, dl.prev.MsgID, inboxv1.ConfirmTranscript, &ts)
	}
	at, _ := jsonrow.ParseTime(dl.prev.At)
	if wait := at.Add(max(fl.retryDelay(), d.confirmWait())).Sub(d.o.Host.now()); wait > 0 {
		return true, fl.notQueued(dl.off, dl.prev, wait)
	}
	if dl.prev.Writes >= maxWrites {
		d.logf("the receiver did not queue the line at offset %d after %d writes: refusing it", dl.off, dl.prev.Writes)
		return true, fl.refuse(dl.sha, dl.off, inboxv1.ReasonReceiverDidNotQueue)
	}
	return false, nil
}

// pace holds the line back while the receiver's ingress guard would drop
// it (the heartbeat says pacing meanwhile).
func (fl *follower) pace(ctx context.Context, dl *delivery) error {
	d := fl.d
	wait := fl.pacer.delay(dl.msg.From, dl.sha, d.o.Host.now())
	if wait <= 0 {
		return nil
	}
	d.update(func(s *Status) { s.Pacing = 1 })
	defer d.update(func(s *Status) { s.Pacing = 0 })
	start := d.o.Host.now()
	select {
	case <-ctx.Done():
		return errStop
	case <-d.o.After(wait):
	}
	dl.paced = d.o.Host.now().Sub(start)
	return nil
}

// makeFrame makes the line's door frame. A token the door cannot carry
// leaves the line waiting (bad-token): the session's token, not the line,
// is at fault. Any other fault of the frame is the door's to refuse.
func (fl *follower) makeFrame(dl *delivery) error {
	d := fl.d
	dl.frame = door.Message{SessionID: dl.id.SessionID, From: dl.msg.From, MsgID: ids.New(), Priority: door.Priority(dl.msg.Priority), Text: dl.msg.Text, Token: dl.id.Token}
	var me *door.MessageError
	if err := dl.frame.Validate(); !errors.As(err, &me) || me.Field != "token" {
		return nil
	}
	detail := string(inboxv1.ReasonBadToken) + ": the session's messaging token cannot be carried in a door frame (" + me.Reason + ")"
	d.update(func(s *Status) { s.LastError = detail })
	d.logf("%s; the line at offset %d waits", detail, dl.off)
	return &DeliveryError{Inbox: fl.files.Inbox, Offset: dl.off, Err: fmt.Errorf("%w: %s", ErrDeliveryFailed, detail)}
}

// prepareRecord marks the end of the session's transcript and makes this
// write's record; the record does not count the write (a write counts
// toward the limit once it returned unconfirmed). Where no transcript can
// be located the write settles instead (logged once per reason).
func (fl *follower) prepareRecord(ctx context.Context, dl *delivery) {
	d := fl.d
	mark, markErr := fl.markTranscript(dl.id)
	start := d.o.Host.now()
	dl.confirm, dl.mark, dl.since = markErr == nil, mark, start
	dl.att = inbox.Attempt{LineOffset: dl.off, SHA256: dl.sha, Inode: fl.ino, Gen: fl.gen, MsgID: dl.frame.MsgID, At: jsonrow.FormatTime(start)}
	if !dl.confirm {
		if fl.markErr == nil || fl.markErr.Error() != markErr.Error() {
			fl.markErr = markErr
			d.logf("the session's transcript cannot be located (%v): acking after the settle (confirm \"settle\")", markErr)
		}
		return
	}
	dl.att.Transcript, dl.att.TranscriptOffset = mark.Path, mark.Size
	if dl.hasPrev {
		dl.att.Writes = dl.prev.Writes
		dl.att.FirstAt, dl.att.FirstTranscript, dl.att.FirstTranscriptOffset = dl.prev.First()
		if t, err := jsonrow.ParseTime(dl.att.FirstAt); err == nil {
			dl.since = t
		}
	}
	dl.follow = fl.transcriptAt(ctx, mark)
}

// beforeWrite runs just before the frames go out (after the dial and the
// peer check, with the real door): a last look for a late row of an
// earlier write (one that came while this write was paced is seen by
// neither the first look nor this write's wait), then the record.
func (fl *follower) beforeWrite(ctx context.Context, dl *delivery) error {
	if !dl.confirm {
		return nil
	}
	if dl.hasPrev {
		if ts, ok := fl.lookLate(ctx, dl.id, dl.prev, dl.msg.Text); ok {
			dl.lateTS = ts
			return errQueuedBefore
		}
	}
	return fl.writeAttempt(dl.att)
}

// write dials the door and writes the frame, with beforeWrite between the
// dial and the write where the door allows it (recordingDoor), else before
// the dial. An error from beforeWrite is a *beforeError: nothing written.
func (fl *follower) write(ctx context.Context, dl *delivery) error {
	d := fl.d
	before := func() error { return fl.beforeWrite(ctx, dl) }
	var peer int
	var err error
	if rd, ok := d.o.Host.Door.(recordingDoor); ok {
		peer, err = rd.deliverRecorded(ctx, dl.id.Socket, expectPID(dl.id.OwnerPID), dl.frame, !dl.confirm, before)
	} else if err = before(); err != nil {
		err = &beforeError{err}
	} else {
		peer, err = d.o.Host.Door.Deliver(ctx, dl.id.Socket, expectPID(dl.id.OwnerPID), dl.frame, !dl.confirm)
	}
	if err == nil || settleCut(ctx, err) {
		dl.peer = peer
		return nil
	}
	return err
}

// writeResult decides what a write that did not go out in full means: a
// late row found just before it is acked; an unrecordable write was not
// made (the line waits: unrecorded, a write the receiver queued could be
// written again by the next doorman); a listener that is not the owner
// ends the inbox's service (nothing written); a frame the door refuses is
// refused; any other failure leaves the line waiting, its record kept as
// writeFailed says. done reports that it decided, with err the line's
// result; a write that went out (err nil) goes on to its confirmation.
func (fl *follower) writeResult(ctx context.Context, dl *delivery, err error) (done bool, _ error) {
	d := fl.d
	var be *beforeError
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, errQueuedBefore):
		d.logf("the line at offset %d was queued by the receiver at %s (an earlier write): acking it", dl.off, dl.lateTS)
		return true, fl.ackDelivered(ctx, dl, dl.prev.MsgID, inboxv1.ConfirmTranscript, &dl.lateTS)
	case errors.As(err, &be):
		detail := fmt.Sprintf("%s: the door write of the line at offset %d cannot be recorded: %v", inboxv1.ReasonAttemptUnwritable, dl.off, be.err)
		d.update(func(s *Status) { s.LastError = detail })
		d.logf("%s; the line waits", detail)
		return true, &DeliveryError{Inbox: fl.files.Inbox, Offset: dl.off, Err: fmt.Errorf("%w: %s", ErrDeliveryFailed, detail)}
	case ctx.Err() != nil:
		return true, errStop
	case errors.Is(err, door.ErrPeerMismatch):
		fl.id.State, fl.id.Detail = inboxv1.StatePeerMismatch, err.Error()
		d.update(func(s *Status) {
			s.State, s.Detail, s.LastError = inboxv1.StatePeerMismatch, err.Error(), err.Error()
		})
		d.logf("peer-mismatch: %v; nothing written, the line waits", err)
		return true, errSwitch
	case errors.Is(err, door.ErrInvalidMessage) || errors.Is(err, door.ErrTooLarge):
		return true, fl.refuse(dl.sha, dl.off, inboxv1.ReasonUndeliverable)
	}
	if dl.confirm {
		fl.writeFailed(err, dl.att, dl.prev, dl.hasPrev)
	}
	d.update(func(s *Status) { s.LastError = err.Error() })
	d.logf("delivery of the line at offset %d failed: %v; it waits", dl.off, err)
	return true, &DeliveryError{Inbox: fl.files.Inbox, Offset: dl.off, Err: fmt.Errorf("%w: %w", ErrDeliveryFailed, err)}
}

// confirmWrite waits for the receiver's enqueue row of the write and acks
// it; without the row (within the bound) the write is recorded as
// unconfirmed and the line waits.
func (fl *follower) confirmWrite(ctx context.Context, dl *delivery) error {
	d := fl.d
	ts, ok, broken := awaitEnqueue(ctx, dl.follow, dl.msg.Text, dl.since, dl.mark.Size, d.confirmWait())
	if broken {
		fl.dropTranscript()
	}
	if ok {
		return fl.ackDelivered(ctx, dl, dl.frame.MsgID, inboxv1.ConfirmTranscript, &ts)
	}
	if ctx.Err() != nil {
		return errStop // the attempt record lets the next doorman look for the row
	}
	fl.pacer.drain(dl.msg.From, d.o.Host.now())
	dl.att.Writes++
	dl.att.Unconfirmed = true
	if err := fl.writeAttempt(dl.att); err != nil {
		d.logf("cannot record the attempt (%v)", err)
	}
	att := dl.att
	fl.attempt = &att
	err := fl.notQueued(dl.off, dl.att, fl.retryDelay())
	// Counted once the reason is in the status: a reader that sees the
	// count sees why.
	d.update(func(s *Status) { s.Unconfirmed++ })
	return err
}

// writeFailed records a door write that failed. One that reached no
// receiver (the dial or the peer check failed) leaves the record as it was
// before it (the generation's record when there was none). One that may
// have gone out in part does not count against maxWrites, but its record
// stays: the next write looks for its row first and waits out the bound
// and the windows as after any write.
func (fl *follower) writeFailed(err error, att, prev inbox.Attempt, hasPrev bool) {
	var oe *door.OpError
	if errors.As(err, &oe) && (oe.Op == "dial" || oe.Op == "peercred") {
		if hasPrev {
			fl.attempt = &prev
			err = fl.writeAttempt(prev)
		} else {
			fl.attempt = nil
			err = fl.writeAttempt(inbox.GenerationRecord(fl.ino, fl.gen))
		}
		if err != nil {
			fl.d.logf("cannot record the attempt (%v)", err)
		}
		return
	}
	fl.attempt = &att
	if err := fl.writeAttempt(att); err != nil {
		fl.d.logf("cannot record the attempt (%v)", err)
	}
}

// attemptFor returns the recorded door write of the line (sha, off), if
// the last one was for it.
func (fl *follower) attemptFor(off int64, sha string) (inbox.Attempt, bool) {
	if fl.attempt != nil && fl.attempt.Matches(sha, off, fl.ino, fl.gen) {
		return *fl.attempt, true
	}
	a, ok := fl.recordedAttempt()
	if !ok || !a.Matches(sha, off, fl.ino, fl.gen) {
		return inbox.Attempt{}, false
	}
	fl.attempt = &a
	return a, true
}

// recordedAttempt is the attempt file's record (ok false: none, or none
// readable). It is read once a follower: then the follower, holding the
// inbox lock, is its only writer (writeAttempt), and knows it without
// reading it again for every line.
func (fl *follower) recordedAttempt() (inbox.Attempt, bool) {
	if !fl.onDisk.known {
		a, err := inbox.ReadAttempt(fl.files.Attempt)
		fl.onDisk = diskAttempt{known: true, ok: err == nil, a: a}
	}
	return fl.onDisk.a, fl.onDisk.ok
}

// writeAttempt replaces the attempt file with a, and remembers it as the
// record on disk; after a failed write the file is read again when needed.
func (fl *follower) writeAttempt(a inbox.Attempt) error {
	if err := inbox.WriteAttempt(fl.files.Attempt, a); err != nil {
		fl.onDisk = diskAttempt{}
		return err
	}
	fl.onDisk = diskAttempt{known: true, ok: true, a: a}
	return nil
}

// diskAttempt is what a follower knows of the attempt file's record.
type diskAttempt struct {
	known bool // read or written by this follower
	ok    bool // there is a record (a)
	a     inbox.Attempt
}

// notQueued reports a line the receiver has not queued: it stays pending.
func (fl *follower) notQueued(off int64, a inbox.Attempt, retryIn time.Duration) error {
	d := fl.d
	left := maxWrites - a.Writes
	var detail string
	if a.Unconfirmed {
		detail = fmt.Sprintf("%s: no enqueue row for the line at offset %d within %s of write %d of %d; ", inboxv1.ReasonReceiverDidNotQueue, off, d.confirmWait(), a.Writes, maxWrites)
	} else {
		detail = fmt.Sprintf("%s: the fate of the last door write of the line at offset %d is unknown (its doorman stopped before it returned, or it failed part way): it may have gone out; %d of %d writes counted; ", inboxv1.ReasonReceiverDidNotQueue, off, a.Writes, maxWrites)
	}
	if left > 0 {
		detail += fmt.Sprintf("next write in %.0f s, once the receiver's windows have passed", retryIn.Seconds())
	} else {
		detail += fmt.Sprintf("refused in %.0f s unless its row comes", retryIn.Seconds())
	}
	d.update(func(s *Status) { s.LastError = detail })
	d.logf("%s", detail)
	return &DeliveryError{Inbox: fl.files.Inbox, Offset: off, Err: fmt.Errorf("%w: %w", ErrDeliveryFailed, ErrNotQueued), RetryIn: retryIn}
}

// ackDelivered writes the delivered-* ack of a line the receiver took
// (msgID: the write it took; confirm and queuedAt: how that is known). An
// ack that cannot be written is retried as an ack (the line is never
// written to the door again for it), with the fault in the heartbeat.
func (fl *follower) ackDelivered(ctx context.Context, dl *delivery, msgID, confirm string, queuedAt *string) error {
	d := fl.d
	status, class := "busy", inboxv1.AckDeliveredSteer
	if dl.id.Status == station.StatusIdle {
		status, class = "idle", inboxv1.AckDeliveredStart
	}
	o := dl.off
	a := inboxv1.Ack{
		TS: jsonrow.FormatTime(d.o.Host.now()), SHA256: dl.sha, SessionID: dl.id.SessionID, PeerStatus: status, Class: class, MsgID: msgID,
		LineOffset: &o, Inode: fl.ino, Gen: fl.gen, From: dl.msg.From, PeerStatusRaw: dl.id.Status, DoormanPID: d.o.Host.PID, V: inboxv1.Version,
		PacedMS: dl.paced.Milliseconds(), Confirm: confirm, QueuedAt: queuedAt, Priority: dl.msg.Priority,
	}
	if err := fl.appendAckRetrying(ctx, a); err != nil {
		return err
	}
	fl.attempt = nil
	d.update(func(s *Status) {
		s.Delivered++
		if confirm == inboxv1.ConfirmTranscript {
			s.Confirmed++
		}
		if dl.peer != 0 {
			s.PeerPID = dl.peer
		}
		s.LastError = ""
	})
	return nil
}

// appendAckRetrying appends the ack a, retrying with backoff while it
// cannot be written (ack-unwritable in the heartbeat); with Once it
// returns a *DeliveryError instead.
func (fl *follower) appendAckRetrying(ctx context.Context, a inboxv1.Ack) error {
	d := fl.d
	backoff := time.Duration(0)
	for {
		err := fl.ack(a)
		if err == nil {
			return nil
		}
		detail := fmt.Sprintf("%s: the line at offset %d was delivered but its ack cannot be written: %v", inboxv1.ReasonAckUnwritable, *a.LineOffset, err)
		d.update(func(s *Status) { s.LastError = detail })
		d.logf("%s; retrying the ack", detail)
		if d.o.Once {
			return &DeliveryError{Inbox: fl.files.Inbox, Offset: *a.LineOffset, Err: fmt.Errorf("%w: %s", ErrDeliveryFailed, detail)}
		}
		backoff = min(max(2*backoff, backoffMin/4), backoffMax)
		select {
		case <-ctx.Done():
			return errStop
		case <-d.o.After(backoff):
		}
	}
}

// settleCut reports an error that only says the settle was cut short by
// the context: the frames were written in full, so the line counts as
// delivered (acking it now saves a duplicate on the next start).
func settleCut(ctx context.Context, err error) bool {
	var oe *door.OpError
	return ctx.Err() != nil && errors.As(err, &oe) && oe.Op == "settle" && errors.Is(err, ctx.Err())
}
