package transcript

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// ErrBadMsgID: the msg_id to wait for is not a UUID (the door keeps a
// msg_id only when it is one, so no row can carry anything else).
var ErrBadMsgID = errors.New("transcript: msg_id is not a UUID")

// SeenOptions tune WaitSeen.
type SeenOptions struct {
	// From is the byte offset where the scan starts: take the transcript's
	// size before the send (the size Witness.Mark returns), so only rows appended since are
	// read. A row that straddles From is left out.
	From int64
	// Wait is how long to wait for the row; 0 or less looks once.
	Wait time.Duration
	// Poll is the fallback timer; 0 means one second.
	Poll time.Duration
}

// WaitSeen waits up to opts.Wait for the transcript at path to show a row
// appended after opts.From that carries msgID as its peer origin's msg_id:
// the queued_command attachment row of a line absorbed into a running turn,
// or the user row of a line that started a turn. Either row is Claude
// Code's record that the line went to the model. It returns true as soon as
// such a row is complete (a row still being written is read once its "\n"
// lands), false when the wait ends without one.
//
// The wait is a Follower from opts.From: the transcript need not exist when
// it begins, file events wake it (with a coarse one-second timer behind
// them), only the rows appended since are read, and nothing is locked or
// written. A truncated or replaced transcript is read again from its start.
// Its file watch is let go as it returns, not waited for (Follower.Drop).
// When ctx ends first it returns false and ctx's error. A msgID that is not
// a UUID is ErrBadMsgID; a symlink or other non-regular file at path is
// ErrNotRegular (it is never followed).
func WaitSeen(ctx context.Context, path, msgID string, opts SeenOptions) (bool, error) {
	if !station.IsSessionID(msgID) {
		return false, pathError("seen", path, ErrBadMsgID)
	}
	want := []byte(msgID)
	wctx, cancel := context.WithTimeout(ctx, max(opts.Wait, 0))
	defer cancel()
	f := Follow(ctx, path, opts.From, FollowOptions{Poll: opts.Poll})
	defer f.Drop()
	for {
		l, err := f.Next(wctx)
		switch {
		case err == nil:
			if bytes.Contains(l.Raw, want) && seenRow(l.Raw, msgID) {
				return true, nil
			}
		case errors.Is(err, ErrTruncated), errors.Is(err, ErrReplaced), errors.Is(err, ErrRowTooLong):
			// What is there now is all new: read it.
		case ctx.Err() != nil:
			return false, ctx.Err()
		case wctx.Err() != nil:
			return false, nil
		default:
			return false, err
		}
	}
}

// seenRow reports whether line is a row that shows the model the peer
// line whose door frame carried msgID (transcriptfile's one rule,
// Row.PeerLineMsgID).
func seenRow(line []byte, msgID string) bool {
	row, err := transcriptfile.ParseRow(line)
	return err == nil && msgID != "" && row.PeerLineMsgID() == msgID
}

// Witness proves from transcripts that the model saw a delivered line. It
// is what claudeinbox's Sender takes as its Witness (claudeinbox reads no
// transcripts itself): Mark before the line is appended, WaitSeen after the
// doorman's ack.
type Witness struct {
	// ProjectsDir is Claude Code's <config dir>/projects.
	ProjectsDir string
	// Poll is WaitSeen's fallback timer; 0 means one second.
	Poll time.Duration
}

// Mark returns where the transcript of session sessionID ends now: the file
// Locate finds and its size, or, when the session has no transcript yet,
// the file Claude Code will create for cwd (in the project directory named
// after cwd) with size 0. Pass them to WaitSeen and WaitReply as path and
// from, so only the rows appended after the mark are read. Without a cwd a
// missing transcript is ErrNotFound; a session id that is not a UUID is
// ErrBadSessionID; several candidates are ErrAmbiguous.
func (w Witness) Mark(sessionID, cwd string) (path string, size int64, err error) {
	p, err := Locate(w.ProjectsDir, sessionID, cwd)
	if err != nil {
		if errors.Is(err, ErrNotFound) && cwd != "" {
			return filepath.Join(w.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sessionID+transcriptfile.Ext), 0, nil
		}
		return "", 0, err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return "", 0, pathError("mark", p, err)
	}
	return p, fi.Size(), nil
}

// WaitSeen waits up to wait for a row appended to path after from whose
// peer origin carries msgID (see the function WaitSeen).
func (w Witness) WaitSeen(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (bool, error) {
	return WaitSeen(ctx, path, msgID, SeenOptions{From: from, Wait: wait, Poll: w.Poll})
}
