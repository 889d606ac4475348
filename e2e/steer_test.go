package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestDoormanHandshake: the registration the README tells users to make
// works with the pinned CLI: `claude mcp add --scope user claude-inbox --
// <oo-claude> doorman --mcp`, then `claude mcp list` and `claude mcp get
// claude-inbox` report it connected; the health checks spawn the doorman
// without a door, and it writes nothing.
func TestDoormanHandshake(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{})
	oo := ooClaude(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := w.claudeCmd(args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, tail(string(out), 2000))
		}
		return string(out)
	}
	add := []string{"mcp", "add"}
	for k, v := range w.knobs() {
		add = append(add, "-e", k+"="+v)
	}
	run(append(add, "--scope", "user", "claude-inbox", "--", oo, "doorman", "--mcp")...)
	out := run("mcp", "list")
	if want := regexp.MustCompile(`(?m)^claude-inbox: ` + regexp.QuoteMeta(oo) + ` doorman --mcp - ✔ Connected`); !want.MatchString(out) {
		t.Errorf("claude mcp list output lacks %q:\n%s", want, out)
	}
	out = run("mcp", "get", "claude-inbox")
	if !strings.Contains(out, "Status: ✔ Connected") {
		t.Errorf("claude mcp get claude-inbox output lacks %q:\n%s", "Status: ✔ Connected", out)
	}
	// Nothing written: no inbox, heartbeat, lock or ack, in the knob's
	// dir or the default one under HOME.
	for _, dir := range []string{w.inboxDir(), filepath.Join(w.home, ".zcode")} {
		if names := dirEntries(t, dir); len(names) > 0 {
			t.Errorf("the health-checked doorman wrote %q into %s; want nothing", names, dir)
		}
	}
}

// claudeCmd is a short claude command (mcp …) in the world.
func (w *world) claudeCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(w.claude, args...)
	cmd.Dir, cmd.Env = w.cwd, w.env()
	return cmd
}

// TestSteer: a busy headless session with our doorman injected; `oo-claude
// send` from a foreign process is delivered-steer with exit 0, the model's
// next request carries the line, and the transcript row of the carried line
// is a peer line whose verifiedPeerPid is the doorman's and whose msg_id is
// the send receipt's. While it runs, the doorman's heartbeat names the
// session's claude as its owner, its session id and socket; `oo-claude
// sessions --json` lists it with a fresh doorman and nothing pending; at the
// end the doorman's heartbeat says stopped; `oo-claude read` marks the line
// with the receipt's msg_id.
func TestSteer(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 4"), fakemodel.Text("done")}})
	s := w.start(w.withDoorman(pargs("wait for a steer", "--allowedTools", "Bash")...))
	first := s.waitModel(30*time.Second, "the first time", nil)
	row := s.waitRow(30 * time.Second)
	sid := row.SessionID
	hb := s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))

	t.Run("identity", func(t *testing.T) {
		if hb.OwnerPID != s.pid() || hb.PeerPID != s.pid() {
			t.Errorf("heartbeat owner_pid %d, peer_pid %d; want claude's pid %d", hb.OwnerPID, hb.PeerPID, s.pid())
		}
		if hb.Socket != row.MessagingSocketPath {
			t.Errorf("heartbeat socket %q, want the registry's %q", hb.Socket, row.MessagingSocketPath)
		}
		if hb.Mode != "mcp" {
			t.Errorf("heartbeat mode %q, want mcp", hb.Mode)
		}
		if ppid := parentOf(t, hb.PID); ppid != s.pid() {
			t.Errorf("the doorman's parent is %d, want claude %d", ppid, s.pid())
		}
	})

	line := "steer " + uuid.NewString()
	rc, r := w.send(sid, line)
	if r.code != 0 || str(rc, "class") != "delivered-steer" {
		s.fatalf("send: want delivered-steer, exit 0\n%s\nheartbeat: %s", r, w.heartbeatText(sid))
	}
	msgID := str(rc, "msg_id")
	if !uuidRE.MatchString(msgID) {
		t.Errorf("receipt msg_id %q is not a UUID", msgID)
	}
	// While the tool still runs: the session is listed with a fresh
	// doorman and nothing pending (the doorman advances its offset right
	// after the ack, so a first look may still count the line).
	t.Run("sessions while running", func(t *testing.T) {
		var r ooRun
		var inbox, dm map[string]any
		deadline := time.Now().Add(3 * time.Second)
		for {
			var doc map[string]any
			doc, r = w.ooJSON([]string{"sessions"})
			if r.code != 0 {
				t.Fatalf("sessions: %s", r)
			}
			sess := findSession(doc, sid)
			if sess == nil {
				t.Fatalf("sessions --json lacks %s:\n%s", sid, r.stdout)
			}
			if pid, _ := sess["pid"].(float64); int(pid) != s.pid() {
				t.Errorf("session pid %v, want %d", sess["pid"], s.pid())
			}
			inbox, _ = sess["inbox"].(map[string]any)
			dm, _ = inbox["doorman"].(map[string]any)
			if (dm["fresh"] == true && inbox["pending"] == 0.0) || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if dm["fresh"] != true || inbox["pending"] != 0.0 {
			t.Errorf("session inbox: doorman fresh %v, pending %v; want true, 0\n%s", dm["fresh"], inbox["pending"], r.stdout)
		}
		if s.exited() {
			t.Errorf("claude exited before sessions --json was read; the check needs a running session")
		}
	})
	carried := s.waitModel(30*time.Second, "with the steered line", func(q *fakemodel.Request) bool {
		return q.Seq > first.Seq && q.MessagesContain(line)
	})
	if len(carried.ToolResults()) == 0 {
		s.errorf("the line came in %s without the tool's result; want it absorbed mid-turn", carried)
	}

	s.mustSucceed(60 * time.Second)
	w.checkConfirmed(t, sid)
	tp := w.transcriptPath(w.cwd, sid)
	rows := readJSONL(t, tp)
	o := findOrigin(rows, msgID)
	switch {
	case o == nil:
		t.Errorf("the transcript has no origin with the receipt's msg_id %s", msgID)
	case o["kind"] != "peer":
		t.Errorf("origin kind %v, want peer", o["kind"])
	default:
		if pid, _ := o["verifiedPeerPid"].(float64); int(pid) != hb.PID {
			t.Errorf("origin verifiedPeerPid %v, want the doorman's pid %d", o["verifiedPeerPid"], hb.PID)
		}
	}
	if acks := w.acks(sid); len(acks) != 1 || acks[0].MsgID != msgID || acks[0].DoormanPID != hb.PID {
		t.Errorf("acks %+v, want one with msg_id %s from doorman %d", acks, msgID, hb.PID)
	}

	t.Run("stopped heartbeat", func(t *testing.T) {
		h := s.waitHeartbeat(sid, 5*time.Second, "state stopped", func(h heartbeat) bool { return h.State == "stopped" })
		if h.PID != hb.PID || h.StoppedAt == "" || h.Delivered != 1 {
			t.Errorf("stopped heartbeat %+v; want pid %d, stopped_at set, delivered 1", h, hb.PID)
		}
	})
	t.Run("read", func(t *testing.T) {
		doc, r := w.ooJSON([]string{"read", sid})
		if r.code != 0 {
			t.Fatalf("read: %s", r)
		}
		if !peerMarked(doc, line, msgID) {
			t.Errorf("read --json does not mark the steered line with msg_id %s:\n%s", msgID, r.stdout)
		}
	})
	w.record(tp, "steered-turn")
}

// findSession returns the session object of a sessions/v0 document.
func findSession(doc map[string]any, sid string) map[string]any {
	list, _ := doc["sessions"].([]any)
	for _, x := range list {
		if m, _ := x.(map[string]any); str(m, "session") == sid {
			return m
		}
	}
	return nil
}

// peerMarked reports whether any object in v holds msg_id msgID next to a
// text that contains line (how read --json marks a peer line).
func peerMarked(v any, line, msgID string) bool {
	switch v := v.(type) {
	case map[string]any:
		if v["msg_id"] == msgID {
			for _, x := range v {
				if s, ok := x.(string); ok && strings.Contains(s, line) {
					return true
				}
			}
		}
		for _, x := range v {
			if peerMarked(x, line, msgID) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, func(x any) bool { return peerMarked(x, line, msgID) })
	}
	return false
}

// parentOf returns a process's parent pid from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("read stat of %d: %v", pid, err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	var ppid int
	fmt.Sscan(fields[1], &ppid)
	return ppid
}
