package transcript

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
)

// Errors of ReadReply and WaitReply, wrapped in an *fs.PathError (Op "transcript reply").
var (
	// ErrNotSeen: no row after the offset carries the msg_id: the model
	// has not taken the line (yet).
	ErrNotSeen = errors.New("transcript: line not seen")
	// ErrReplyPending: the line was seen, but its reply is not complete
	// yet (the turn goes on and no next prompt came). The Reply returned
	// with it holds what was written so far.
	ErrReplyPending = errors.New("transcript: reply not complete")
)

// ReplyOptions tune ReadReply and WaitReply.
type ReplyOptions struct {
	// From is the byte offset where the scan starts: the transcript's
	// size before the send (the size Witness.Mark returns) reads only what came after it; 0
	// reads the whole transcript.
	From int64
	// Wait is how long WaitReply waits for the complete reply; 0 or less
	// looks once. ReadReply ignores it.
	Wait time.Duration
	// Poll is the follower's safety timer; 0 means one second.
	Poll time.Duration
}

// ReadReply returns the reply to the peer line whose door frame carried
// msgID, as the transcript at path holds it now (from opts.From on). The
// reply rules:
//
//   - The line is seen at the first row whose peer origin carries msgID: the
//     user row of a line that started a turn, or the queued_command
//     attachment row of a line absorbed into a running turn.
//   - Its reply is the text of the main-chain assistant rows after that
//     row, so text the model wrote before it took the line is never part of
//     it. Sidechain (sub-agent) rows are skipped, tool results are not text;
//     the tools called are listed in Reply.Tools.
//   - It ends with the turn's final answer (an assistant message whose
//     stop_reason is not tool_use and that calls no tool: TurnEnded), or at
//     the next prompt while the turn goes on: a user's or another peer's
//     line, either starting a turn or absorbed into this one once the
//     model has answered since (lines absorbed together share the answer).
//
// A line not seen is ErrNotSeen; a reply not complete yet is
// ErrReplyPending, returned with what was written so far. Both are wrapped
// in an *fs.PathError, like a msgID that is not a UUID (ErrBadMsgID) and a
// transcript that is missing or not a regular file.
func ReadReply(path, msgID string, opts ReplyOptions) (receipt.Reply, error) {
	if fi, err := os.Lstat(path); err != nil {
		return receipt.Reply{}, pathError("reply", path, err)
	} else if !fi.Mode().IsRegular() {
		return receipt.Reply{}, pathError("reply", path, ErrNotRegular)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a done context makes the follower read what is there, then stop
	return waitReply(ctx, ctx, path, msgID, opts, true)
}

// WaitReply waits up to opts.Wait for the complete reply to the peer line
// whose frame carried msgID, reading the rows appended to path after
// opts.From (take it from Witness.Mark before the send) as they come, by the
// rules of ReadReply. The transcript need not exist yet. Its file watch is
// let go as it returns, not waited for (Follower.Drop). When the wait ends
// first the error is ErrNotSeen or ErrReplyPending (with the reply so far);
// when ctx ends first it is ctx's error itself, with the reply so far.
func WaitReply(ctx context.Context, path, msgID string, opts ReplyOptions) (receipt.Reply, error) {
	wctx, cancel := context.WithTimeout(ctx, max(opts.Wait, 0))
	defer cancel()
	return waitReply(ctx, wctx, path, msgID, opts, false)
}

// waitReply follows path until the reply is complete or wctx ends; ctx is
// the caller's (its end is returned as such unless once is set: ReadReply's
// done context only means "what is there now").
func waitReply(ctx, wctx context.Context, path, msgID string, opts ReplyOptions, once bool) (receipt.Reply, error) {
	if !station.IsSessionID(msgID) {
		return receipt.Reply{}, pathError("reply", path, ErrBadMsgID)
	}
	f := Follow(ctx, path, opts.From, FollowOptions{Poll: opts.Poll})
	defer f.Drop()
	sc := replyScan{msgID: msgID}
	for {
		l, err := f.Next(wctx)
		switch {
		case err == nil:
			if sc.add(l.Raw) {
				return sc.reply(), nil
			}
			continue
		case errors.Is(err, ErrTruncated), errors.Is(err, ErrReplaced):
			// What is there now is all new: read it from the start.
			sc = replyScan{msgID: msgID}
			continue
		case errors.Is(err, ErrRowTooLong):
			continue
		case ctx.Err() != nil && !once:
			return sc.reply(), ctx.Err()
		case wctx.Err() == nil:
			return sc.reply(), err
		}
		// The wait (or, for ReadReply, the file) ended.
		if !sc.seen {
			return receipt.Reply{}, pathError("reply", path, ErrNotSeen)
		}
		return sc.reply(), pathError("reply", path, ErrReplyPending)
	}
}

// replyScan applies the reply rules of ReadReply to rows fed one at a time,
// in file order.
type replyScan struct {
	msgID    string
	seen     bool
	answered bool // an assistant row came after the seen row
	done     bool
	text     []string
	tools    []string
	stop     string
	ended    bool
	at       time.Time
}

// add takes the next row and reports whether the reply is complete. Rows
// after completion are ignored.
func (s *replyScan) add(raw []byte) bool {
	if s.done {
		return true
	}
	if !s.seen {
		if bytes.Contains(raw, []byte(s.msgID)) && seenRow(raw, s.msgID) {
			s.seen = true
		}
		return false
	}
	row, err := transcriptfile.ParseRow(raw)
	if err != nil || row.IsSidechain {
		return false
	}
	switch {
	case row.Type == transcriptfile.RowAssistant && row.Message != nil:
		s.answered = true
		calls := false
		for _, b := range row.Message.Blocks() {
			switch b.Type {
			case "text":
				if b.Text != "" {
					s.text = append(s.text, b.Text)
				}
			case "tool_use":
				calls = true
				s.tools = append(s.tools, b.Name)
			}
		}
		if sr := row.Message.StopReason; sr != "" {
			s.stop = sr
		}
		if t := row.Time(); !t.IsZero() {
			s.at = t
		}
		if !calls && row.Message.StopReason != "" && row.Message.StopReason != transcriptfile.StopToolUse {
			s.done, s.ended = true, true
		}
	case row.Type == transcriptfile.RowUser:
		if _, ok := promptKind(&row); ok {
			s.done = true // a new turn began without a final answer to this one
		}
	case row.Type == transcriptfile.RowAttachment && row.Attachment != nil && row.Attachment.Type == transcriptfile.AttachmentQueuedCommand:
		if s.answered {
			s.done = true // the next line, absorbed after the model answered this one
		}
	}
	return s.done
}

// reply returns the reply as fed so far.
func (s *replyScan) reply() receipt.Reply {
	tools := s.tools
	if tools == nil {
		tools = []string{}
	}
	return receipt.Reply{
		Text:       strings.Join(s.text, "\n"),
		Tools:      append([]string{}, tools...),
		StopReason: s.stop,
		TurnEnded:  s.ended,
		At:         s.at,
	}
}

// WaitReply waits up to wait for the complete reply to the line whose frame
// carried msgID, in the rows appended to path after from (see the function
// WaitReply). It returns nil when the line was not seen or its reply was
// not complete in time, and ctx's error itself when ctx ended first. It
// makes Witness a claudeinbox.ReplyWitness.
func (w Witness) WaitReply(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (*receipt.Reply, error) {
	r, err := WaitReply(ctx, path, msgID, ReplyOptions{From: from, Wait: wait, Poll: w.Poll})
	switch {
	case err == nil:
		return &r, nil
	case errors.Is(err, ErrNotSeen), errors.Is(err, ErrReplyPending):
		return nil, nil
	}
	return nil, err
}
