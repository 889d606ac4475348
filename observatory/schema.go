package observatory

import (
	"encoding/json"

	"github.com/oo-family/oo-claude/transcript"
)

// Schema is the document's schema name.
const Schema = "oo-claude/sessions/v0"

// StatusOffline is the status of a session that is shown although it does
// not run (a riders target addressed by its full id).
const StatusOffline = "offline"

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

// Document is oo-claude/sessions/v0. The first four fields are the
// reference reader's; the rest are oo-claude's additions.
type Document struct {
	Schema      string    `json:"schema"`
	GeneratedAt string    `json:"generated_at"` // ISO 8601, UTC, milliseconds
	Station     string    `json:"station"`      // the host name
	Sessions    []Session `json:"sessions"`

	Generator       string         `json:"generator"`       // "oo-claude <version>"
	RidingWindowS   float64        `json:"riding_window_s"` // the riding rule's window
	IncludeFinished bool           `json:"include_finished"`
	OfflineInboxes  []OfflineInbox `json:"offline_inboxes"`
	// Warnings are problems that left a part of the document incomplete
	// (a rider or a ledger that could not be read); never fatal.
	Warnings []string `json:"warnings"`
}

// Session is one running session (or, for a riders target that does not
// run, an offline one with Status [StatusOffline]).
type Session struct {
	Session   string             `json:"session"`
	Name      string             `json:"name"`
	PID       int                `json:"pid"`
	Status    string             `json:"status"` // busy, idle, waiting (the registry's), or offline
	CWD       string             `json:"cwd"`
	Version   string             `json:"version"`
	StartedMS int64              `json:"started_ms"`
	Riders    []transcript.Rider `json:"riders"` // riding ones; with IncludeFinished every one
	Inbox     Inbox              `json:"inbox"`

	HostSession     NullString `json:"host_session"`   // the registry's hostSessionId (local_…)
	ParentHost      NullString `json:"parent_host"`    // from the lineage ledger
	ParentSession   NullString `json:"parent_session"` // from the lineage ledger
	Children        []string   `json:"children"`       // session ids of the children the ledger names
	Since           NullString `json:"since"`          // started_ms as ISO 8601
	Kind            string     `json:"kind"`
	Entrypoint      string     `json:"entrypoint"`
	RidersRiding    int        `json:"riders_riding"`
	RidersTotal     int        `json:"riders_total"` // every rider, also when Riders lists only the riding ones
	StatusUpdatedMS int64      `json:"status_updated_ms"`
}

// Inbox is a session's inbox file and what its doorman made of it.
type Inbox struct {
	Path     string     `json:"path"`
	Exists   bool       `json:"exists"`
	Lines    int64      `json:"lines"`   // non-empty complete lines
	Acks     int64      `json:"acks"`    // non-empty lines of <inbox>.ack (JSON or monitor-era)
	Pending  int64      `json:"pending"` // see PendingSource
	Doorman  *Doorman   `json:"doorman"` // null without a heartbeat file
	LastLine NullString `json:"last_line"`

	Offset        *int64        `json:"offset"`        // the doorman's byte offset; null when unknown
	PendingBytes  *int64        `json:"pending_bytes"` // size − offset; null when the offset is unknown
	PendingSource PendingSource `json:"pending_source"`
}

// Doorman is a doorman's heartbeat, judged.
type Doorman struct {
	PID       int      `json:"pid"`
	LastSeenS *float64 `json:"last_seen_s"` // seconds since last_seen; null when it does not parse
	Fresh     bool     `json:"fresh"`
	Delivered int      `json:"delivered"`

	State           NullString `json:"state"` // following, stopped, ...; null for a contract-v1 doorman
	PIDAlive        bool       `json:"pid_alive"`
	Since           NullString `json:"since"`
	LastSeen        NullString `json:"last_seen"`
	Mode            NullString `json:"mode"` // mcp | cli
	Version         NullString `json:"version"`
	NotFreshBecause NullString `json:"not_fresh_because"` // a claudeinbox.NotFresh* reason; null when fresh
}

// OfflineInbox is the inbox of a session that does not run and still holds
// waiting lines (they wait for its next doorman).
type OfflineInbox struct {
	Session  string     `json:"session"`
	Pending  int64      `json:"pending"`
	Lines    int64      `json:"lines"`
	LastLine NullString `json:"last_line"`
	Doorman  *Doorman   `json:"doorman"`
	Path     string     `json:"path"`
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
