package claudeinbox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
)

// delivery is one send as it passes its steps: the request, what each
// step found, and the verdict they fill in.
type delivery struct {
	s   *Sender // with this call's waits (Request.Waits)
	req Request
	v   Verdict

	line  string         // the final line (composeLine)
	t     station.Target // the resolved target (resolveTarget)
	files inboxv1.Files  // the target's inbox files
	mark  transcriptMark // where the transcript ended before the append
	// hb is the heartbeat resolving a full id read, for checkQueue
	// (whether or not its owner named the target's row: it is not read
	// twice before the append); nil when none was read. The verdict's
	// heartbeat is read after the append (judgeHeartbeat).
	hb     *inboxv1.Heartbeat
	hbPath string // the file hb was read from
	// ackFrom is the ack file's size before the append: the ack wait
	// reads from there.
	ackFrom int64
	// ledgerErr is set when the line is written but the throttle ledger
	// could not be updated: the verdict follows the line, the error tells
	// the caller.
	ledgerErr error
}

// step is one step of a send. done ends the send with the verdict as it
// stands and err.
type step func(ctx context.Context) (done bool, err error)

// send runs the steps of one send in order: check the options, compose
// the line, resolve the target, check that a doorman would follow its
// inbox, mark the transcript, check the inbox's trust, throttle and
// append, judge the heartbeat, await the ack, take the ack, await the
// proof.
func (s *Sender) send(ctx context.Context, req Request) (Verdict, error) {
	d := &delivery{s: s, req: req, v: Verdict{
		Target: req.Target, Wait: s.Wait, MinInterval: s.MinInterval, SeenWait: s.SeenWait, ReplyWait: s.ReplyWait,
		ClientVersion: s.ClientVersion, Station: s.StationName, Line: req.Line,
	}}
	for _, st := range []step{
		d.checkOptions, d.composeLine, d.resolveTarget, d.checkQueue, d.markTranscript,
		d.checkTrust, d.throttleAndAppend, d.judgeHeartbeat, d.awaitAck, d.takeAck, d.awaitProof,
	} {
		if done, err := st(ctx); done {
			return d.v, joinErr(err, d.ledgerErr)
		}
	}
	return d.v, d.ledgerErr
}

// proofWanted reports whether the send waits for the seen row or the reply.
func (s *Sender) proofWanted() bool { return s.SeenWait > 0 || s.ReplyWait > 0 }

// checkOptions refuses a Sender that cannot send at all.
func (d *delivery) checkOptions(context.Context) (bool, error) {
	s := d.s
	var err error
	switch _, isReply := s.Witness.(ReplyWitness); {
	case s.Station == nil:
		d.v.refuse(inboxv1.ReasonBadOption, ErrNoStation.Error())
		return true, ErrNoStation
	case !filepath.IsAbs(s.inboxDir()) || !filepath.IsAbs(s.stateDir()):
		// A zero station.Config's: the files would go to the
		// working directory, whatever it is.
		err = fmt.Errorf("%w: the inbox directory %q and the state directory %q must be absolute paths (a station.Config from ConfigFromEnv has them)", ErrBadOption, s.inboxDir(), s.stateDir())
	case s.Wait < 0 || s.MinInterval < 0 || s.SeenWait < 0 || s.ReplyWait < 0:
		err = fmt.Errorf("%w: wait %v, min interval %v, seen wait %v, reply wait %v (negative)", ErrBadOption, s.Wait, s.MinInterval, s.SeenWait, s.ReplyWait)
	case s.proofWanted() && s.Witness == nil:
		err = fmt.Errorf("%w: a seen or reply wait needs a Witness", ErrBadOption)
	case s.ReplyWait > 0 && !isReply:
		err = fmt.Errorf("%w: a reply wait needs a Witness that is a ReplyWitness", ErrBadOption)
	default:
		return false, nil
	}
	d.v.refuse(inboxv1.ReasonBadOption, err.Error())
	return true, err
}

// composeLine checks the sender name, the line and its priority, and
// builds the final line: tagged, or structured with its priority. It
// refuses a line the doorman would refuse, by the doorman's own decoding.
func (d *delivery) composeLine(context.Context) (bool, error) {
	v, req := &d.v, d.req
	v.From = req.From
	if v.From == "" {
		v.From = inboxv1.DefaultFrom
	}
	if err := inbox.CheckFrom(v.From); err != nil {
		v.refuse(inboxv1.ReasonBadFrom, fmt.Sprintf("From %q: %v (1–80 characters, no brackets, control or format characters)", v.From, err))
		return true, err
	}
	if strings.TrimSpace(req.Line) == "" {
		v.refuse(inboxv1.ReasonEmpty, "empty line: there is nothing to send")
		return true, inboxv1.ErrEmptyLine
	}
	if err := inboxv1.CheckPriority(req.Priority); err != nil {
		v.refuse(inboxv1.ReasonBadPriority, fmt.Sprintf("%v: the priority is now, next (the default) or later", err))
		return true, err
	}
	line := req.Line
	if st, ok := inbox.ParseStructured([]byte(line)); ok {
		if err := inbox.CheckFrom(st.From); st.From != "" && err != nil {
			v.refuse(inboxv1.ReasonBadFrom, fmt.Sprintf("the structured line's from %q: %v (1–80 characters, no brackets, control or format characters)", st.From, err))
			return true, err
		}
		if f := inbox.SanitizeFrom(st.From); f != "" {
			v.From = f
		}
	} else if tf, ok := inbox.SenderTag(line); ok {
		if f := inbox.SanitizeFrom(tf); f != "" {
			v.From = f
		}
	} else if !req.NoTag {
		line = inbox.Tagged(line, v.From)
	}
	if line, v.Priority = withPriority(line, req.Priority); v.Priority == "" {
		v.Priority = inboxv1.PriorityNext
	}
	d.line = line
	v.Line, v.Bytes, v.SHA256 = line, len(line), inbox.SHA256([]byte(line))
	// A structured line whose text holds a newline, a tag and nothing
	// else: the doorman would refuse it, so it is refused here.
	if _, err := inbox.Decode([]byte(line)); err != nil {
		v.refuse(lineReason(err), fmt.Sprintf("%v: a line is one line of valid UTF-8, not empty, at most %d bytes with its tag", err, inboxv1.MaxLineBytes))
		return true, err
	}
	return false, nil
}

// resolveTarget resolves the target to a session and its inbox files.
func (d *delivery) resolveTarget(context.Context) (bool, error) {
	s, v := d.s, &d.v
	t, err := d.resolve()
	if err != nil {
		var te *station.TargetError
		switch {
		case !errors.As(err, &te):
			v.refuse(inboxv1.ReasonIO, err.Error())
		case errors.Is(err, station.ErrAmbiguousTarget):
			v.refuse(inboxv1.ReasonAmbiguousTarget, err.Error()+" (use the full session id)")
		case errors.Is(err, station.ErrUnknownTarget):
			v.refuse(inboxv1.ReasonUnknownTarget, err.Error())
		default:
			v.refuse(inboxv1.ReasonBadTarget, err.Error())
		}
		return true, err
	}
	d.t = t
	v.SessionID, v.Running = t.SessionID, t.Running
	if t.Session != nil {
		v.Name, v.PID, v.Status = t.Session.Name, t.Session.PID, t.Session.Status
	}
	d.files = inboxv1.FilesFor(s.inboxDir(), t.SessionID)
	v.Inbox = d.files.Inbox
	return false, nil
}

// resolve resolves the target. A full session id whose doorman's
// heartbeat names its owner, the session's claude process, resolves to
// that process's registry row when it is a live row of this id: one row
// read, not the whole registry, and the row of the process whose doorman
// takes the line. Everything else is Station.Resolve's.
func (d *delivery) resolve() (station.Target, error) {
	s := d.s
	if id := strings.ToLower(strings.TrimSpace(d.req.Target)); station.IsSessionID(id) {
		path := inboxv1.FilesFor(s.inboxDir(), id).Heartbeat
		h, err := inbox.ReadHeartbeat(path)
		if err == nil {
			d.hb, d.hbPath = &h, path // checkQueue judges it, whatever resolves the id
		}
		if err == nil && strings.EqualFold(h.SessionID, id) && h.OwnerPID > 0 {
			if x, ok := s.Station.LiveByPID(h.OwnerPID); ok && strings.EqualFold(x.SessionID, id) {
				return station.Target{SessionID: id, Running: true, Session: &x, MatchedBy: station.MatchID}, nil
			}
		}
	}
	return s.Station.Resolve(d.req.Target)
}

// checkQueue refuses a line no doorman would ever take (Sender.checkQueue).
func (d *delivery) checkQueue(context.Context) (bool, error) {
	hb := d.hb
	if d.hbPath != d.files.Heartbeat {
		hb = nil // another file's (the id resolved to a row that spells it otherwise)
	}
	if err := d.s.checkQueue(&d.v, d.req, d.t, d.files, hb); err != nil {
		return true, err
	}
	return false, nil
}

// markTranscript notes where the transcript ends before the append, for
// the proof: the wait reads only rows written after the send.
func (d *delivery) markTranscript(context.Context) (bool, error) {
	if d.s.proofWanted() && d.t.Session != nil {
		m := &d.mark
		m.path, m.size, m.err = d.s.Witness.Mark(d.t.SessionID, d.t.Session.CWD)
	}
	return false, nil
}

// checkTrust refuses an inbox another user could have written: it is not
// ours to add to.
func (d *delivery) checkTrust(context.Context) (bool, error) {
	if err := inbox.CheckTrust(d.files, d.s.Station.UID()); err != nil {
		return true, d.s.refuseFile(&d.v, d.files.Inbox, err)
	}
	return false, nil
}

// throttleAndAppend applies the throttle and appends the line, one
// decision under the ledger's lock, after Sender.BeforeWrite; a ctx
// that ended before it writes nothing.
func (d *delivery) throttleAndAppend(ctx context.Context) (bool, error) {
	s, v := d.s, &d.v
	if s.BeforeWrite != nil {
		s.BeforeWrite()
	}
	if err := ctx.Err(); err != nil {
		v.refuse(inboxv1.ReasonCanceled, "the send was cancelled before the line was written")
		v.InterruptedBy = interruptedBy(ctx)
		return true, err
	}
	stateDir := s.stateDir()
	d.ackFrom = fileSize(d.files.Ack)
	th := inbox.ThrottleFor(stateDir, s.MinInterval, s.Now)
	adm, err := th.Do(ctx, v.SessionID, v.From, func() error {
		off, err := inbox.AppendInbox(d.files.Inbox, []byte(d.line))
		if err == nil {
			v.Written, v.LineOffset = true, off
		}
		return err
	})
	switch {
	case err != nil && !v.Written && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// Cancelled while waiting for the ledger's lock: nothing written.
		v.refuse(inboxv1.ReasonCanceled, "the send was cancelled before the line was written")
		v.InterruptedBy = interruptedBy(ctx)
		return true, ctx.Err()
	case err != nil && !adm.Admitted:
		v.refuse(inboxv1.ReasonIO, "throttle ledger: "+err.Error())
		return true, pathError("throttle", th.Dir, err)
	case err != nil && !v.Written && (errors.Is(err, fsx.ErrSymlink) || errors.Is(err, fsx.ErrNotRegular) || errors.Is(err, fsx.ErrUntrusted)):
		return true, s.refuseFile(v, d.files.Inbox, err)
	case err != nil && !v.Written:
		v.refuse(inboxv1.ReasonIO, err.Error())
		return true, pathError("append", d.files.Inbox, err)
	case !adm.Admitted:
		secs := int(math.Ceil(adm.RetryAfter.Seconds()))
		v.Class, v.Reason, v.RetryAfter = Dropped, inboxv1.ReasonThrottled, adm.RetryAfter
		v.Note = fmt.Sprintf("throttled: one line per %s from %q to this session; the line was not written, resend it after %d s", s.MinInterval, v.From, secs)
		return true, nil
	case err != nil:
		// The line is in the file and only the ledger update failed.
		d.ledgerErr = pathError("throttle", th.Dir, err)
	}
	return false, nil
}

// judgeHeartbeat queues the line for a session that does not run, or
// whose doorman is not fresh; the ack is awaited only from a fresh one.
func (d *delivery) judgeHeartbeat(context.Context) (bool, error) {
	s, v := d.s, &d.v
	if !d.t.Running {
		v.Class = QueuedOffline
		v.Note = "no running session has this id: the line waits in the inbox for the session's next doorman"
		v.Hint = "oo-claude resume " + v.SessionID
		return true, nil
	}
	h, fr := inbox.HeartbeatFreshness(d.files.Heartbeat, s.now(), v.SessionID, func(pid int) bool { return s.Station.Proc.Alive(pid, "") })
	v.Doorman = &DoormanStatus{Fresh: fr.Fresh, PID: h.PID, Age: fr.Age, State: string(h.State), NotFreshBecause: inboxv1.Reason(fr.Reason)}
	v.Doorman.setLastError(h.LastError)
	if !fr.Fresh {
		v.Class, v.Reason = QueuedNoDoorman, inboxv1.Reason(fr.Reason)
		v.Note = notFreshNote(fr) + ": the line waits in the inbox until the session's doorman runs"
		return true, nil
	}
	return false, nil
}

// awaitAck waits for the doorman's ack of the line. No ack within the
// wait is a timeout, a ctx that ended first an interruption: the line
// waits in the inbox either way.
func (d *delivery) awaitAck(ctx context.Context) (bool, error) {
	s, v := d.s, &d.v
	start := s.now()
	ack, err := s.awaitAck(ctx, d.files, d.ackFrom, v.SHA256, v.LineOffset, v.SessionID)
	v.Waited = s.now().Sub(start)
	switch {
	case ack == nil && err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		v.Class, v.InterruptedBy = Interrupted, interruptedBy(ctx)
		v.Note = fmt.Sprintf("interrupted (%s) %.1fs into the wait for the doorman's ack: the line is in the inbox and waits for the doorman; do not resend it", v.InterruptedBy, v.Waited.Seconds())
		return true, err
	case ack == nil:
		v.Class = Timeout
		v.Note = fmt.Sprintf("the doorman is fresh but no ack came within %s: the line waits in the inbox; do not resend it", s.Wait)
		if hb, herr := inbox.ReadHeartbeat(d.files.Heartbeat); herr == nil {
			v.Doorman.setLastError(hb.LastError)
		}
		if e := v.Doorman.LastError; e != "" {
			// Why the doorman holds it (e.g. receiver-did-not-queue).
			v.Note += " (the doorman says: " + e + ")"
		}
		return true, err
	}
	v.ack = ack
	return false, nil
}

// takeAck reads the verdict off the ack and, when a wait for the proof
// follows, reports the delivery to OnAck.
func (d *delivery) takeAck(context.Context) (bool, error) {
	s, v, ack := d.s, &d.v, d.v.ack
	v.PeerStatus, v.MsgID = ack.PeerStatus, ack.MsgID
	if ack.Class != inboxv1.AckRefused {
		v.Confirm = ack.Confirm
		if ack.QueuedAt != nil {
			v.QueuedAt = *ack.QueuedAt
		}
	}
	switch ack.Class {
	case inboxv1.AckRefused:
		v.Class, v.Reason = Refused, inboxv1.Reason(ack.Reason)
		if v.Reason == "" {
			v.Reason = inboxv1.ReasonDoormanRefused
		}
		v.Note = "the doorman refused the line (" + string(v.Reason) + "); it will not be delivered"
		return true, nil
	case inboxv1.AckDeliveredStart:
		v.Class = DeliveredStart
	default:
		v.Class = DeliveredSteer
	}
	if s.OnAck != nil && s.proofWanted() {
		ackV := *v
		ackV.At = s.now()
		s.OnAck(ackV)
	}
	return false, nil
}

// awaitProof waits for the seen row or the reply (Sender.awaitProof).
func (d *delivery) awaitProof(ctx context.Context) (bool, error) {
	if !d.s.proofWanted() {
		return false, nil
	}
	if err := d.s.awaitProof(ctx, &d.v, d.mark, d.t.Session, d.files); err != nil {
		return true, err
	}
	return false, nil
}
