package doorman

import (
	"context"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/ingress"
	"github.com/oo-family/oo-claude/station"
)

// Names the tests share with the package.
const (
	EnvSessionID      = envSessionID
	EnvSocket         = envSocket
	EnvProjectDirName = envProjectDirName
	ToolName          = toolName
	ServerName        = serverName
	MaxWrites         = maxWrites
	BackoffMin        = backoffMin
	BackoffMax        = backoffMax
)

// Guard is the receiver's ingress guard the pacer models.
type Guard = ingress.Guard

// WithGuard returns o pacing for the guard g.
func WithGuard(o Options, g Guard) Options { o.guard = g; return o }

// WithoutPacing returns o with pacing off (tests that measure the loop).
func WithoutPacing(o Options) Options { o.noPacing = true; return o }

// WithPollOnly returns o following by the safety poll alone, without file
// events: the benchmark that compares with v0.1's 0.5 s poll follower.
func WithPollOnly(o Options) Options { o.pollOnly = true; return o }

// WithCaughtUp returns o calling f each time the follow loop has handled
// every line there is.
func WithCaughtUp(o Options, f func()) Options { o.caughtUp = f; return o }

// Wakeups counts the follow loop's iterations (tests and benchmarks of an
// idle doorman).
func (d *Doorman) Wakeups() int64 { return d.wakeups.Load() }

// InboxWatchWakeups counts the wake-ups of the current inbox watch's
// goroutine (fsx.Waker.Woken): each batch of file events it read, whether
// or not one woke the follow loop.
func (d *Doorman) InboxWatchWakeups() int64 { return d.inboxWatch.Load().Woken() }

// Identity is who a doorman serves.
type Identity = identity

// OK reports whether the identity allows deliveries.
func (id identity) OK() bool { return id.ok() }

// Identify is the identity check.
func (h *Host) Identify(ctx context.Context, mode Mode, session string, prev Identity) Identity {
	return h.identify(ctx, mode, session, prev)
}

// StartAcks is what a start keeps of the ack file at path for a resume at
// off: the line_offset of the last ack before off (-1 for none), the acks
// at or after off, and how many recent deliveries seed the pacer.
func StartAcks(path string, inode uint64, off int64, g Guard, now time.Time) (last int64, after map[int64]string, recent int) {
	st := scanStartAcks(path, inode, "", false, off, newPacer(g, 0, false), now)
	last = -1
	if st.hasLast {
		last = *st.last.LineOffset
	}
	return last, st.after, len(st.recent)
}

// Station tools' names and bounds.
const (
	ToolSessions        = toolSessions
	ToolSend            = toolSend
	ToolRead            = toolRead
	ModelSendsPerMinute = modelSendsPerMinute
)

// WithStationTools gives s the station tools of a doorman whose session is
// self() (following), on st with cfg's knobs and the clock now.
func WithStationTools(s *Server, st *station.Station, cfg station.Config, self func() string, now func() time.Time) {
	s.peers = &peerTools{self: func() (string, inboxv1.State) {
		if sid := self(); sid != "" {
			return sid, inboxv1.StateFollowing
		}
		return "", StateStarting
	}, st: st, cfg: cfg, now: now, version: "test"}
}

// InvokedAsDoorman is ServeIfInvoked's test of the process's arguments.
var InvokedAsDoorman = invokedAsDoorman
