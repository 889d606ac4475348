package claudeinbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oo-family/oo-claude/receipt"
)

// A Witness proves that the model saw a delivered line: the session's
// transcript shows a row whose origin.msg_id is the ack's msg_id.
// claudeinbox reads no transcripts itself; transcript.Witness is the real
// one.
type Witness interface {
	// Mark returns the session's transcript and its size now. Send calls
	// it once the target resolved to a running session, before the line
	// is appended, so the wait reads only rows written after the send.
	Mark(sessionID, cwd string) (path string, size int64, err error)
	// WaitSeen waits up to wait for a row appended to path after from
	// whose peer origin carries msgID; false when none came in time.
	WaitSeen(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (bool, error)
}

// Reply is a session's answer to a delivered line (Verdict.Reply): the
// assistant's text after the model took the line, to the end of that turn
// or the next prompt, with the tools it called. transcript.ReadReply states
// the rules.
type Reply = receipt.Reply

// A ReplyWitness reads the reply to a delivered line from the session's
// transcript, for [Sender.ReplyWait]; transcript.Witness is the real one.
type ReplyWitness interface {
	Witness
	// WaitReply waits up to wait for the complete reply to the line whose
	// door frame carried msgID, in the rows appended to path after from.
	// It returns nil when none was complete in time, and ctx's error when
	// ctx ended first.
	WaitReply(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (*Reply, error)
}

// transcriptMark is where the transcript ended before the append.
type transcriptMark struct {
	path string
	size int64
	err  error
}

// awaitSeen waits, after a delivered-* verdict, for the witness to see the
// line and records the answer in v. The class never changes: a line not
// seen in time is still delivered, with a note saying so.
func (s *Sender) awaitSeen(ctx context.Context, v *Verdict, m transcriptMark, wait time.Duration) error {
	seen := false
	v.Seen, v.Transcript = &seen, m.path
	if m.err != nil {
		v.Note = fmt.Sprintf("not seen: the session's transcript cannot be watched (%v)", m.err)
		return nil
	}
	v.TranscriptOffset, v.waited = m.size, true
	start := s.now()
	seen, err := s.Witness.WaitSeen(ctx, m.path, m.size, v.MsgID, wait)
	v.SeenAfter = s.now().Sub(start)
	if !seen {
		v.Note = fmt.Sprintf("not seen within %s: the door took the line, but the transcript has no row with its msg_id yet", wait)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return ctx.Err()
		}
		return &SendError{Op: "seen", Path: m.path, Err: err}
	}
	return nil
}

// awaitReply waits, after a delivered-* verdict, for the model to take the
// line and answer it, all within s.ReplyWait, and records both in v: Seen
// as awaitSeen does, then Reply. The class never changes.
func (s *Sender) awaitReply(ctx context.Context, v *Verdict, m transcriptMark) error {
	rw := s.Witness.(ReplyWitness) // checked by send
	start := s.now()
	v.SeenWait = s.ReplyWait
	err := s.awaitSeen(ctx, v, m, s.ReplyWait)
	if err != nil || m.err != nil {
		v.ReplyAfter = s.now().Sub(start)
		return err
	}
	if !*v.Seen {
		v.ReplyAfter = s.now().Sub(start)
		v.Note = fmt.Sprintf("no reply within %s: the door took the line, but the transcript has no row with its msg_id yet", s.ReplyWait)
		return nil
	}
	left := s.ReplyWait - s.now().Sub(start)
	r, err := rw.WaitReply(ctx, m.path, m.size, v.MsgID, max(left, 0))
	v.ReplyAfter = s.now().Sub(start)
	v.Reply = r
	if r == nil && err == nil {
		v.Note = fmt.Sprintf("no reply within %s: the model took the line (seen after %.1fs) but has not finished answering it", s.ReplyWait, v.SeenAfter.Seconds())
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return ctx.Err()
		}
		return &SendError{Op: "reply", Path: m.path, Err: err}
	}
	return nil
}
