package claudeinbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
)

// A Witness proves that the model saw a delivered line: the session's
// transcript shows a row whose origin.msg_id is the ack's msg_id.
// claudeinbox reads no transcripts itself; transcript.Witness is the real
// one, the one [NewSender] sets.
type Witness interface {
	// Mark returns the session's transcript and its size now. Send calls
	// it once the target resolved to a running session, before the line
	// is appended, so the wait reads only rows written after the send.
	Mark(sessionID, cwd string) (path string, size int64, err error)
	// WaitSeen waits up to wait for a row appended to path after from
	// whose peer origin carries msgID; false when none came in time. When
	// ctx ends first it returns false and ctx's error (Send ends ctx when
	// the session ends, too).
	WaitSeen(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (bool, error)
}

// A ReplyWitness reads the reply to a delivered line from the session's
// transcript, for [Sender.ReplyWait]; transcript.Witness is the real one.
type ReplyWitness interface {
	Witness
	// WaitReply waits up to wait for the complete reply to the line whose
	// door frame carried msgID, in the rows appended to path after from.
	// It returns nil when none was complete in time, and ctx's error when
	// ctx ended first.
	WaitReply(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (*receipt.Reply, error)
}

// transcriptMark is where the transcript ended before the append.
type transcriptMark struct {
	path string
	size int64
	err  error
}

// awaitProof waits, after a delivered-* verdict, for the witness to see
// the line (SeenWait) or for the session's answer (ReplyWait), and records
// what it found in v. The wait ends early when the session ends (see
// watchSession) or ctx does. The class never changes: a line not seen in
// time is still delivered, with a note and v.WaitEnd saying why the wait
// ended without it.
func (s *Sender) awaitProof(ctx context.Context, v *Verdict, m transcriptMark, sess *station.Session, files inboxv1.Files) error {
	reply := s.ReplyWait > 0
	wait := s.SeenWait
	if reply {
		wait = s.ReplyWait
		v.SeenWait = s.ReplyWait // one budget for both
	}
	seen := false
	v.Seen, v.Transcript = &seen, m.path
	if m.err != nil {
		v.WaitEnd = inboxv1.ReasonIO
		v.Note = fmt.Sprintf("not seen: the session's transcript cannot be watched (%v)", m.err)
		return nil
	}
	v.TranscriptOffset, v.waited = m.size, true
	wctx, stop := s.watchSession(ctx, sess, files)
	defer stop()
	start := s.now()
	op, err := s.witness(wctx, v, m, wait, start)
	elapsed := s.now().Sub(start)
	if !*v.Seen {
		v.SeenAfter = elapsed
	}
	if reply {
		v.ReplyAfter = elapsed
	}
	ended := sessionEndOf(wctx)
	switch {
	case err == nil && (reply && v.Reply != nil || !reply && *v.Seen):
		return nil
	case err == nil:
		v.WaitEnd = inboxv1.ReasonWaitTimeout
		switch {
		case !reply:
			v.Note = fmt.Sprintf("not seen within %s: the door took the line, but the transcript has no row with its msg_id yet", wait)
		case !*v.Seen:
			v.Note = fmt.Sprintf("no reply within %s: the door took the line, but the transcript has no row with its msg_id yet", wait)
		default:
			v.Note = fmt.Sprintf("no reply within %s: the model took the line (seen after %.1fs) but has not finished answering it", wait, v.SeenAfter.Seconds())
		}
		return nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		v.WaitEnd, v.InterruptedBy = inboxv1.ReasonInterrupted, interruptedBy(ctx)
		v.Note = fmt.Sprintf("interrupted (%s) %.1fs after the ack: ", v.InterruptedBy, elapsed.Seconds()) + proofSoFar(v, reply)
		return ctx.Err()
	case ended != nil && errors.Is(err, context.Canceled):
		v.WaitEnd = inboxv1.ReasonSessionEnded
		v.Note = fmt.Sprintf("the session ended (%s) %.1fs after the ack: ", ended.why, elapsed.Seconds()) + proofSoFar(v, reply)
		return nil
	}
	v.WaitEnd = inboxv1.ReasonIO
	if !*v.Seen {
		v.Note = fmt.Sprintf("not seen: the door took the line, but the transcript could not be read (%v)", err)
	} else {
		v.Note = fmt.Sprintf("no reply: the model took the line (seen after %.1fs), but the transcript could not be read (%v)", v.SeenAfter.Seconds(), err)
	}
	return pathError(op, m.path, err)
}

// witness runs the seen wait and then, for a reply, the reply wait, all
// within wait from start; it fills v.Seen, v.SeenAfter and v.Reply and
// returns the op whose error it returns.
func (s *Sender) witness(ctx context.Context, v *Verdict, m transcriptMark, wait time.Duration, start time.Time) (string, error) {
	seen, err := s.Witness.WaitSeen(ctx, m.path, m.size, v.MsgID, wait)
	if seen {
		*v.Seen, v.SeenAfter = true, s.now().Sub(start)
	}
	if err != nil || !seen || s.ReplyWait <= 0 {
		return "seen", err
	}
	rw := s.Witness.(ReplyWitness) // checked by send
	left := wait - s.now().Sub(start)
	r, err := rw.WaitReply(ctx, m.path, m.size, v.MsgID, max(left, 0))
	if err == nil {
		v.Reply = r
	}
	return "reply", err
}

// proofSoFar is the end of the note of a wait cut short: what the
// transcript had shown by then.
func proofSoFar(v *Verdict, reply bool) string {
	switch {
	case !*v.Seen:
		return "the door took the line, but the transcript has no row with its msg_id yet"
	case reply:
		return fmt.Sprintf("the model took the line (seen after %.1fs) but had not finished answering it", v.SeenAfter.Seconds())
	}
	return "the line was seen"
}

// interruptedBy names what ended ctx: the signal's name when its cause
// has a method Signal() os.Signal (the CLI's cause does), else "canceled"
// or "deadline-exceeded".
func interruptedBy(ctx context.Context) string {
	var sig interface{ Signal() os.Signal }
	if errors.As(context.Cause(ctx), &sig) {
		if n := fsx.SignalName(sig.Signal()); n != "" {
			return n
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "deadline-exceeded"
	}
	return "canceled"
}
