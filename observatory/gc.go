package observatory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// DefaultGCAge is how long a session's inbox must have been quiet (its
// doorman's last beat, else its files' last change) before [GC] removes it.
const DefaultGCAge = 7 * 24 * time.Hour

// GCOptions configure [GC].
type GCOptions struct {
	// Station gives the registry (which sessions run), the process table
	// and the inbox dir (Station.Paths.InboxDir).
	Station *station.Station
	// OlderThan is the quiet time an inbox needs; <= 0 means DefaultGCAge.
	OlderThan time.Duration
	// DryRun judges and lists, removing nothing.
	DryRun bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Why an inbox is kept or removed ([GCItem].Why).
const (
	GCRemoved  = "removed" // not running, nothing pending (or lines for an id without a transcript), quiet long enough (or empty)
	GCWouldRm  = "would-remove"
	GCRunning  = "running"    // a live registry row names the session
	GCPending  = "pending"    // lines wait for the doorman (of a session that runs or has a transcript)
	GCFresh    = "fresh"      // quiet for less than OlderThan
	GCInUse    = "in-use"     // a doorman holds its lock or a sender is appending
	GCUnread   = "unreadable" // its state could not be read; kept
	GCRmFailed = "remove-failed"
)

// GCItem is the verdict on one session's inbox files.
type GCItem struct {
	Session string   `json:"session_id"`
	Why     string   `json:"why"`
	Detail  string   `json:"detail,omitempty"`
	Files   []string `json:"files"` // removed (or, in a dry run, that would be)
	// QuietS is how long the inbox has been quiet, in seconds.
	QuietS  float64 `json:"quiet_s"`
	Pending int64   `json:"pending"`
}

// GC collects the inbox files (.inbox, .ack, .offset, .doorman.lock,
// .doorman.json, .doorman.attempt) of sessions that do not run, hold no pending line and have
// been quiet longer than OlderThan: the doorman's last beat, else the newest
// change of the session's files. Pending lines keep an inbox only while
// something can deliver them: an inbox whose session id does not run and
// has no transcript on this station (Station.Paths.ProjectsDir; a mistyped
// id, or a start that never came) is collected once quiet, its item's
// Detail saying how many lines it held. An empty inbox (no line ever written) of a
// session that does not run is removed once quiet too. It never removes an
// inbox with a pending line, one a doorman holds, or a line a concurrent
// send appends: the final judgement is made under the inbox's removal
// protocol: an exclusive flock on the inbox file, which oo-claude's
// senders append under (COMPATIBILITY.md, "Inbox contract v1"). An inbox one of whose files is not
// a regular file of the user (a FIFO, socket, device, directory or symlink,
// another user's file, one others can write) or whose directory others can
// write is kept as [GCUnread], the detail naming the file and the fix.
// Items come sorted by session id; an unreadable registry is an error and
// removes nothing. When ctx ends GC stops before the next inbox, returning
// the items judged so far and an error wrapping ctx.Err().
func GC(ctx context.Context, opts GCOptions) ([]GCItem, error) {
	if opts.Station == nil {
		return nil, errNoStation
	}
	if ctx == nil {
		ctx = context.Background()
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	age := opts.OlderThan
	if age <= 0 {
		age = DefaultGCAge
	}
	st := opts.Station
	dir := st.Paths.InboxDir
	live, err := st.Live()
	if err != nil {
		return nil, pathError("read registry", st.Paths.SessionsDir, err)
	}
	running := map[string]bool{}
	for _, s := range live {
		running[strings.ToLower(s.SessionID)] = true
	}
	sids, err := inboxSessions(dir)
	if err != nil {
		return nil, pathError("read", dir, err)
	}
	alive := func(pid int) bool { return st.Proc.Alive(pid, "") }
	var items []GCItem
	for _, sid := range sids {
		if err := ctx.Err(); err != nil {
			return items, fmt.Errorf("gc stopped before %s: %w", sid, err)
		}
		it := GCItem{Session: sid}
		files := inboxv1.FilesFor(dir, sid)
		judge := func() (bool, error) {
			t := now()
			it.Why, it.Detail, it.Files = "", "", nil
			if running[strings.ToLower(sid)] {
				it.Why = GCRunning
				return false, nil
			}
			if err := gcTrust(files, st.UID()); err != nil {
				it.Why, it.Detail = GCUnread, err.Error()
				return false, nil
			}
			in, err := inbox.ReadState(dir, sid, t, alive)
			if err != nil {
				it.Why, it.Detail = GCUnread, err.Error()
				return false, nil
			}
			it.Pending = in.Pending
			if in.Pending > 0 {
				if !transcriptfile.Absent(st.Paths.ProjectsDir, sid) {
					it.Why = GCPending
					return false, nil
				}
				// No live session and no transcript has this id (a
				// mistyped one): no doorman, resume or gc would ever
				// take its lines. It goes once quiet, as any other.
				it.Detail = fmt.Sprintf("%d line(s) wait for a session id that does not run and has no transcript on this station: nothing will deliver them", in.Pending)
			}
			if in.Doorman != nil && in.Doorman.Fresh {
				it.Why, it.Detail = GCInUse, fmt.Sprintf("its doorman (pid %d) is fresh", in.Doorman.PID)
				return false, nil
			}
			quiet := t.Sub(lastActivity(files))
			it.QuietS = quiet.Round(time.Second).Seconds()
			if quiet < age {
				// A line queued for a session about to be started with
				// this id (send's ExpectStart) is kept this long.
				it.Why = GCFresh
				return false, nil
			}
			it.Files = existing(files)
			it.Why = GCRemoved
			return true, nil
		}
		// A first judgement without locks: only a candidate is locked (and
		// its lock file created), and a dry run takes no lock at all.
		if ok, _ := judge(); !ok || opts.DryRun {
			if ok && opts.DryRun {
				it.Why = GCWouldRm
			}
			items = append(items, it)
			continue
		}
		removed, err := inbox.RemoveInbox(files, judge)
		switch {
		case errors.Is(err, inbox.ErrInUse):
			it.Why, it.Detail, it.Files = GCInUse, err.Error(), nil
		case err != nil:
			it.Why, it.Detail = GCRmFailed, err.Error()
			it.Files = removed
		case it.Why == GCRemoved:
			it.Files = removed
		}
		items = append(items, it)
	}
	return items, nil
}

// inboxSessions lists the session ids that have any inbox file in dir.
func inboxSessions(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		i := strings.Index(name, ".inbox")
		if i <= 0 { // any type: one that is not a regular file is reported
			continue
		}
		sid := name[:i]
		switch name[i:] {
		case ".inbox", ".inbox.ack", ".inbox.offset", ".inbox.doorman.json", ".inbox.doorman.lock", ".inbox.doorman.attempt":
		default:
			continue
		}
		if station.IsSessionID(sid) {
			seen[sid] = true
		}
	}
	out := make([]string, 0, len(seen))
	for sid := range seen {
		out = append(out, sid)
	}
	sort.Strings(out)
	return out, nil
}

// lastActivity is the doorman's last beat, or, when it has none (or the
// files changed later), the newest modification of the session's files.
func lastActivity(files inboxv1.Files) time.Time {
	var last time.Time
	if h, err := inbox.ReadHeartbeat(files.Heartbeat); err == nil {
		if t, err := jsonrow.ParseTime(h.LastSeen); err == nil {
			last = t
		}
	}
	for _, p := range []string{files.Inbox, files.Ack, files.Offset, files.Heartbeat, files.Attempt} {
		if fi, err := os.Lstat(p); err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
	}
	return last
}

// existing lists the session's inbox files that exist.
func existing(files inboxv1.Files) []string {
	var out []string
	for _, p := range []string{files.Offset, files.Ack, files.Attempt, files.Inbox, files.Heartbeat, files.Lock} {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// gcTrust reports whether gc may judge and remove the inbox of files:
// [inbox.CheckTrust] for uid (the station's user), and the heartbeat (which gc reads
// for the last activity and removes) a regular file of the user too. Its
// error names the file and the fix.
func gcTrust(files inboxv1.Files, uid int) error {
	err := inbox.CheckTrust(files, uid)
	if err == nil {
		err = fsx.CheckFileAt(files.Heartbeat, uid)
	}
	if errors.Is(err, fsx.ErrSymlink) || errors.Is(err, fsx.ErrNotRegular) {
		err = fmt.Errorf("%w (fix: remove it; gc collects the inbox on a later run)", err)
	}
	return err
}
