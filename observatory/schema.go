package observatory

import (
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/transcript"
)

// Schema is the document's schema name.
const Schema = "oo-claude/sessions/v0"

// StatusOffline is the status of a session that is shown although it does
// not run (a riders target addressed by its full id).
const StatusOffline = "offline"

// Document is oo-claude/sessions/v0. The first four fields are the
// reference reader's; the rest are oo-claude's additions.
type Document struct {
	Schema      string    `json:"schema"`
	GeneratedAt string    `json:"generated_at"` // ISO 8601, UTC, milliseconds
	Station     string    `json:"station"`      // the station's name (Options.Hostname: OO_CLAUDE_STATION, user@host by default)
	Sessions    []Session `json:"sessions"`

	Generator       string         `json:"generator"`       // "oo-claude <version>" (Options.Generator)
	RidingWindowS   float64        `json:"riding_window_s"` // the riding rule's window
	IncludeFinished bool           `json:"include_finished"`
	OfflineInboxes  []OfflineInbox `json:"offline_inboxes"`
	// Starts are the headless starts of <state>/start/ still started or
	// lost (every one with IncludeFinished), oldest first.
	Starts []Start `json:"starts"`
	// Warnings are problems that left a part of the document incomplete
	// (a rider or a ledger that could not be read); never fatal.
	Warnings []string `json:"warnings"`
	// Stations are the stations of a merged document (package fleet),
	// each with its error when it did not answer; absent from one
	// station's document.
	Stations []StationState `json:"stations,omitempty"`
}

// StationState is one station of a merged document.
type StationState struct {
	Station string `json:"station"`         // as the merged view names it (its ssh destination)
	Name    string `json:"name,omitempty"`  // the station's own name (its document's station)
	Error   string `json:"error,omitempty"` // why it did not answer; "" when it did
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
	Inbox     inboxv1.Inbox      `json:"inbox"`

	HostSession     inboxv1.NullString `json:"host_session"`   // the registry's hostSessionId (local_…)
	ParentHost      inboxv1.NullString `json:"parent_host"`    // from the lineage ledger
	ParentSession   inboxv1.NullString `json:"parent_session"` // from the lineage ledger
	Children        []string           `json:"children"`       // session ids of the children the ledger names
	Since           inboxv1.NullString `json:"since"`          // started_ms as ISO 8601
	Kind            string             `json:"kind"`
	Entrypoint      string             `json:"entrypoint"`
	RidersRiding    int                `json:"riders_riding"`
	RidersTotal     int                `json:"riders_total"` // every rider, also when Riders lists only the riding ones
	StatusUpdatedMS int64              `json:"status_updated_ms"`
	// Station is the station the session runs on (the document's
	// station; in a merged document of many stations, each its own).
	Station string `json:"station,omitempty"`
}

// OfflineInbox is the inbox of a session that does not run and still holds
// waiting lines (they wait for its next doorman).
type OfflineInbox struct {
	Session  string             `json:"session"`
	Pending  int64              `json:"pending"`
	Lines    int64              `json:"lines"`
	LastLine inboxv1.NullString `json:"last_line"`
	Doorman  *inboxv1.Doorman   `json:"doorman"`
	Path     string             `json:"path"`
}
