package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestPinnedVersion: the binary under test is the one claude-code.version
// pins, so the facts below are checked against the right CLI.
func TestPinnedVersion(t *testing.T) {
	t.Parallel()
	bin := claudeBinary(t)
	pin, err := os.ReadFile(filepath.Join("..", "claude-code.version"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("claude --version: %v", err)
	}
	if want := strings.TrimSpace(string(pin)); !strings.HasPrefix(string(out), want+" ") {
		t.Errorf("claude --version = %q, want %s (the pin)", out, want)
	}
}

// TestDoorWire: the door's wire rules that a sender and the doorman rely
// on, in one default-mode session: several frames on one connection are all
// taken; an identical body from the same sender within 30 s is dropped
// silently; a frame for another session id is dropped; a `later` line runs
// another turn whose result JSON carries result_index 1 and the origin
// with the frame's msg_id.
func TestDoorWire(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 3"), fakemodel.Text("done")}})
	s := w.start(pargs("wait for peers", "--allowedTools", "Bash"))
	first := s.waitModel(30*time.Second, "the first time", nil)
	row := s.waitRow(30 * time.Second)

	frame := func(sid, from, msgID, priority, text string) string {
		b, _ := json.Marshal(map[string]any{
			"type": "user", "session_id": sid, "from": from, "msg_id": msgID, "priority": priority,
			"message": map[string]any{"role": "user", "content": text},
		})
		return string(b)
	}
	dupText := "e2e duplicate " + uuid.NewString()
	dup1, dup2 := uuid.NewString(), uuid.NewString()
	otherText := "e2e other session " + uuid.NewString()
	laterText := "e2e later " + uuid.NewString()
	laterID := uuid.NewString()

	// One connection, three frames: the body twice from one sender, and a
	// frame for another session.
	lines := frame(row.SessionID, "e2e-dup", dup1, "next", dupText) + "\n" +
		frame(row.SessionID, "e2e-dup", dup2, "next", dupText) + "\n" +
		frame(uuid.NewString(), "e2e-other", uuid.NewString(), "next", otherText) + "\n"
	if err := writeUnixLines(row.MessagingSocketPath, lines); err != nil {
		s.fatalf("write to the door: %v", err)
	}
	// A later line, without a trailing newline: taken at half-close.
	if err := writeUnixLines(row.MessagingSocketPath, frame(row.SessionID, "e2e-later", laterID, "later", laterText)); err != nil {
		s.fatalf("write to the door: %v", err)
	}

	s.waitModel(30*time.Second, "with the duplicated body", func(r *fakemodel.Request) bool {
		return r.Seq > first.Seq && r.MessagesContain(dupText)
	})
	s.waitModel(30*time.Second, "with the later line", func(r *fakemodel.Request) bool {
		return r.Seq > first.Seq && r.MessagesContain(laterText)
	})
	res := s.mustSucceed(60 * time.Second)

	reqs := w.model.Requests()
	last := reqs[len(reqs)-1]
	if n := strings.Count(last.Text(), dupText); n != 1 {
		s.errorf("the duplicated body appears %d times in the last request, want once", n)
	}
	for _, r := range reqs {
		if r.Contains(otherText) {
			s.errorf("%s shows a frame addressed to another session", &r)
		}
	}

	if res["result_index"] != 1.0 {
		s.errorf("result_index = %v, want 1 (the peer's turn)", res["result_index"])
	}
	origin, _ := res["origin"].(map[string]any)
	if origin["msg_id"] != laterID || origin["kind"] != "peer" || origin["from"] != "e2e-later" {
		s.errorf("result origin = %v, want kind peer, from e2e-later, msg_id %s", origin, laterID)
	}

	rows := readJSONL(t, w.transcriptPath(w.cwd, row.SessionID))
	if findOrigin(rows, dup1) == nil {
		t.Errorf("transcript has no origin for the first copy %s", dup1)
	}
	if o := findOrigin(rows, dup2); o != nil {
		t.Errorf("transcript has an origin for the dropped copy: %v", o)
	}
	peerTurn := false
	for _, r := range rows {
		if r["type"] == "user" && r["isMeta"] == true && r["turnOrigin"] == "peer" {
			if o, _ := r["origin"].(map[string]any); o["msg_id"] == laterID {
				peerTurn = true
			}
		}
	}
	if !peerTurn {
		t.Errorf("transcript has no user row with isMeta, turnOrigin peer and origin msg_id %s", laterID)
	}
}
