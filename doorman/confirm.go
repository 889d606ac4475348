package doorman

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/transcript"
)

// The retry policy of a line the receiver did not queue.
const (
	// maxWrites is how many times the doorman writes one line to the door
	// without seeing its enqueue row. Once the receiver's windows have
	// passed after the last unconfirmed write, with still no row, the line
	// is acked refused with reason inboxv1.ReasonReceiverDidNotQueue, so it
	// never blocks the lines after it for good.
	maxWrites = 3
	// rowSlack: an enqueue row stamped more than this before the line's
	// first write began is not one of its writes' (the receiver stamps in
	// milliseconds from the same clock).
	rowSlack = time.Second
)

// envProjectDirName is Claude Code's override of a session's project
// directory name (honoured with CLAUDE_CONFIG_DIR set). The doorman, a
// child of the session, inherits it.
const envProjectDirName = "CLAUDE_CODE_PROJECT_DIR_NAME"

// ErrNotQueued is wrapped by the *DeliveryError of a line the door took
// but the receiver did not queue (no enqueue row within the bound).
var ErrNotQueued = errors.New("the receiver did not queue the line")

// errConfirmOff: OO_CLAUDE_DOOR_CONFIRM_S=0.
var errConfirmOff = errors.New("confirmation is off (OO_CLAUDE_DOOR_CONFIRM_S=0)")

// confirmWait is how long the doorman waits for the enqueue row
// (station.Config.DoorConfirm, OO_CLAUDE_DOOR_CONFIRM_S, 2 s by default);
// 0 turns confirmation off: every delivery settles and is acked confirm
// "settle".
func (d *Doorman) confirmWait() time.Duration { return max(d.o.Config.DoorConfirm, 0) }

// retryDelay is how long after an unconfirmed write the next write may
// go: past the receiver's duplicate window and the refill of one token of
// the sender's bucket, so the retry is neither dropped again for the same
// reason nor taken while the first write could still be.
func (fl *follower) retryDelay() time.Duration {
	g := fl.pacer.guard()
	return max(g.DedupWindow, time.Duration(float64(time.Second)/g.RefillPerSecond)) + paceMargin
}

// transcriptMark is where a session's transcript ends at one moment: the
// file and its size (what transcript.Witness.Mark returns).
type transcriptMark struct {
	Path string
	Size int64
}

// markEnd is transcript.Witness.Mark as a transcriptMark.
func markEnd(projects, sessionID, cwd string) (transcriptMark, error) {
	p, size, err := transcript.Witness{ProjectsDir: projects}.Mark(sessionID, cwd)
	return transcriptMark{Path: p, Size: size}, err
}

// markTranscript returns where the session's transcript ends now: the file
// transcript.Witness.Mark finds for the session id (by the registry row's cwd,
// else in any project directory), or, for a session whose transcript is
// not written yet, the file Claude Code will create (in the directory
// CLAUDE_CODE_PROJECT_DIR_NAME names, when the session has it). A file
// found is kept for the next lines while the session id and cwd are the
// same and it is still a regular file there: only its size is read again.
func (fl *follower) markTranscript(id identity) (transcriptMark, error) {
	if fl.d.confirmWait() == 0 {
		return transcriptMark{}, errConfirmOff
	}
	if k := fl.located; k.path != "" && k.sessionID == id.SessionID && k.cwd == id.CWD {
		if fi, err := os.Lstat(k.path); err == nil && fi.Mode().IsRegular() {
			return transcriptMark{Path: k.path, Size: fi.Size()}, nil
		}
	}
	fl.located = locatedTranscript{}
	projects := fl.d.o.Config.ProjectsDir
	m, err := markEnd(projects, id.SessionID, id.CWD)
	if err != nil {
		return m, err
	}
	if m.Size == 0 {
		if name := fl.d.o.Host.getenv(envProjectDirName); name != "" && filepath.Base(name) == name && name != "." && name != ".." {
			if _, err := os.Lstat(m.Path); err != nil {
				m.Path = filepath.Join(projects, name, id.SessionID+transcriptfile.Ext)
			}
		}
	}
	if fi, err := os.Lstat(m.Path); err == nil && fi.Mode().IsRegular() {
		fl.located = locatedTranscript{sessionID: id.SessionID, cwd: id.CWD, path: m.Path}
	}
	return m, nil
}

// locatedTranscript is the transcript markTranscript found for a session
// id and cwd.
type locatedTranscript struct {
	sessionID, cwd, path string
}

var enqueueMark = []byte(`"enqueue"`)

// enqueued reports whether raw is the receiver's enqueue row of text,
// stamped no earlier than rowSlack before since; it returns the row's
// timestamp.
func enqueued(raw []byte, text string, since time.Time) (string, bool) {
	if !bytes.Contains(raw, enqueueMark) {
		return "", false
	}
	row, err := transcriptfile.ParseRow(raw)
	if err != nil || row.Type != transcriptfile.RowQueueOperation || row.Operation != transcriptfile.QueueEnqueue {
		return "", false
	}
	var content string
	if json.Unmarshal(row.Content, &content) != nil || content != text {
		return "", false
	}
	if ts, err := time.Parse(time.RFC3339Nano, row.Timestamp); err == nil && ts.Before(since.Add(-rowSlack)) {
		return "", false
	}
	return row.Timestamp, true
}

// awaitEnqueue reads f until the enqueue row of text, appended at or
// after byte from, comes or wait ends. broken reports a Follower that
// failed (not only a wait that ended): it is not to be used again.
func awaitEnqueue(ctx context.Context, f *transcript.Follower, text string, since time.Time, from int64, wait time.Duration) (ts string, ok, broken bool) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		l, err := f.Next(wctx)
		switch {
		case err == nil:
			if l.Offset < from {
				continue // a row from before the mark
			}
			if ts, ok := enqueued(l.Raw, text, since); ok {
				return ts, true, false
			}
		case errors.Is(err, transcript.ErrTruncated), errors.Is(err, transcript.ErrReplaced):
			from = 0 // another file from its start: the timestamp tells this write's row
		case errors.Is(err, transcript.ErrRowTooLong):
			// Read on.
		default:
			return "", false, wctx.Err() == nil
		}
	}
}

// maxReuseGap: a transcript follower kept from the last line is used for
// the next one when the transcript grew by at most this since it stopped
// (the rows in between are read and passed over); past it, a new one
// starts at the mark.
const maxReuseGap = 1 << 20

// transcriptAt returns a transcript follower positioned at or before mark
// on its file: the one kept from the last line when it can be, so a
// replay does not set up and tear down a file watch per line (closing an
// inotify instance costs milliseconds).
func (fl *follower) transcriptAt(ctx context.Context, m transcriptMark) *transcript.Follower {
	if t := fl.tf; t != nil && (fl.tfPath != m.Path || t.Offset() > m.Size || m.Size-t.Offset() > maxReuseGap || fl.tfCtx.Err() != nil) {
		fl.dropTranscript()
	}
	if fl.tf == nil {
		fl.tf = transcript.Follow(ctx, m.Path, m.Size, transcript.FollowOptions{Poll: fl.d.confirmWait() / 4})
		fl.tfPath, fl.tfCtx = m.Path, ctx
	}
	return fl.tf
}

// dropTranscript lets the kept transcript follower go without waiting
// for the kernel to retire its file watch (transcript.Follower.Drop): it
// is dropped as the doorman catches up, and a line appended meanwhile
// would wait out a close (6 to 42 ms traced) before its door write.
func (fl *follower) dropTranscript() {
	if fl.tf != nil {
		fl.tf.Drop()
	}
	fl.tf, fl.tfPath, fl.tfCtx = nil, "", nil
}

// closeTranscript closes the kept transcript follower and waits for its
// watch to be released: the doorman is stopping.
func (fl *follower) closeTranscript() {
	if fl.tf != nil {
		fl.tf.Close()
	}
	fl.tf, fl.tfPath, fl.tfCtx = nil, "", nil
}

// lookLate looks, without waiting, for the enqueue row of any earlier
// write of the line: stamped no earlier than the first write and appended
// after the first write's mark or the last write's, or from the start of
// the transcript the session has now when that is another file (a mark
// predicted a path the session did not use).
func (fl *follower) lookLate(ctx context.Context, id identity, a inbox.Attempt, text string) (string, bool) {
	firstAt, firstPath, firstOff := a.First()
	since, err := jsonrow.ParseTime(firstAt)
	if err != nil {
		return "", false
	}
	paths := map[string]int64{firstPath: firstOff}
	if o, ok := paths[a.Transcript]; !ok || a.TranscriptOffset < o {
		paths[a.Transcript] = a.TranscriptOffset
	}
	if m, err := markEnd(fl.d.o.Config.ProjectsDir, id.SessionID, id.CWD); err == nil {
		if _, ok := paths[m.Path]; !ok {
			paths[m.Path] = 0
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel() // Next only reads what is there
	for p, from := range paths {
		if p == "" {
			continue
		}
		f := transcript.Follow(ctx, p, from, transcript.FollowOptions{})
		ts, ok, _ := awaitEnqueue(done, f, text, since, from, 0)
		f.Close()
		if ok {
			return ts, true
		}
	}
	return "", false
}
