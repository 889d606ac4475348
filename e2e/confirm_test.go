package e2e

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// enqueueRows returns the timestamps of a transcript's queue-operation
// enqueue rows by content: the receiver's own record of each line it took.
func enqueueRows(t *testing.T, path string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, r := range readJSONL(t, path) {
		if r["type"] == "queue-operation" && r["operation"] == "enqueue" {
			c, _ := r["content"].(string)
			ts, _ := r["timestamp"].(string)
			out[c] = append(out[c], ts)
		}
	}
	return out
}

// inboxLine returns the inbox line that starts at off.
func (w *world) inboxLine(t *testing.T, sid string, off int64) string {
	t.Helper()
	b, err := os.ReadFile(w.inbox(sid))
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 || off >= int64(len(b)) {
		t.Fatalf("line_offset %d outside the inbox (%d bytes)", off, len(b))
	}
	line, _, _ := strings.Cut(string(b[off:]), "\n")
	return line
}

// checkConfirmed holds every delivered-* ack of the session to the
// receiver's record: confirm "transcript", queued_at the timestamp of the
// one enqueue row of its line, written no later than the ack.
func (w *world) checkConfirmed(t *testing.T, sid string) []ack {
	t.Helper()
	rows := enqueueRows(t, w.transcriptPath(w.cwd, sid))
	var delivered []ack
	for _, a := range w.acks(sid) {
		if !strings.HasPrefix(a.Class, "delivered-") {
			continue
		}
		delivered = append(delivered, a)
		line := w.inboxLine(t, sid, *a.LineOffset)
		got := rows[line]
		if len(got) != 1 {
			t.Errorf("line %q: %d enqueue rows %q, want exactly one", line, len(got), got)
			continue
		}
		if a.Confirm != "transcript" || a.QueuedAt == nil || *a.QueuedAt != got[0] {
			t.Errorf("ack of %q: confirm %q queued_at %v; want transcript and its enqueue row's %s", line, a.Confirm, a.QueuedAt, got[0])
		}
		acked, err1 := time.Parse(time.RFC3339Nano, a.TS)
		queued, err2 := time.Parse(time.RFC3339Nano, got[0])
		if err1 != nil || err2 != nil || acked.Before(queued.Truncate(time.Millisecond)) {
			t.Errorf("ack of %q at %s, its enqueue row at %s: acked before the receiver queued it", line, a.TS, got[0])
		}
	}
	return delivered
}

// TestConfirmedDelivery: through the real CLI in -p mode, every line the
// doorman acks delivered rests on the receiver's own enqueue row: confirm
// "transcript", queued_at that row's timestamp, and the send receipt says
// the same.
func TestConfirmedDelivery(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.WithReplies(fakemodel.Bash("sleep 4"), fakemodel.Text("done")))
	s := w.start(w.withDoorman(pargs("wait for lines", "--allowedTools", "Bash")...))
	s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	var receipts []map[string]any
	for i := range 3 {
		rc, r := w.send(sid, fmt.Sprintf("confirmed %d %s", i, uuid.NewString()))
		if r.code != 0 || !strings.HasPrefix(str(rc, "class"), "delivered-") {
			s.fatalf("send %d: want delivered-*, exit 0\n%s\nheartbeat: %s", i, r, w.heartbeatText(sid))
		}
		receipts = append(receipts, rc)
	}
	s.mustSucceed(60 * time.Second)
	acks := w.checkConfirmed(t, sid)
	if len(acks) != 3 {
		t.Fatalf("%d delivered acks, want 3", len(acks))
	}
	for i, rc := range receipts {
		if str(rc, "confirm") != "transcript" || str(rc, "queued_at") == "" || str(rc, "queued_at") != *acks[i].QueuedAt {
			t.Errorf("receipt %d: confirm %v queued_at %v; want the ack's transcript, %v", i, rc["confirm"], rc["queued_at"], *acks[i].QueuedAt)
		}
	}
}

// TestBucketDontAsk: in dontAsk mode a foreign writer empties the
// receiver's bucket for sender x (35 frames with from "x"); then lines
// from x go through the doorman. None is acked delivered before its
// enqueue row exists, each is enqueued exactly once before the session
// ends (its tool keeps it alive while the bucket refills), and each sender
// got timeout or a delivered verdict whose ack rests on that row: never a
// false delivered. With the old doorman (ack after a quiet settle) the
// lines were acked delivered-steer and never enqueued.
func TestBucketDontAsk(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the receiver's 30 s windows")
	}
	t.Parallel()
	w := newWorld(t, fakemodel.WithReplies(fakemodel.Bash("for i in $(seq 28); do sleep 2; done"), fakemodel.Text("done")))
	s := w.start(w.withDoorman(pargs("wait while the bucket refills", "--permission-mode", "dontAsk", "--allowedTools", "Bash")...))
	s.waitModel(30*time.Second, "the first time", nil)
	row := s.waitRow(30 * time.Second)
	sid := row.SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	var foreign strings.Builder
	for range 35 {
		foreign.WriteString(newDoorLine("x").frame(sid) + "\n")
	}
	if err := writeUnixLines(row.MessagingSocketPath, foreign.String()); err != nil {
		s.fatalf("foreign writer: %v", err)
	}
	time.Sleep(500 * time.Millisecond) // the receiver reads the 35 frames
	lines := make([]string, 3)
	receipts := make([]map[string]any, 3)
	runs := make([]ooRun, 3)
	var wg sync.WaitGroup
	for i := range lines {
		lines[i] = fmt.Sprintf("[x 📡] through the doorman %d %s", i, uuid.NewString())
		wg.Add(1)
		go func() {
			defer wg.Done()
			receipts[i], runs[i] = w.ooJSON([]string{"send", sid, lines[i], "--wait", "4"})
		}()
		time.Sleep(100 * time.Millisecond) // in order
	}
	wg.Wait()
	for i, rc := range receipts {
		class := str(rc, "class")
		switch {
		case class == "timeout" && runs[i].code == 5:
			t.Logf("line %d: timeout, note %q", i, str(rc, "note"))
		case strings.HasPrefix(class, "delivered-") && runs[i].code == 0:
			if str(rc, "confirm") != "transcript" || str(rc, "queued_at") == "" {
				t.Errorf("line %d delivered with confirm %v queued_at %v", i, rc["confirm"], rc["queued_at"])
			}
		default:
			t.Errorf("line %d: %s exit %d; want timeout (5) or delivered-* (0)\n%s", i, class, runs[i].code, runs[i])
		}
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		n := 0
		for _, a := range w.acks(sid) {
			if strings.HasPrefix(a.Class, "delivered-") {
				n++
			}
		}
		if n >= len(lines) || time.Now().After(deadline) || s.exited() {
			break
		}
		time.Sleep(200 * time.Millisecond) // another process's file
	}
	s.mustSucceed(120 * time.Second)
	rows := enqueueRows(t, w.transcriptPath(w.cwd, sid))
	for i, l := range lines {
		if n := len(rows[l]); n != 1 {
			t.Errorf("line %d enqueued %d times before the session ended, want exactly once", i, n)
		}
	}
	if acks := w.checkConfirmed(t, sid); len(acks) != len(lines) {
		t.Errorf("%d delivered acks, want %d\nheartbeat: %s", len(acks), len(lines), w.heartbeatText(sid))
	}
}
