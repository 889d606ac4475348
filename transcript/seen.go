package transcript

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/oo-family/oo-claude/station"
)

// SeenPoll is WaitSeen's coarse fallback timer. File events on the
// transcript's directory wake the wait; the timer only covers events the
// kernel dropped (an overflowed inotify queue) or a watch that could not be
// set up.
const SeenPoll = time.Second

// ErrBadMsgID: the msg_id to wait for is not a UUID (the door keeps a
// msg_id only when it is one, so no row can carry anything else).
var ErrBadMsgID = errors.New("transcript: msg_id is not a UUID")

// Mark is where a session's transcript ends at one moment: the file and its
// size. A WaitSeen from a Mark taken before a send reads only the rows
// appended after it.
type Mark struct {
	// Path is the transcript. It may not exist yet: a brand-new session's
	// transcript is created with its first row.
	Path string
	// Size is the file's size when the mark was taken; 0 when it did not
	// exist.
	Size int64
}

// MarkEnd returns where the transcript of session sessionID ends now: the
// file Locate finds and its size, or, when the session has no transcript
// yet, the file Claude Code will create for cwd
// (<projectsDir>/<EncodeProjectDir(cwd)>/<sessionID>.jsonl) with size 0.
// Without a cwd a missing transcript is ErrNotFound; a session id that is
// not a UUID is ErrBadSessionID; several candidates are ErrAmbiguous.
func MarkEnd(projectsDir, sessionID, cwd string) (Mark, error) {
	p, err := Locate(projectsDir, sessionID, cwd)
	if err != nil {
		if errors.Is(err, ErrNotFound) && cwd != "" {
			return Mark{Path: filepath.Join(projectsDir, EncodeProjectDir(cwd), sessionID+Ext)}, nil
		}
		return Mark{}, err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return Mark{}, &Error{Op: "mark", Path: p, Err: err}
	}
	return Mark{Path: p, Size: fi.Size()}, nil
}

// SeenOptions tune WaitSeen.
type SeenOptions struct {
	// From is the byte offset where the scan starts: take the transcript's
	// size before the send (Mark.Size), so only rows appended since are
	// read. A row that straddles From is left out.
	From int64
	// Wait is how long to wait for the row; 0 or less looks once.
	Wait time.Duration
	// Poll is the fallback timer; 0 means SeenPoll.
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
// The transcript need not exist when the wait begins. WaitSeen is woken by
// file events on the transcript's directory (or, while that directory does
// not exist, on its parent) and by a coarse SeenPoll timer; each wake reads
// only the rows appended since the last one, from the end backwards, and
// nothing is locked or written. When ctx ends first it returns false and
// ctx's error. A msgID that is not a UUID is ErrBadMsgID; a symlink or other
// non-regular file at path is ErrNotRegular (it is never followed).
func WaitSeen(ctx context.Context, path, msgID string, opts SeenOptions) (bool, error) {
	if !station.IsSessionID(msgID) {
		return false, &Error{Op: "seen", Path: path, Err: ErrBadMsgID}
	}
	path = filepath.Clean(path)
	sc := &seenScan{path: path, lo: max(opts.From, 0), want: []byte(msgID)}
	poll := opts.Poll
	if poll <= 0 {
		poll = SeenPoll
	}
	var events chan fsnotify.Event
	var errs chan error
	var w *fsnotify.Watcher
	dir := filepath.Dir(path)
	if opts.Wait > 0 {
		var err error
		if w, err = fsnotify.NewWatcher(); err == nil {
			defer w.Close()
			events, errs = w.Events, w.Errors
			if err := w.Add(dir); err != nil {
				// The project directory of a brand-new session appears
				// with its transcript: watch for it.
				if err := w.Add(filepath.Dir(dir)); err != nil {
					events, errs, poll = nil, nil, poll/10
				}
			}
		} else {
			poll /= 10
		}
	}
	if ok, err := sc.scan(); ok || err != nil || opts.Wait <= 0 {
		return ok, err
	}
	deadline := time.NewTimer(opts.Wait)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if ok, err := sc.scan(); ok || err != nil {
				return ok, err
			}
			return false, ctx.Err()
		case <-deadline.C:
			return sc.scan()
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			switch {
			case ev.Name == path:
			case ev.Name == dir && ev.Has(fsnotify.Create):
				// The directory appeared: follow it, and look now in
				// case the transcript was created before the watch.
				w.Add(dir)
			default:
				continue
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
			// A dropped event: the scan below catches up.
		case <-tick.C:
		}
		if ok, err := sc.scan(); ok || err != nil {
			return ok, err
		}
	}
}

// seenScan looks for the row in what was appended since the last look.
type seenScan struct {
	path string
	lo   int64 // rows before lo were looked at (or predate the wait)
	want []byte
}

// scan reads the complete rows in [lo, size) from the last backwards and
// moves lo to the end of the last complete row. A missing file is not an
// error (it is yet to be created).
func (s *seenScan) scan() (bool, error) {
	f, size, err := openTranscript(s.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		if fi, lerr := os.Lstat(s.path); lerr == nil && !fi.Mode().IsRegular() {
			// O_NOFOLLOW refused a symlink: say so with the sentinel.
			return false, &Error{Op: "open", Path: s.path, Err: ErrNotRegular}
		}
		return false, err
	}
	defer f.Close()
	if size < s.lo {
		// Truncated or replaced: what is there now is all new.
		s.lo = 0
	}
	if size == s.lo {
		return false, nil
	}
	rd := NewReader(f, size, size-s.lo)
	for {
		line, _, err := rd.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, &Error{Op: "read", Path: s.path, Err: err}
		}
		if bytes.Contains(line, s.want) && s.matches(line) {
			return true, nil
		}
	}
	s.lo = size - rd.TornBytes()
	return false, nil
}

// matches reports whether line is a queued_command attachment row or a user
// row whose peer origin carries the msg_id.
func (s *seenScan) matches(line []byte) bool {
	row, err := ParseRow(line)
	if err != nil {
		return false
	}
	switch {
	case row.Type == RowUser:
	case row.Type == RowAttachment && row.Attachment != nil && row.Attachment.Type == AttachmentQueuedCommand:
	default:
		return false
	}
	o := row.PeerOrigin()
	return o != nil && o.MsgID == string(s.want)
}

// Witness proves from transcripts that the model saw a delivered line. It
// is what claudeinbox's Sender takes as its Witness (claudeinbox reads no
// transcripts itself): Mark before the line is appended, WaitSeen after the
// doorman's ack.
type Witness struct {
	// ProjectsDir is Claude Code's <config dir>/projects.
	ProjectsDir string
	// Poll is WaitSeen's fallback timer; 0 means SeenPoll.
	Poll time.Duration
}

// Mark returns the session's transcript and its size now (see MarkEnd).
func (w Witness) Mark(sessionID, cwd string) (path string, size int64, err error) {
	m, err := MarkEnd(w.ProjectsDir, sessionID, cwd)
	return m.Path, m.Size, err
}

// WaitSeen waits up to wait for a row appended to path after from whose
// peer origin carries msgID (see the function WaitSeen).
func (w Witness) WaitSeen(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (bool, error) {
	return WaitSeen(ctx, path, msgID, SeenOptions{From: from, Wait: wait, Poll: w.Poll})
}
