package doorman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/station"
)

// Mode is how a doorman runs.
type Mode string

// Modes, as the heartbeat's "mode" names them.
const (
	ModeMCP Mode = "mcp" // the session's MCP stdio server: the owner must be the direct parent
	ModeCLI Mode = "cli" // a foreground loop a program runs itself (the default): the owner may be any ancestor
)

// Environment variables Claude Code gives its MCP children.
const (
	envSessionID = "CLAUDE_CODE_SESSION_ID"
	envSocket    = "CLAUDE_CODE_MESSAGING_SOCKET"
	envToken     = "CLAUDE_CODE_MESSAGING_TOKEN"
)

// Door is what the doorman needs of the door: a bare connect that reads the
// listener's pid without writing (an error matching [door.ErrPeerMismatch]
// for a listener of another user), and one delivery that refuses any
// listener but expectPID. [DoorDialer] is the real one.
//
// Deliver settles (waits for a refusal) only when settle is true: the
// doorman confirms a delivery by the receiver's enqueue row instead,
// and settles only where the session's transcript cannot be located.
type Door interface {
	Peer(ctx context.Context, socket string) (pid int, err error)
	Deliver(ctx context.Context, socket string, expectPID int, m door.Message, settle bool) (peerPID int, err error)
}

// DoorDialer is the real [Door], over [door.Dialer].
type DoorDialer struct {
	// Settle is the settle of a delivery that settles, as in
	// [door.Dialer]: zero means [door.DefaultSettle], [door.NoSettle]
	// none. ([ThisProcess] maps OO_CLAUDE_DOOR_SETTLE_S=0 to NoSettle.)
	Settle time.Duration
	// Timeout bounds each connect; zero means door's default.
	Timeout time.Duration
}

// Peer connects to socket, reads SO_PEERCRED and closes without writing.
// A listener of another user is a [*door.PeerMismatchError], its pid
// returned with it.
func (d DoorDialer) Peer(ctx context.Context, socket string) (int, error) {
	dl := door.Dialer{Timeout: d.Timeout}
	c, err := dl.Dial(ctx, socket)
	if err != nil {
		var pm *door.PeerMismatchError
		if errors.As(err, &pm) {
			return pm.Got, err
		}
		return 0, err
	}
	pid := c.Peer().PID
	c.Close()
	return pid, nil
}

// Deliver dials socket, refuses any listener but expectPID, writes m and,
// when settle is true, settles d.Settle.
func (d DoorDialer) Deliver(ctx context.Context, socket string, expectPID int, m door.Message, settle bool) (int, error) {
	dl := door.Dialer{ExpectPID: expectPID, Settle: d.settle(settle), Timeout: d.Timeout}
	cred, err := dl.Deliver(ctx, socket, m)
	return cred.PID, err
}

// settle is the door.Dialer settle of a delivery that settles or not.
func (d DoorDialer) settle(settle bool) time.Duration {
	if !settle {
		return door.NoSettle
	}
	return d.Settle
}

// settleOf is the settle cfg's OO_CLAUDE_DOOR_SETTLE_S asks for: its 0
// means none.
func settleOf(cfg station.Config) time.Duration {
	if cfg.DoorSettle <= 0 {
		return door.NoSettle
	}
	return cfg.DoorSettle
}

// deliverRecorded is Deliver with before called once the door is dialed
// and its peer checked, just before the frames go out: the doorman records
// its attempt there, so a kill between the record and the write (a write
// whose fate a restarted doorman cannot know) is a window of one write
// call, not of a connect. An error from before is returned, nothing
// written.
func (d DoorDialer) deliverRecorded(ctx context.Context, socket string, expectPID int, m door.Message, settle bool, before func() error) (int, error) {
	dl := door.Dialer{ExpectPID: expectPID, Settle: d.settle(settle), Timeout: d.Timeout}
	c, err := dl.Dial(ctx, socket)
	if err != nil {
		return 0, err
	}
	if err := before(); err != nil {
		c.Close()
		return c.Peer().PID, &beforeError{err}
	}
	err = c.Deliver(ctx, m)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return c.Peer().PID, err
}

// beforeError is the error of deliverRecorded's before: nothing was written.
type beforeError struct{ err error }

func (e *beforeError) Error() string { return e.err.Error() }
func (e *beforeError) Unwrap() error { return e.err }

// recordingDoor is a Door that can call back between its dial and its
// write (DoorDialer); any other Door is recorded for before it is called.
type recordingDoor interface {
	deliverRecorded(ctx context.Context, socket string, expectPID int, m door.Message, settle bool, before func() error) (int, error)
}

// Host is every input the doorman reads about the machine and itself.
type Host struct {
	Proc    station.Proc     // process facts (ancestry, exe, comm)
	Station *station.Station // registry rows and key files
	Getenv  func(string) string
	PID     int // this process
	PPID    int // its parent (the direct-parent check in MCP mode)
	Now     func() time.Time
	Door    Door
}

// ThisProcess returns the Host of the running process: the real /proc, the
// station of cfg's paths, getenv for the environment Claude Code gave its
// MCP server, this process's pid and parent, the wall clock, and the real
// door with cfg's settle (OO_CLAUDE_DOOR_SETTLE_S=0: none). It is how
// `oo-claude doorman` runs. getenv may be nil (no environment).
func ThisProcess(cfg station.Config, getenv func(string) string) *Host {
	return &Host{
		Station: station.New(cfg.Paths),
		Getenv:  getenv,
		PID:     os.Getpid(),
		PPID:    os.Getppid(),
		Now:     time.Now,
		Door:    DoorDialer{Settle: settleOf(cfg)},
	}
}

func (h *Host) getenv(k string) string {
	if h.Getenv == nil {
		return ""
	}
	return h.Getenv(k)
}

func (h *Host) now() time.Time {
	if h.Now == nil {
		return time.Now()
	}
	return h.Now()
}

// identity is who a doorman serves, or why it serves nobody here.
type identity struct {
	// State is [inboxv1.StateFollowing] when the doorman may deliver,
	// else one of the identity states.
	State      inboxv1.State
	Detail     string // a human sentence saying why, for logs and the tool
	OwnerPID   int
	OwnerStart string // procStart of the owner
	OwnerExe   bool   // the owner was found as a claude executable
	HasRow     bool   // the owner has a live registry row
	Status     string // the row's status as read (busy, idle, waiting, "")
	CWD        string // the row's cwd (where the session's transcript is looked for first)
	SessionID  string
	Socket     string
	SocketFrom string // "registry" or "env"
	PeerPID    int    // the listener's pid, when probed
	Token      station.Token
}

// ok reports whether the identity allows deliveries.
func (id identity) ok() bool { return id.State == inboxv1.StateFollowing }

// sockNameRE is Claude Code's door name: <pid>.sock or <pid>-<8 hex>.sock.
var sockNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9]+)(?:-[0-9a-f]{8})?\.sock$`)
})

// socketNamePID returns the pid a door's file name names, if it has Claude
// Code's form.
func socketNamePID(path string) (int, bool) {
	m := sockNameRE().FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return 0, false
	}
	pid, err := strconv.Atoi(m[1])
	return pid, err == nil && pid > 0
}

// isClaude reports whether a process is a claude executable: the basename
// of its exe, or its comm, is "claude".
func (h *Host) isClaude(info station.ProcInfo) bool {
	if info.Comm == "claude" {
		return true
	}
	exe, err := h.Proc.Exe(info.PID)
	return err == nil && filepath.Base(exe) == "claude"
}

// descends reports whether pid descends from ancestor (started at start).
// It is the descendant check; TestIdentityMutations fails if it always
// passes.
func (h *Host) descends(pid, ancestor int, start string) bool {
	return h.Proc.IsDescendant(pid, ancestor, start)
}

// directChild is the MCP mode's direct-parent check; TestIdentityMutations
// fails if it always passes.
func (h *Host) directChild(owner int) bool {
	ppid := h.PPID
	if ppid == 0 {
		if info, err := h.Proc.Info(h.PID); err == nil {
			ppid = info.PPID
		}
	}
	return ppid == owner
}

// peerIs is the peer check: the listener must be the owner.
// TestIdentityMutations fails if it always passes.
func peerIs(listener, owner int) bool { return listener == owner }

// expectPID is the pid a delivery demands of the listener (the owner).
func expectPID(owner int) int { return owner }

// identify works out whom this process may deliver for. session is an
// explicit session id ("" when none). prev is the last identity; a peer
// probe already made for the same owner and socket is not repeated.
// Its steps, in order: the owner, the session id, the socket, the
// listener, the token.
func (h *Host) identify(ctx context.Context, mode Mode, session string, prev identity) identity {
	id, row := h.owner(mode)
	ok := id.State == ""
	ok = ok && id.sessionOf(row, session, h.getenv(envSessionID))
	envSock := h.getenv(envSocket)
	ok = ok && id.socketOf(row, envSock)
	ok = ok && h.checkPeer(ctx, &id, prev)
	if !ok {
		return id
	}
	// The token: the environment's only when its socket is the one used
	// (else it belongs to another session), else the owner's key file.
	if t := h.getenv(envToken); t != "" && envSock == id.Socket {
		id.Token = station.Token(t)
	} else if row != nil {
		if t, err := h.Station.PeerToken(row.Row); err == nil {
			id.Token = t
		}
	}
	id.State = inboxv1.StateFollowing
	id.Detail = fmt.Sprintf("session %s, owner %d, socket %s", id.SessionID, id.OwnerPID, id.Socket)
	return id
}

// fail sets the identity's failing state and its sentence; it returns
// false, for the steps of identify.
func (id *identity) fail(s inboxv1.State, format string, a ...any) bool {
	id.State, id.Detail = s, fmt.Sprintf(format, a...)
	return false
}

// owner finds the owner: the nearest ancestor with a live registry row
// (returned) or a claude executable, else the environment's session when
// it has a live row and this process descends from it. The identity has a
// State only when there is none (not-descendant).
func (h *Host) owner(mode Mode) (identity, *station.Session) {
	id := identity{}
	chain, err := h.Proc.Ancestors(h.PID)
	if err != nil {
		id.fail(inboxv1.StateNotDescendant, "cannot read my ancestry: %v", err)
		return id, nil
	}
	var row *station.Session
	for _, a := range chain {
		if s, ok := h.Station.LiveByPID(a.PID); ok {
			id.OwnerPID, id.OwnerStart, row = a.PID, a.StartTicks, &s
			break
		}
		if h.isClaude(a) {
			id.OwnerPID, id.OwnerStart, id.OwnerExe = a.PID, a.StartTicks, true
			break
		}
	}
	if id.OwnerPID == 0 {
		// No owner among the ancestors: the only claim left is the
		// environment's, and it must be verified by descent.
		envSID := h.getenv(envSessionID)
		if s, ok, _ := h.Station.LiveBySessionID(envSID); ok && station.IsSessionID(envSID) {
			id.OwnerPID, id.OwnerStart, row = s.PID, s.ProcStart, &s
		}
	}
	if id.OwnerPID == 0 || !h.descends(h.PID, id.OwnerPID, id.OwnerStart) {
		id.fail(inboxv1.StateNotDescendant, "no session of my own among my ancestors")
		return id, nil
	}
	if mode == ModeMCP && !h.directChild(id.OwnerPID) {
		id.fail(inboxv1.StateNotDescendant, "owner %d is not my direct parent (an MCP doorman is spawned by its session)", id.OwnerPID)
		return id, nil
	}
	return id, row
}

// sessionOf takes the session id: the owner's row's (an explicit session
// must equal it, and is never trusted without one), else the
// environment's (envSID).
func (id *identity) sessionOf(row *station.Session, session, envSID string) bool {
	if row != nil {
		id.HasRow, id.SessionID, id.Status, id.CWD = true, row.SessionID, row.Status, row.CWD
	}
	switch {
	case session != "" && row == nil:
		return id.fail(inboxv1.StateSessionUnverifiable, "session %s: owner %d has no registry row to verify it", session, id.OwnerPID)
	case session != "" && session != row.SessionID:
		return id.fail(inboxv1.StateSessionMismatch, "session %s: owner %d is session %s", session, id.OwnerPID, row.SessionID)
	case row == nil && station.IsSessionID(envSID):
		id.SessionID = envSID
	case row == nil:
		return id.fail(inboxv1.StateNoSessionID, "owner %d has no registry row and %s is not set", id.OwnerPID, envSessionID)
	}
	return true
}

// socketOf takes the socket: the row's, else the inherited one (envSock)
// unless its name is another pid's.
func (id *identity) socketOf(row *station.Session, envSock string) bool {
	switch {
	case row != nil && row.MessagingSocketPath != "":
		id.Socket, id.SocketFrom = row.MessagingSocketPath, "registry"
	case envSock == "":
		return id.fail(inboxv1.StateNoDoor, "no socket: owner %d has none in the registry and %s is not set", id.OwnerPID, envSocket)
	default:
		id.Socket, id.SocketFrom = envSock, "env"
		if pid, ok := socketNamePID(envSock); ok && pid != id.OwnerPID {
			return id.fail(inboxv1.StateSocketNotMine, "inherited socket %s is named for pid %d, not owner %d", envSock, pid, id.OwnerPID)
		}
	}
	return true
}

// checkPeer checks that the socket's listener is the owner. A probe writes
// nothing; one already made for the same owner and socket (prev) is not
// repeated.
func (h *Host) checkPeer(ctx context.Context, id *identity, prev identity) bool {
	notMine := inboxv1.StatePeerMismatch
	if id.SocketFrom == "env" {
		notMine = inboxv1.StateSocketNotMine
	}
	if prev.ok() && prev.OwnerPID == id.OwnerPID && prev.OwnerStart == id.OwnerStart && prev.Socket == id.Socket && prev.PeerPID != 0 {
		id.PeerPID = prev.PeerPID
	} else {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		pid, err := h.Door.Peer(pctx, id.Socket)
		cancel()
		switch {
		case errors.Is(err, door.ErrPeerMismatch):
			// Served by another user: not the owner, whatever its pid.
			id.PeerPID = pid
			return id.fail(notMine, "socket %s: %v", id.Socket, err)
		case err != nil:
			return id.fail(inboxv1.StateNoDoor, "socket %s: %v", id.Socket, err)
		}
		id.PeerPID = pid
	}
	if !peerIs(id.PeerPID, id.OwnerPID) {
		return id.fail(notMine, "socket %s is served by pid %d, not owner %d", id.Socket, id.PeerPID, id.OwnerPID)
	}
	return true
}

// ErrNotDeliverable reports that this process may not deliver here: its
// identity is not following. Wrapped by an [*IdentityError].
var ErrNotDeliverable = errors.New("not deliverable here")

// IdentityError carries the identity state that stopped a doorman.
type IdentityError struct {
	State  inboxv1.State
	Detail string
}

func (e *IdentityError) Error() string { return fmt.Sprintf("%s: %s", e.State, e.Detail) }

// Unwrap returns [ErrNotDeliverable].
func (e *IdentityError) Unwrap() error { return ErrNotDeliverable }
