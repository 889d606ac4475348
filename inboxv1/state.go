package inboxv1

import "encoding/json"

// PendingSource says how Inbox.Pending was counted.
type PendingSource string

// Pending sources.
const (
	// PendingFromOffset: the non-empty lines beyond the doorman's offset.
	PendingFromOffset PendingSource = "offset"
	// PendingFromAcks: lines − acks, the reference reader's count, for
	// inboxes whose doorman never recorded an offset (monitor era).
	PendingFromAcks PendingSource = "lines-acks"
	// PendingNoInbox: the inbox file does not exist; nothing waits.
	PendingNoInbox PendingSource = "none"
)

// Inbox is an inbox file and what its doorman made of it: the inbox object
// of the oo-claude/sessions/v0 document (observatory), read without
// writing or locking anything.
type Inbox struct {
	// Path is the inbox file's path.
	Path string `json:"path"`
	// Exists reports whether the inbox file exists.
	Exists bool `json:"exists"`
	// Lines counts the non-empty complete lines (a last line without its
	// newline, being appended, is not counted).
	Lines int64 `json:"lines"`
	// Acks counts the non-empty lines of <inbox>.ack (JSON or monitor-era).
	Acks int64 `json:"acks"`
	// Pending counts the lines waiting, as PendingSource says; never
	// below 0.
	Pending int64 `json:"pending"`
	// Doorman is the doorman's heartbeat, judged; null without a
	// heartbeat file.
	Doorman *Doorman `json:"doorman"`
	// LastLine is the last non-empty complete line, at most 200
	// characters; null when there is none.
	LastLine NullString `json:"last_line"`

	// Offset is the doorman's byte offset; null when unknown.
	Offset *int64 `json:"offset"`
	// PendingBytes is the inbox's size − Offset; null when the offset is
	// unknown.
	PendingBytes *int64 `json:"pending_bytes"`
	// PendingSource says how Pending was counted.
	PendingSource PendingSource `json:"pending_source"`
}

// Doorman is a doorman's heartbeat, judged.
type Doorman struct {
	// PID is the doorman's pid, from its heartbeat.
	PID int `json:"pid"`
	// LastSeenS is the seconds since its last_seen, to a tenth; null when
	// last_seen does not parse.
	LastSeenS *float64 `json:"last_seen_s"`
	// Fresh reports whether the heartbeat is fresh: last_seen younger than
	// [FreshFor], state unset or following, the pid alive and the session
	// its own.
	Fresh bool `json:"fresh"`
	// Delivered is the heartbeat's count of delivered lines.
	Delivered int `json:"delivered"`

	// State is the heartbeat's state (following, stopped, ...); null for
	// a contract-v1 doorman.
	State NullString `json:"state"`
	// PIDAlive reports whether the doorman's pid runs.
	PIDAlive bool `json:"pid_alive"`
	// Since is when the doorman began to follow.
	Since NullString `json:"since"`
	// LastSeen is the heartbeat's last beat, as written.
	LastSeen NullString `json:"last_seen"`
	// Mode is mcp or cli.
	Mode NullString `json:"mode"`
	// Version is the oo-claude that wrote the heartbeat.
	Version NullString `json:"version"`
	// NotFreshBecause is why it is not fresh (a heartbeat [Reason]:
	// missing, unreadable, stale, state, pid-gone, other-session); null
	// when fresh.
	NotFreshBecause NullString `json:"not_fresh_because"`
}

// NullString is a string that is JSON null when empty.
type NullString string

// MarshalJSON writes null for "".
func (s NullString) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// UnmarshalJSON reads null as "".
func (s *NullString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = ""
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = NullString(v)
	return nil
}
