package claudeinbox

import (
	"context"
	"errors"
	"fmt"
	"time"
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

// transcriptMark is where the transcript ended before the append.
type transcriptMark struct {
	path string
	size int64
	err  error
}

// awaitSeen waits, after a delivered-* verdict, for the witness to see the
// line and records the answer in v. The class never changes: a line not
// seen in time is still delivered, with a note saying so.
func (s *Sender) awaitSeen(ctx context.Context, v *Verdict, m transcriptMark) error {
	seen := false
	v.Seen, v.Transcript = &seen, m.path
	if m.err != nil {
		v.Note = fmt.Sprintf("not seen: the session's transcript cannot be watched (%v); oo-claude read %s shows the line once the model took it", m.err, v.SessionID)
		return nil
	}
	start := s.now()
	seen, err := s.Witness.WaitSeen(ctx, m.path, m.size, v.MsgID, s.SeenWait)
	v.SeenAfter = s.now().Sub(start)
	if !seen {
		v.Note = fmt.Sprintf("not seen within %s: the door took the line, but the transcript has no row with its msg_id yet; oo-claude read %s shows it once the model takes it", s.SeenWait, v.SessionID)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return ctx.Err()
		}
		return &SendError{Op: "seen", Path: m.path, Err: err}
	}
	return nil
}
