package inbox

import (
	"errors"
	"io/fs"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/jsonrow"
)

// maxHeartbeat bounds the read of a heartbeat file (a few hundred bytes
// when the doorman wrote it).
const maxHeartbeat = 1 << 20

// ReadHeartbeat reads a heartbeat file (at most 1 MiB: a larger one is
// fsx.ErrTooLarge). A missing file is fs.ErrNotExist.
func ReadHeartbeat(path string) (inboxv1.Heartbeat, error) {
	return readHeartbeat(nil, path)
}

// readHeartbeat is ReadHeartbeat through the listing l (nil: the path
// checked itself).
func readHeartbeat(l *Listing, path string) (inboxv1.Heartbeat, error) {
	b, err := l.appendFile(nil, path, maxHeartbeat)
	if err != nil {
		return inboxv1.Heartbeat{}, err
	}
	h, err := decodeHeartbeat(b)
	if err != nil {
		return inboxv1.Heartbeat{}, &fs.PathError{Op: "parse", Path: path, Err: err}
	}
	return h, nil
}

// Freshness is the verdict on one heartbeat.
type Freshness struct {
	Fresh bool
	// Age is now − last_seen; 0 when unknown.
	Age time.Duration
	// Reason is one of inboxv1's heartbeat reasons (ReasonHeartbeatMissing,
	// ..., ReasonOtherSession) when Fresh is false. For ReasonDoormanState,
	// Detail holds the state.
	Reason inboxv1.Reason
	Detail string
}

// CheckFreshness applies the contract's stricter reading (COMPATIBILITY.md,
// "Verdict classes and exit codes"): fresh means last_seen
// younger than 15 s, and also state unset or following, the doorman's pid
// alive (pidAlive may be nil to skip that check), and the heartbeat naming
// sessionID (when sessionID is not empty).
func CheckFreshness(h inboxv1.Heartbeat, now time.Time, sessionID string, pidAlive func(int) bool) Freshness {
	var f Freshness
	seen, err := jsonrow.ParseTime(h.LastSeen)
	if err == nil {
		f.Age = now.Sub(seen)
	}
	switch {
	case err != nil || f.Age > inboxv1.FreshFor || f.Age < -inboxv1.FreshFor:
		// A last_seen far in the future is no proof of life either (a
		// clock set wrong, or a forged file).
		f.Reason = inboxv1.ReasonHeartbeatStale
	case h.State != "" && h.State != inboxv1.StateFollowing:
		f.Reason, f.Detail = inboxv1.ReasonDoormanState, string(h.State)
	case sessionID != "" && h.SessionID != sessionID:
		f.Reason, f.Detail = inboxv1.ReasonOtherSession, h.SessionID
	case pidAlive != nil && !pidAlive(h.PID):
		f.Reason = inboxv1.ReasonDoormanGone
	default:
		f.Fresh = true
	}
	return f
}

// HeartbeatFreshness reads the heartbeat at path and checks it.
func HeartbeatFreshness(path string, now time.Time, sessionID string, pidAlive func(int) bool) (inboxv1.Heartbeat, Freshness) {
	return heartbeatFreshness(nil, path, now, sessionID, pidAlive)
}

// heartbeatFreshness is HeartbeatFreshness through the listing l.
func heartbeatFreshness(l *Listing, path string, now time.Time, sessionID string, pidAlive func(int) bool) (inboxv1.Heartbeat, Freshness) {
	h, err := readHeartbeat(l, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return h, Freshness{Reason: inboxv1.ReasonHeartbeatMissing}
	case err != nil:
		return h, Freshness{Reason: inboxv1.ReasonHeartbeatUnreadable, Detail: err.Error()}
	}
	return h, CheckFreshness(h, now, sessionID, pidAlive)
}
