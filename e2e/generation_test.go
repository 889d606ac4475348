package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestSameLineAfterTruncation (issue 18, point 1): through the real CLI, a
// line is sent and delivered, the inbox is emptied (`: > <inbox>`) while
// the doorman runs, and the same line is sent again. The second send is a
// new line of the file's new generation: it goes through the door again
// (after the receiver's 30 s duplicate window, which the doorman paces
// for), gets its own enqueue row, and its ack carries its own msg_id and
// that row's time. The old doorman acked it at once on the first write's
// record and row (the first msg_id) and never wrote it to the door.
func TestSameLineAfterTruncation(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the receiver's 30 s duplicate window")
	}
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("for i in $(seq 40); do sleep 2; done"), fakemodel.Text("done")}})
	s := w.start(w.withDoorman(pargs("wait for lines", "--allowedTools", "Bash")...))
	s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	text := "hourly check " + uuid.NewString()
	rc1, r := w.send(sid, text)
	if r.code != 0 || !strings.HasPrefix(str(rc1, "class"), "delivered-") {
		s.fatalf("first send: want delivered-*, exit 0\n%s\nheartbeat: %s", r, w.heartbeatText(sid))
	}
	if err := os.Truncate(w.inbox(sid), 0); err != nil {
		t.Fatal(err)
	}
	s.waitHeartbeat(sid, 15*time.Second, "the doorman at offset 0 of the emptied inbox", func(h heartbeat) bool {
		return following(sid)(h) && h.Offset == 0
	})
	rc2, r := w.send(sid, text, "--wait", "90")
	if r.code != 0 || !strings.HasPrefix(str(rc2, "class"), "delivered-") {
		s.fatalf("second send: want delivered-*, exit 0\n%s\nheartbeat: %s", r, w.heartbeatText(sid))
	}
	if str(rc2, "msg_id") == "" || str(rc2, "msg_id") == str(rc1, "msg_id") {
		t.Errorf("second send acked with msg_id %q, the first's %q: want its own door write's", str(rc2, "msg_id"), str(rc1, "msg_id"))
	}
	if rc2["line_offset"] != float64(0) {
		t.Errorf("second send's line_offset %v, want 0 (the emptied inbox)", rc2["line_offset"])
	}
	line := w.inboxLine(t, sid, 0)
	rows := enqueueRows(t, w.transcriptPath(w.cwd, sid))[line]
	if len(rows) != 2 {
		t.Fatalf("line %q: enqueue rows %q, want 2 (one per send)", line, rows)
	}
	acks := w.acks(sid)
	if len(acks) != 2 {
		t.Fatalf("%d acks, want 2", len(acks))
	}
	for i, a := range acks {
		if !strings.HasPrefix(a.Class, "delivered-") || a.Confirm != "transcript" || a.QueuedAt == nil || *a.QueuedAt != rows[i] {
			t.Errorf("ack %d: %s confirm %q queued_at %v, want delivered on enqueue row %s", i, a.Class, a.Confirm, a.QueuedAt, rows[i])
		}
	}
	if acks[0].MsgID == acks[1].MsgID {
		t.Errorf("both acks carry msg_id %s", acks[0].MsgID)
	}
	s.mustSucceed(120 * time.Second)
}

// TestSameLineAfterTruncationWithNoDoorman (issue 18, point 1, the second
// variant): the line is delivered by one run of the session, the inbox is
// emptied and the same line sent again while the session (and so its
// doorman) is gone, and the session is resumed. The resumed session's
// doorman finds the inbox modified after its offset was written without
// growing past it, follows it as a new generation, and delivers the line:
// a second enqueue row and its own msg_id. The old doorman took the offset
// for the end of the old line and wrote nothing.
func TestSameLineAfterTruncationWithNoDoorman(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the receiver's 30 s duplicate window")
	}
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 3"), fakemodel.Text("done")}})
	sid := uuid.NewString()
	s := w.start(w.withDoorman(pargs("wait for a line", "--allowedTools", "Bash", "--session-id", sid)...))
	s.waitModel(30*time.Second, "the first time", nil)
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	text := "hourly check " + uuid.NewString()
	rc1, r := w.send(sid, text)
	if r.code != 0 || !strings.HasPrefix(str(rc1, "class"), "delivered-") {
		s.fatalf("first send: want delivered-*, exit 0\n%s\nheartbeat: %s", r, w.heartbeatText(sid))
	}
	s.mustSucceed(60 * time.Second)
	if err := os.Truncate(w.inbox(sid), 0); err != nil {
		t.Fatal(err)
	}
	rc2, r := w.send(sid, text)
	if r.code != 3 || !strings.HasPrefix(str(rc2, "class"), "queued-") {
		t.Fatalf("second send with no session running: want queued-*, exit 3\n%s", r)
	}
	w.model.Enqueue(fakemodel.Bash("for i in $(seq 30); do sleep 2; done"), fakemodel.Text("done again"))
	s2 := w.start(w.withDoorman(pargs("wait again", "--allowedTools", "Bash", "--resume", sid)...))
	var acks []ack
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := eventually(ctx, func() (bool, error) {
		acks = w.acks(sid)
		return len(acks) >= 2 || s2.exited(), nil
	}); err != nil || len(acks) < 2 {
		s2.fatalf("the resumed session's doorman acked %d lines, want the re-sent one too (%v)\nheartbeat: %s", len(acks), err, w.heartbeatText(sid))
	}
	line := w.inboxLine(t, sid, 0)
	rows := enqueueRows(t, w.transcriptPath(w.cwd, sid))[line]
	if len(rows) != 2 {
		t.Fatalf("line %q: enqueue rows %q, want 2 (one per send)", line, rows)
	}
	for i, a := range acks {
		if !strings.HasPrefix(a.Class, "delivered-") || a.Confirm != "transcript" || a.QueuedAt == nil || *a.QueuedAt != rows[i] {
			t.Errorf("ack %d: %s confirm %q queued_at %v, want delivered on enqueue row %s", i, a.Class, a.Confirm, a.QueuedAt, rows[i])
		}
	}
	if acks[0].MsgID == acks[1].MsgID || acks[0].MsgID != str(rc1, "msg_id") {
		t.Errorf("acks carry msg_ids %s and %s (first send's %s): want one each", acks[0].MsgID, acks[1].MsgID, str(rc1, "msg_id"))
	}
	s2.mustSucceed(120 * time.Second)
}
