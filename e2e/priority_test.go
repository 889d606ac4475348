package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// peerRowKind says how the transcript recorded the line of msgID: "user"
// (a turn of its own, the user row with the origin), "queued_command"
// (absorbed mid-turn), or "" (not there).
func peerRowKind(t *testing.T, path, msgID string) string {
	t.Helper()
	for _, raw := range decodeLines[json.RawMessage](t, path) {
		row, err := transcriptfile.ParseRow(raw)
		if err != nil {
			continue
		}
		if o := row.PeerOrigin(); o != nil && o.MsgID == msgID {
			if row.Type == transcriptfile.RowAttachment {
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
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 4"), fakemodel.Text("the running turn's answer"), fakemodel.Text(answer)}})
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

// TestPriorityNow: a `now` line sent while a tool runs aborts the running
// tool and reaches the model at once, with the aborted tool's result, as
// the user row of the interrupting turn. Measured on 2.1.332, unlike the
// facts file's "the tool is not interrupted"; the README says so. Each
// assertion is one a `next` line in the same scenario fails: it waits for
// the tool (its result is the command's own, the request comes after the
// sleep) and is absorbed as a queued_command attachment.
func TestPriorityNow(t *testing.T) {
	t.Parallel()
	// The sleep is long so the line surely lands while it runs, however
	// slowly a loaded machine brings the doorman up, and so a request
	// that waited for it is told apart from one that did not. (The Bash
	// tool refuses a standalone long sleep; a loop of short ones runs.)
	const sleep = 30 * time.Second
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash(fmt.Sprintf("for i in $(seq %d); do sleep 1; done", int(sleep.Seconds()))), fakemodel.Text("done")}})
	s := w.start(w.withDoorman(pargs("work", "--allowedTools", "Bash")...))
	first := s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	line := "now " + uuid.NewString()
	rc, r := w.send(sid, line, "--priority", "now", "--seen", "30")
	if r.code != 0 || str(rc, "priority") != "now" || rc["seen"] != true {
		s.fatalf("send --priority now --seen 30: %s", r)
	}
	q := s.waitModel(sleep+30*time.Second, "with the now line", func(q *fakemodel.Request) bool {
		return q.Seq > first.Seq && q.MessagesContain(line)
	})
	took := q.Time.Sub(first.Time)
	t.Logf("request #%d (%v after the first): tool results %+v", q.Seq, took, q.ToolResults())
	if took > sleep*3/4 {
		t.Errorf("the now line reached the model %v after the tool began, not before its %v sleep would end", took, sleep)
	}
	trs := q.ToolResults()
	if len(trs) != 1 {
		s.fatalf("request #%d carries %d tool results, want the running tool's one", q.Seq, len(trs))
	}
	if tr := trs[0]; !tr.IsError || !strings.Contains(toolResultText(tr), "aborted") {
		t.Errorf("the running tool's result is %+v, want the error that says it was aborted", tr)
	}
	s.mustSucceed(60 * time.Second)
	if k := peerRowKind(t, w.transcriptPath(w.cwd, sid), str(rc, "msg_id")); k != "user" {
		t.Errorf("the now line's row is %q, want the user row of the turn it interrupts (a queued_command is how next is absorbed)", k)
	}
}

// toolResultText is the text of a tool_result block's content.
func toolResultText(b fakemodel.Block) string {
	var sb strings.Builder
	sb.WriteString(b.Text)
	for _, c := range b.Content {
		sb.WriteString(c.Text)
	}
	return sb.String()
}
