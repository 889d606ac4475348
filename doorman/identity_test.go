package doorman_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/inboxv1"
)

func TestMain(m *testing.M) {
	// Run as "<test binary> doorman --mcp" (TestServeIfInvoked), the test
	// binary is its own doorman: it serves and exits here.
	doorman.ServeIfInvoked(context.Background())
	goleak.VerifyTestMain(m)
}

const otherSID = "0badc0de-0000-4000-8000-000000000000"

func TestIdentify(t *testing.T) {
	type want struct {
		State      inboxv1.State
		OwnerPID   int
		SessionID  bool // the session id is the row's (or the env's) sid
		SocketFrom string
	}
	tests := []struct {
		name    string
		mode    doorman.Mode
		session string
		setup   func(w *world, sid string) (peer int)
		want    want
	}{
		{
			name: "mcp: direct child of a session with a row",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(500, 1, "claude", "/usr/bin/claude", "777")
				w.self, w.ppid = selfPID, 500
				return 500
			},
			want: want{inboxv1.StateFollowing, 500, true, "registry"},
		},
		{
			name: "cli: grandchild of a session",
			mode: doorman.ModeCLI,
			setup: func(w *world, sid string) int {
				w.tree.add(500, 1, "claude", "/usr/bin/claude", "777")
				w.tree.add(600, 500, "bash", "/bin/bash", "800")
				w.self, w.ppid = selfPID, 600
				return 500
			},
			want: want{inboxv1.StateFollowing, 500, true, "registry"},
		},
		{
			name: "mcp: grandchild is refused (started from a session's tool)",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(500, 1, "claude", "/usr/bin/claude", "777")
				w.tree.add(600, 500, "bash", "/bin/bash", "800")
				w.self, w.ppid = selfPID, 600
				return 500
			},
			want: want{State: inboxv1.StateNotDescendant, OwnerPID: 500},
		},
		{
			name: "no session among the ancestors",
			mode: doorman.ModeCLI,
			setup: func(w *world, sid string) int {
				w.tree.add(500, 1, "claude", "/usr/bin/claude", "777") // the session, elsewhere
				w.tree.add(600, 1, "bash", "/bin/bash", "800")
				w.self, w.ppid = selfPID, 600
				w.env[doorman.EnvSessionID] = sid
				return 500
			},
			want: want{State: inboxv1.StateNotDescendant, OwnerPID: 500},
		},
		{
			name: "claude executable without a row: env session and its own <pid>.sock",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(700, 1, "claude", "/usr/bin/claude", "900")
				w.self, w.ppid = selfPID, 700
				w.env[doorman.EnvSessionID] = sid
				w.env[doorman.EnvSocket] = "/run/user/1/cc-socks/700.sock"
				return 700
			},
			want: want{inboxv1.StateFollowing, 700, true, "env"},
		},
		{
			name: "owner found by exe basename although comm differs",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(700, 1, "MainThread", "/opt/cc/versions/2.1.332/claude", "900")
				w.self, w.ppid = selfPID, 700
				w.env[doorman.EnvSessionID] = sid
				w.env[doorman.EnvSocket] = "/run/user/1/cc-socks/700-0a1b2c3d.sock"
				return 700
			},
			want: want{inboxv1.StateFollowing, 700, true, "env"},
		},
		{
			name: "inherited socket named for another pid",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(700, 1, "claude", "/usr/bin/claude", "900")
				w.self, w.ppid = selfPID, 700
				w.env[doorman.EnvSessionID] = sid
				w.env[doorman.EnvSocket] = "/run/user/1/cc-socks/500.sock"
				return 500
			},
			want: want{State: inboxv1.StateSocketNotMine, OwnerPID: 700},
		},
		{
			name: "inherited socket of another name served by another process",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(700, 1, "claude", "/usr/bin/claude", "900")
				w.self, w.ppid = selfPID, 700
				w.env[doorman.EnvSessionID] = sid
				w.env[doorman.EnvSocket] = "/tmp/elsewhere/door.sock"
				return 500
			},
			want: want{State: inboxv1.StateSocketNotMine, OwnerPID: 700},
		},
		{
			name: "health check: session id but no socket variables",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(700, 1, "claude", "/usr/bin/claude", "900")
				w.self, w.ppid = selfPID, 700
				w.env[doorman.EnvSessionID] = sid
				return 700
			},
			want: want{State: inboxv1.StateNoDoor, OwnerPID: 700},
		},
		{
			name: "health check inside another session: the nearest claude wins",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(500, 1, "claude", "/usr/bin/claude", "777") // the session, with a row
				w.tree.add(700, 500, "claude", "/usr/bin/claude", "900")
				w.self, w.ppid = selfPID, 700
				w.env[doorman.EnvSessionID] = sid
				w.env[doorman.EnvSocket] = "/run/user/1/cc-socks/500.sock"
				return 500
			},
			want: want{State: inboxv1.StateSocketNotMine, OwnerPID: 700},
		},
		{
			name: "claude executable without a row and no session id",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(700, 1, "claude", "/usr/bin/claude", "900")
				w.self, w.ppid = selfPID, 700
				return 700
			},
			want: want{State: inboxv1.StateNoSessionID, OwnerPID: 700},
		},
		{
			name:    "--session of another session",
			mode:    doorman.ModeCLI,
			session: otherSID,
			setup: func(w *world, sid string) int {
				w.tree.add(500, 1, "claude", "/usr/bin/claude", "777")
				w.self, w.ppid = selfPID, 500
				return 500
			},
			want: want{State: inboxv1.StateSessionMismatch, OwnerPID: 500},
		},
		{
			name:    "--session without a row to verify it",
			mode:    doorman.ModeCLI,
			session: otherSID,
			setup: func(w *world, sid string) int {
				w.tree.add(700, 1, "claude", "/usr/bin/claude", "900")
				w.self, w.ppid = selfPID, 700
				w.env[doorman.EnvSessionID] = otherSID
				w.env[doorman.EnvSocket] = "/run/user/1/cc-socks/700.sock"
				return 700
			},
			want: want{State: inboxv1.StateSessionUnverifiable, OwnerPID: 700},
		},
		{
			name: "registry socket served by another process",
			mode: doorman.ModeMCP,
			setup: func(w *world, sid string) int {
				w.tree.add(500, 1, "claude", "/usr/bin/claude", "777")
				w.self, w.ppid = selfPID, 500
				return 4242
			},
			want: want{State: inboxv1.StatePeerMismatch, OwnerPID: 500},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			row := w.session(500, "busy")
			peer := tt.setup(w, row.SessionID)
			w.tree.add(selfPID, w.ppid, "oo-claude", "/usr/local/bin/oo-claude", "999")
			h := w.host(&stubDoor{peer: peer})
			id := h.Identify(context.Background(), tt.mode, tt.session, doorman.Identity{})
			got := want{State: id.State, OwnerPID: id.OwnerPID}
			if id.OK() {
				got.SessionID, got.SocketFrom = id.SessionID == row.SessionID, id.SocketFrom
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Identify (-want +got):\n%s\ndetail: %s", diff, id.Detail)
			}
			if id.Detail == "" {
				t.Error("no detail")
			}
		})
	}
}

// TestIdentityMutations runs the whole doorman against the real door client
// and a real fake door listening in this process, in a fake process tree.
// Each refused case fails when its check is disabled: the descendant check
// (the env's session would be adopted), the direct-parent check (a doorman
// started from a session's tool would deliver) and the peer check (a
// listener that is not the owner would receive the line).
func TestIdentityMutations(t *testing.T) {
	tests := []struct {
		name  string
		mode  doorman.Mode
		setup func(w *world) (sid string)
		want  inboxv1.State
	}{
		{
			name: "control: the session's direct child delivers",
			mode: doorman.ModeMCP,
			setup: func(w *world) string {
				w.tree.add(w.me, 1, "claude", "/usr/bin/claude", "777")
				w.self, w.ppid = selfPID, w.me
				return w.session(w.me, "busy").SessionID
			},
			want: inboxv1.StateFollowing,
		},
		{
			name: "descendant check: not below the session named by the environment",
			mode: doorman.ModeCLI,
			setup: func(w *world) string {
				w.tree.add(w.me, 1, "claude", "/usr/bin/claude", "777")
				w.tree.add(600, 1, "bash", "/bin/bash", "800")
				w.self, w.ppid = selfPID, 600
				sid := w.session(w.me, "busy").SessionID
				w.env[doorman.EnvSessionID] = sid
				w.env[doorman.EnvSocket] = w.door.Path()
				return sid
			},
			want: inboxv1.StateNotDescendant,
		},
		{
			name: "direct-parent check: mcp doorman started from the session's tool",
			mode: doorman.ModeMCP,
			setup: func(w *world) string {
				w.tree.add(w.me, 1, "claude", "/usr/bin/claude", "777")
				w.tree.add(600, w.me, "bash", "/bin/bash", "800")
				w.self, w.ppid = selfPID, 600
				return w.session(w.me, "busy").SessionID
			},
			want: inboxv1.StateNotDescendant,
		},
		{
			name: "peer check: the registry's socket is served by another process",
			mode: doorman.ModeMCP,
			setup: func(w *world) string {
				w.tree.add(4242, 1, "claude", "/usr/bin/claude", "777")
				w.self, w.ppid = selfPID, 4242
				return w.session(4242, "busy").SessionID
			},
			want: inboxv1.StatePeerMismatch,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			sid := tt.setup(w)
			w.tree.add(selfPID, w.ppid, "oo-claude", "/usr/local/bin/oo-claude", "999")
			w.appendLine(sid, "[chatgpt 📡] hello")
			err, st, log := w.runOnce(tt.mode, "", nil)
			frames := w.door.Frames()
			if tt.want == inboxv1.StateFollowing {
				if err != nil || len(frames) != 1 {
					t.Fatalf("control: err %v, %d frames, want nil and 1; log:\n%s", err, len(frames), log)
				}
				return
			}
			var ie *doorman.IdentityError
			if !errors.As(err, &ie) || !errors.Is(err, doorman.ErrNotDeliverable) || ie.State != tt.want {
				t.Errorf("err = %v, want an IdentityError %s", err, tt.want)
			}
			if st.State != tt.want {
				t.Errorf("status state %q, want %q", st.State, tt.want)
			}
			if len(frames) != 0 {
				t.Errorf("the door received %d frames, want 0", len(frames))
			}
			if diff := cmp.Diff([]string{sid + ".inbox"}, w.inboxEntries()); diff != "" {
				t.Errorf("inbox dir (-want +got):\n%s", diff)
			}
			if log == "" {
				t.Error("nothing on the log")
			}
		})
	}
}

// TestIdentifyListenerOfAnotherUser: a probe the door refuses because the
// listener runs as another user is a peer mismatch (even with the owner's
// pid), not a missing door.
func TestIdentifyListenerOfAnotherUser(t *testing.T) {
	w := newWorld(t)
	w.session(500, "busy")
	w.tree.add(500, 1, "claude", "/usr/bin/claude", "777")
	w.self, w.ppid = selfPID, 500
	w.tree.add(selfPID, w.ppid, "oo-claude", "/usr/local/bin/oo-claude", "999")
	other := &door.PeerMismatchError{Socket: w.door.Path(), Got: 500, WantUID: 1000, GotUID: 1001}
	h := w.host(&stubDoor{peer: 500, peerErr: other})
	id := h.Identify(context.Background(), doorman.ModeMCP, "", doorman.Identity{})
	if id.State != inboxv1.StatePeerMismatch || id.OK() {
		t.Fatalf("state %q (%s), want %q", id.State, id.Detail, inboxv1.StatePeerMismatch)
	}
	if !strings.Contains(id.Detail, "runs as uid 1001") {
		t.Errorf("detail %q does not say whose listener it is", id.Detail)
	}
}
