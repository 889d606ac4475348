package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// TestSteerSeen: `oo-claude send --seen` into a busy session of the real
// CLI. A line sent while a tool runs is absorbed only when that tool round
// ends, so --seen 1 gives up: delivered-steer, exit 0, seen false, the
// note, although the door took the line and Claude Code already wrote its
// enqueue row (which carries no msg_id). A line sent with --seen 20 during
// the next tool is seen when Claude Code absorbs it: delivered-steer, exit
// 0, seen true; by the time send returns the transcript holds the
// queued_command row with the receipt's msg_id, and the model is asked with
// the line right after. In the end both lines are in the transcript.
func TestSteerSeen(t *testing.T) {
	t.Parallel()
	const firstTool = 8 * time.Second
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 8"), fakemodel.Bash("sleep 3"), fakemodel.Text("done")}})
	s := w.start(w.withDoorman(pargs("wait for steers", "--allowedTools", "Bash")...))
	first := s.waitModel(30*time.Second, "the first time", nil)
	row := s.waitRow(30 * time.Second)
	sid := row.SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	tp := w.transcriptPath(w.cwd, sid)

	early := "early " + uuid.NewString()
	rc, r := w.send(sid, early, "--seen", "1")
	if r.code != 0 || str(rc, "class") != "delivered-steer" {
		s.fatalf("send --seen 1: want delivered-steer, exit 0 (not seen keeps the class's code)\n%s", r)
	}
	earlyID := str(rc, "msg_id")
	// The first tool's round cannot have ended while the send waited
	// unless claude was very slow to get here; only then is a seen line
	// no contradiction.
	if time.Since(first.Time) < firstTool-time.Second {
		if rc["seen"] != false || !strings.Contains(r.stderr, "not seen within 1s") {
			t.Errorf("a line the tool round has not absorbed yet: seen %v, stderr %q; want false and the note", rc["seen"], r.stderr)
		}
		if secs, _ := rc["seen_s"].(float64); secs < 1 {
			t.Errorf("seen_s %v, want the whole wait (1 s)", rc["seen_s"])
		}
		if hasPeerRow(t, tp, earlyID) {
			t.Errorf("the transcript already holds the early line's row; the case needs a line not yet absorbed")
		}
	} else {
		t.Logf("claude reached the send %v after the first request; the not-seen check is skipped", time.Since(first.Time))
	}
	afterEarly := s.waitModel(30*time.Second, "with the early line", func(q *fakemodel.Request) bool {
		return q.Seq > first.Seq && q.MessagesContain(early)
	})

	late := "late " + uuid.NewString()
	sent := time.Now()
	rc, r = w.send(sid, late, "--seen", "20")
	returned := time.Now()
	if r.code != 0 || str(rc, "class") != "delivered-steer" {
		s.fatalf("send --seen 20: want delivered-steer, exit 0\n%s", r)
	}
	lateID := str(rc, "msg_id")
	secs, _ := rc["seen_s"].(float64)
	if rc["seen"] != true || secs <= 0 || secs >= 20 {
		s.fatalf("send --seen 20: seen %v seen_s %v; want true within the wait\n%s", rc["seen"], rc["seen_s"], r)
	}
	if r.stderr != "" {
		t.Errorf("a seen line has no note; stderr %q", r.stderr)
	}
	if !hasPeerRow(t, tp, lateID) {
		t.Errorf("send said seen, but the transcript has no row with msg_id %s", lateID)
	}
	carried := s.waitModel(30*time.Second, "with the late line", func(q *fakemodel.Request) bool {
		return q.Seq > afterEarly.Seq && q.MessagesContain(late)
	})
	// Claude Code writes the row, then asks the model: send returns about
	// when the request goes out (a negative gap: the request came first).
	t.Logf("late line: send took %v, seen_s %.3f; the model was asked with it %v after send returned",
		returned.Sub(sent).Round(time.Millisecond), secs, carried.Time.Sub(returned).Round(time.Millisecond))

	s.mustSucceed(60 * time.Second)
	if !hasPeerRow(t, tp, earlyID) {
		t.Errorf("the early line (not seen within 1 s) never reached the transcript (msg_id %s)", earlyID)
	}
	// Each receipt row carries seen and seen_s.
	b, err := os.ReadFile(filepath.Join(w.stateDir(), "receipts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(l, `"seen":`) || !strings.Contains(l, `"seen_s":`) {
			t.Errorf("receipt row without seen, seen_s: %s", l)
		}
	}
}

// hasPeerRow reports whether the transcript at path has a complete row whose
// peer origin carries msgID (a row being written is skipped).
func hasPeerRow(t *testing.T, path, msgID string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open transcript: %v", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return false // the end, or a torn last row
		}
		if !strings.Contains(string(line), msgID) {
			continue
		}
		if row, perr := transcriptfile.ParseRow(line); perr == nil {
			if o := row.PeerOrigin(); o != nil && o.MsgID == msgID {
				return true
			}
		}
	}
}
