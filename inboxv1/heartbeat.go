package inboxv1

import "time"

// FreshFor is how young a heartbeat's last_seen must be to count as fresh.
const FreshFor = 15 * time.Second

// State is what a doorman says it is doing, in its heartbeat's "state"
// (and the doorman's own status).
type State string

// Doorman states. Following is the only state in which lines are carried.
const (
	StateFollowing State = "following" // delivering lines as they come
	StateStandby   State = "standby"   // another doorman holds the inbox lock
	StateStopped   State = "stopped"   // ended (stdin EOF, SIGINT, SIGTERM, its context)
	StateSwitched  State = "switched"  // the session id changed (/clear, /resume); now follows another inbox
	StateSilenced  State = "silenced"  // the doorman is switched off (OO_CLAUDE_DOORMAN=0)
	StateUntrusted State = "untrusted" // the inbox (or its directory) is not the user's alone, or not a regular file: nothing is delivered from it

	// Identity states: the doorman cannot deliver here and writes nothing
	// through the door.
	StateSocketNotMine       State = "socket-not-mine"      // the inherited socket is not served by the owner
	StateNoDoor              State = "no-door"              // no socket known for the owner
	StateNoSessionID         State = "no-session-id"        // neither a registry row nor CLAUDE_CODE_SESSION_ID
	StateNotDescendant       State = "not-descendant"       // no owning session among the ancestors (or not its direct child in MCP mode)
	StateSessionMismatch     State = "session-mismatch"     // the session asked for (--session) differs from the owner's registry row
	StateSessionUnverifiable State = "session-unverifiable" // a session was asked for (--session), but the owner has no registry row
	StatePeerMismatch        State = "peer-mismatch"        // the socket's listener is not the owner
)

// Heartbeat is <inbox>.doorman.json: contract v1's fields, then oo-claude's
// extensions. Only the doorman that holds the inbox lock writes it, and it
// replaces it atomically.
type Heartbeat struct {
	// PID is the doorman's pid.
	PID int `json:"pid"`
	// SessionID is the session whose inbox it follows.
	SessionID string `json:"session_id"`
	// Since is when this doorman began to follow (RFC 3339, UTC).
	Since string `json:"since"`
	// LastSeen is its last beat (RFC 3339, UTC); the heartbeat is fresh
	// while it is younger than [FreshFor].
	LastSeen string `json:"last_seen"`
	// Delivered counts the lines it delivered.
	Delivered int `json:"delivered"`
	// Offset is the byte offset of the first line it has not handled.
	Offset int64 `json:"offset"`

	// State is what it is doing; omitted by a contract-v1 doorman.
	State State `json:"state,omitempty"`
	// Inode is the inbox file's inode.
	Inode uint64 `json:"inode,omitempty"`
	// OwnerPID is the session's process.
	OwnerPID int `json:"owner_pid,omitempty"`
	// PeerPID is the door's listener, as SO_PEERCRED named it.
	PeerPID int `json:"peer_pid,omitempty"`
	// Socket is the door's path.
	Socket string `json:"socket,omitempty"`
	// Mode is how the doorman runs: mcp (the session's MCP server) or cli.
	Mode string `json:"mode,omitempty"`
	// Version is the oo-claude that wrote it.
	Version string `json:"version,omitempty"`
	// PendingBytes is the inbox's size − Offset.
	PendingBytes int64 `json:"pending_bytes"`
	// LastError is why lines are pending: it starts with one of the
	// pending reasons ([ReasonReceiverDidNotQueue], ...) or is a delivery's
	// error.
	LastError string `json:"last_error,omitempty"`
	// StoppedAt is when it stopped, set with state stopped.
	StoppedAt string `json:"stopped_at,omitempty"`
	// Pacing is set while the doorman holds lines back to stay inside the
	// receiver's ingress guard (an identical body within 30 s, the per-sender
	// token bucket): how many lines wait for pacing right now.
	Pacing int `json:"pacing,omitempty"`
	// Confirmed counts the lines acked on the receiver's enqueue row
	// (confirm "transcript").
	Confirmed int `json:"confirmed"`
	// Unconfirmed counts the door writes whose enqueue row did not come
	// (the line stayed pending; LastError says why).
	Unconfirmed int `json:"unconfirmed"`
}
