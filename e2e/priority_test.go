package e2e

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/transcript"
)

// peerRowKind says how the transcript recorded the line of msgID: "user"
// (a turn of its own, the user row with the origin), "queued_command"
// (absorbed mid-turn), or "" (not there).
func peerRowKind(t *testing.T, path, msgID string) string {
	t.Helper()
	for _, raw := range decodeLines[json.RawMessage](t, path) {
		row, err := transcript.ParseRow(raw)
		if err != nil {
			continue
		}
		if o := row.PeerOrigin(); o != nil && o.MsgID == msgID {
			if row.Type == transcript.RowAttachment {
				return row.Attachment.Type
			}
			return string(row.Type)
		}
	}
	return ""
}

// TestPriorityLater: a `later` line sent while a tool runs is not absorbed
// into the running turn: the turn ends with its own answer, then the line
// runs as a turn of its own (the transcript's user row with the origin),
// and send --reply returns exactly that turn's answer.
func TestPriorityLater(t *testing.T) {
	t.Parallel()
	answer := "LATER-ANSWER-" + uuid.NewString()
	w := newWorld(t, fakemodel.WithReplies(fakemodel.Bash("sleep 4"), fakemodel.Text("the running turn's answer"), fakemodel.Text(answer)))
	s := w.start(w.withDoorman(pargs("work", "--allowedTools", "Bash")...))
	first := s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	line := "later " + uuid.NewString()
	rc, r := w.send(sid, line, "--priority", "later", "--reply", "40")
	if r.code != 0 || str(rc, "priority") != "later" {
		s.fatalf("send --priority later: %s", r)
	}
	if rep := replyOf(t, rc); rep == nil || rep["text"] != answer {
		s.fatalf("reply %v, want exactly %q", rc["reply"], answer)
	}
	// The request after the tool round does not carry the line; the one
	// after the running turn's answer does.
	afterTool := s.waitModel(30*time.Second, "after the tool", func(q *fakemodel.Request) bool {
		return q.Seq > first.Seq && len(q.ToolResults()) > 0
	})
	if afterTool.MessagesContain(line) {
		t.Errorf("the later line reached the model with the running tool's result (request #%d)", afterTool.Seq)
	}
	s.waitModel(30*time.Second, "with the later line", func(q *fakemodel.Request) bool {
		return q.Seq > afterTool.Seq && q.MessagesContain(line)
	})
	s.mustSucceed(60 * time.Second)
	if k := peerRowKind(t, w.transcriptPath(w.cwd, sid), str(rc, "msg_id")); k != "user" {
		t.Errorf("the later line's row is %q, want the user row of a turn of its own", k)
	}
	if acks := readJSONL(t, w.inbox(sid)+".ack"); len(acks) != 1 || acks[0]["priority"] != "later" {
		t.Errorf("acks %v, want one with priority later", acks)
	}
}

// TestPriorityNow: a `now` line sent while a tool runs reaches the model in
// the same request as the running tool's result. Measured on 2.1.332: the
// line aborts the running tool (its result says so), unlike the facts
// file's "the tool is not interrupted"; the README says so.
func TestPriorityNow(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.WithReplies(fakemodel.Bash("sleep 4"), fakemodel.Text("done")))
	s := w.start(w.withDoorman(pargs("work", "--allowedTools", "Bash")...))
	first := s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	line := "now " + uuid.NewString()
	rc, r := w.send(sid, line, "--priority", "now", "--seen", "30")
	if r.code != 0 || str(rc, "priority") != "now" || rc["seen"] != true {
		s.fatalf("send --priority now --seen 30: %s", r)
	}
	q := s.waitModel(30*time.Second, "with the now line", func(q *fakemodel.Request) bool {
		return q.Seq > first.Seq && q.MessagesContain(line)
	})
	t.Logf("request #%d (%v after the first): tool results %+v", q.Seq, q.Time.Sub(first.Time), q.ToolResults())
	if len(q.ToolResults()) == 0 {
		t.Errorf("the now line reached the model in request #%d without the running tool's result", q.Seq)
	}
	s.mustSucceed(60 * time.Second)
	t.Logf("the now line's row: %s", peerRowKind(t, w.transcriptPath(w.cwd, sid), str(rc, "msg_id")))
}
