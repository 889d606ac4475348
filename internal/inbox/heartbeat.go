package inbox

import (
	"encoding/json"
	"errors"
	"io/fs"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/jsonrow"
)

// FreshFor is how young a heartbeat's last_seen must be to count as fresh.
const FreshFor = 15 * time.Second

// State is what a doorman says it is doing, in its heartbeat's "state".
type State string

// Doorman states. Following is the only state in which lines are carried.
const (
	StateFollowing State = "following" // delivering lines as they come
	StateStandby   State = "standby"   // another doorman holds the inbox lock
	StateStopped   State = "stopped"   // ended (stdin EOF, SIGINT, SIGTERM)
	StateSwitched  State = "switched"  // the session id changed (/clear, /resume); now follows another inbox
	StateSilenced  State = "silenced"  // OO_CLAUDE_DOORMAN=0
	StateUntrusted State = "untrusted" // the inbox (or its directory) is not the user's alone, or not a regular file: nothing is delivered from it (see CheckTrust)

	// Identity states: the doorman cannot deliver here and writes nothing
	// through the door.
	StateSocketNotMine       State = "socket-not-mine"      // the inherited socket is not served by the owner
	StateNoDoor              State = "no-door"              // no socket known for the owner
	StateNoSessionID         State = "no-session-id"        // neither a registry row nor CLAUDE_CODE_SESSION_ID
	StateNotDescendant       State = "not-descendant"       // no owning session among the ancestors (or not its direct child in MCP mode)
	StateSessionMismatch     State = "session-mismatch"     // --session differs from the owner's registry row
	StateSessionUnverifiable State = "session-unverifiable" // --session given, but the owner has no registry row
	StatePeerMismatch        State = "peer-mismatch"        // the socket's listener is not the owner
)

// Heartbeat is <inbox>.doorman.json: contract v1's fields, then oo-claude's
// extensions. Only the doorman that holds the inbox lock writes it.
type Heartbeat struct {
	PID       int    `json:"pid"`
	SessionID string `json:"session_id"`
	Since     string `json:"since"`
	LastSeen  string `json:"last_seen"`
	Delivered int    `json:"delivered"`
	Offset    int64  `json:"offset"`

	State        State  `json:"state,omitempty"`
	Inode        uint64 `json:"inode,omitempty"`
	OwnerPID     int    `json:"owner_pid,omitempty"`
	PeerPID      int    `json:"peer_pid,omitempty"`
	Socket       string `json:"socket,omitempty"`
	Mode         string `json:"mode,omitempty"` // mcp | cli
	Version      string `json:"version,omitempty"`
	PendingBytes int64  `json:"pending_bytes"`
	LastError    string `json:"last_error,omitempty"`
	StoppedAt    string `json:"stopped_at,omitempty"`
	// Pacing is set while the doorman holds lines back to stay inside the
	// receiver's ingress guard (an identical body within 30 s, the per-sender
	// token bucket): how many lines wait for pacing right now.
	Pacing int `json:"pacing,omitempty"`
	// Confirmed counts the lines acked on the receiver's enqueue row
	// (confirm "transcript"); Unconfirmed the door writes whose enqueue
	// row did not come (the line stayed pending; LastError says why).
	Confirmed   int `json:"confirmed"`
	Unconfirmed int `json:"unconfirmed"`
}

// Why a line is pending (Heartbeat.LastError starts with one of these).
const (
	// PendingNotQueued: the door took the line but the receiver wrote no
	// enqueue row for it within the confirmation bound (its ingress guard
	// dropped it, it holds it, or it is exiting). The doorman retries
	// once a retry cannot double it.
	PendingNotQueued = "receiver-did-not-queue"
	// PendingAckUnwritable: the line was queued but its ack could not be
	// written; the doorman retries the ack, never the delivery.
	PendingAckUnwritable = "ack-unwritable"
	// PendingBadToken: the session's messaging token cannot be carried in
	// a door frame; nothing was written.
	PendingBadToken = "bad-token"
	// PendingAttemptUnwritable: the doorman cannot record the door write
	// it is about to make (<inbox>.doorman.attempt), the record by which a
	// restarted doorman knows not to write the line again; nothing was
	// written.
	PendingAttemptUnwritable = "attempt-unwritable"
)

// ReadHeartbeat reads a heartbeat file. A missing file is fs.ErrNotExist.
func ReadHeartbeat(path string) (Heartbeat, error) {
	b, err := fsx.ReadFile(path)
	if err != nil {
		return Heartbeat{}, err
	}
	var h Heartbeat
	if err := json.Unmarshal(b, &h); err != nil {
		return Heartbeat{}, &fs.PathError{Op: "parse", Path: path, Err: err}
	}
	return h, nil
}

// Why a heartbeat is not fresh.
const (
	NotFreshMissing      = "missing"       // no heartbeat file
	NotFreshUnreadable   = "unreadable"    // the file does not parse
	NotFreshStale        = "stale"         // last_seen older than 15 s (or unparseable)
	NotFreshState        = "state"         // state set and not following (stopped, switched, ...)
	NotFreshPIDGone      = "pid-gone"      // the doorman's pid does not run
	NotFreshOtherSession = "other-session" // the heartbeat names another session id
)

// Freshness is the verdict on one heartbeat.
type Freshness struct {
	Fresh bool
	// Age is now − last_seen; 0 when unknown.
	Age time.Duration
	// Reason is one of the NotFresh constants when Fresh is false. For
	// NotFreshState, Detail holds the state.
	Reason string
	Detail string
}

// CheckFreshness applies the contract's stricter reading (COMPATIBILITY.md,
// "Verdict classes and exit codes"): fresh means last_seen
// younger than 15 s, and also state unset or following, the doorman's pid
// alive (pidAlive may be nil to skip that check), and the heartbeat naming
// sessionID (when sessionID is not empty).
func CheckFreshness(h Heartbeat, now time.Time, sessionID string, pidAlive func(int) bool) Freshness {
	var f Freshness
	seen, err := jsonrow.ParseTime(h.LastSeen)
	if err == nil {
		f.Age = now.Sub(seen)
	}
	switch {
	case err != nil || f.Age > FreshFor || f.Age < -FreshFor:
		// A last_seen far in the future is no proof of life either (a
		// clock set wrong, or a forged file).
		f.Reason = NotFreshStale
	case h.State != "" && h.State != StateFollowing:
		f.Reason, f.Detail = NotFreshState, string(h.State)
	case sessionID != "" && h.SessionID != sessionID:
		f.Reason, f.Detail = NotFreshOtherSession, h.SessionID
	case pidAlive != nil && !pidAlive(h.PID):
		f.Reason = NotFreshPIDGone
	default:
		f.Fresh = true
	}
	return f
}

// HeartbeatFreshness reads the heartbeat at path and checks it.
func HeartbeatFreshness(path string, now time.Time, sessionID string, pidAlive func(int) bool) (Heartbeat, Freshness) {
	h, err := ReadHeartbeat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return h, Freshness{Reason: NotFreshMissing}
	case err != nil:
		return h, Freshness{Reason: NotFreshUnreadable, Detail: err.Error()}
	}
	return h, CheckFreshness(h, now, sessionID, pidAlive)
}
