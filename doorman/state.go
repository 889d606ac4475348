package doorman

import "github.com/oo-family/oo-claude/internal/inbox"

// State is what a doorman says it is doing: [Status.State],
// [IdentityError.State] and the heartbeat's "state" (one of the State
// constants).
type State = inbox.State

// Doorman states. Following is the only state in which lines are carried.
const (
	StateStarting  State = "starting"  // New's status until Run has established the identity (never in a heartbeat)
	StateFollowing State = "following" // delivering lines as they come
	StateStandby   State = "standby"   // another doorman holds the inbox lock
	StateStopped   State = "stopped"   // ended (stdin EOF, SIGINT, SIGTERM, the context)
	StateSwitched  State = "switched"  // the session id changed (/clear, /resume); now follows another inbox
	StateSilenced  State = "silenced"  // Config.DoormanEnabled is false (OO_CLAUDE_DOORMAN=0)
	StateUntrusted State = "untrusted" // the inbox (or its directory) is not the user's alone, or not a regular file: nothing is delivered from it

	// Identity states: the doorman cannot deliver here and writes nothing
	// through the door.
	StateSocketNotMine       State = "socket-not-mine"      // the inherited socket is not served by the owner
	StateNoDoor              State = "no-door"              // no socket known for the owner
	StateNoSessionID         State = "no-session-id"        // neither a registry row nor CLAUDE_CODE_SESSION_ID
	StateNotDescendant       State = "not-descendant"       // no owning session among the ancestors (or not its direct child in MCP mode)
	StateSessionMismatch     State = "session-mismatch"     // Options.Session differs from the owner's registry row
	StateSessionUnverifiable State = "session-unverifiable" // Options.Session given, but the owner has no registry row
	StatePeerMismatch        State = "peer-mismatch"        // the socket's listener is not the owner
)

// Heartbeat is the doorman's heartbeat file, <inbox>.doorman.json
// (COMPATIBILITY.md, "Inbox contract v1"): contract v1's fields, then
// oo-claude's extensions. Its fields, with their JSON keys:
//
//	PID          int     pid
//	SessionID    string  session_id
//	Since        string  since: when this doorman began to follow (RFC 3339, UTC)
//	LastSeen     string  last_seen: its last beat; fresh while younger than 15 s
//	Delivered    int     delivered
//	Offset       int64   offset: the byte offset of the first unread line
//	State        State   state: omitted by a contract-v1 doorman
//	Inode        uint64  inode: the inbox file's
//	OwnerPID     int     owner_pid: the session's process
//	PeerPID      int     peer_pid: the door's listener, as SO_PEERCRED named it
//	Socket       string  socket: the door's path
//	Mode         string  mode: mcp or cli
//	Version      string  version: the oo-claude that wrote it
//	PendingBytes int64   pending_bytes: inbox size − offset
//	LastError    string  last_error: why lines are pending (receiver-did-not-queue, ack-unwritable, bad-token, attempt-unwritable, or a delivery's error)
//	StoppedAt    string  stopped_at: set with state stopped
//	Pacing       int     pacing: lines held back to stay inside the receiver's ingress guard
//	Confirmed    int     confirmed: lines acked on the receiver's enqueue row (confirm "transcript")
//	Unconfirmed  int     unconfirmed: door writes whose enqueue row did not come
type Heartbeat = inbox.Heartbeat
