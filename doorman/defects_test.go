package doorman_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
)

// Defect 1, stale offset: an inbox truncated and refilled while no doorman
// runs keeps its inode, so the old offset looks valid and lands inside a
// new line. The doorman verifies the offset against the last ack before
// trusting it, and resumes at the first unacked line: every new line is
// delivered whole, none as a fragment.
func TestStaleOffsetAfterRewrite(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	for _, l := range []string{"[a 📡] 1", "[a 📡] 2", "[a 📡] 3", "[a 📡] 4"} {
		w.appendLine(sid, l)
	}
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if err := os.Truncate(files.Inbox, 0); err != nil {
		t.Fatal(err)
	}
	var fresh []string
	for i := range 4 {
		l := "[b 📡] a new line, longer than the old ones, number " + string(rune('1'+i))
		fresh = append(fresh, l)
		w.appendLine(sid, l)
	}
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	got := contents(w.waitQueued(8))[4:]
	if diff := cmp.Diff(fresh, got); diff != "" {
		t.Errorf("delivered after the rewrite (-want +got):\n%s", diff)
	}
	for _, c := range got {
		if !strings.HasPrefix(c, "[b 📡] ") {
			t.Errorf("delivered a fragment %q", c)
		}
	}
}

// Defect 2, pacing forgotten on restart: a new doorman seeds its pacer
// from the recent acks, so it does not write into the bucket the previous
// doorman emptied. Every line the second doorman writes is queued by the
// receiver (none dropped by the bucket while acked delivered, as before).
func TestPacerSeededFromAcks(t *testing.T) {
	w := newWorld(t)
	g := fakedoor.Guard{Capacity: 3, RefillPerSecond: 2, DedupWindow: 100 * time.Millisecond}
	w.door.Close()
	w.door = w.newDoor(fakedoor.Options{Guard: &g})
	sid := w.owned("busy")
	guard := doorman.Guard{Capacity: g.Capacity, RefillPerSecond: g.RefillPerSecond, DedupWindow: g.DedupWindow}
	runOnce := func() {
		var log bytes.Buffer
		dm := doorman.New(doorman.WithGuard(doorman.Options{Host: w.host(nil), Config: w.config(), Mode: doorman.ModeMCP, Once: true, Log: &log, Version: "test"}, guard))
		if err := dm.Run(context.Background()); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
	}
	for i := range 3 {
		w.appendLine(sid, fmt.Sprintf("[x 📡] first run %d", i))
	}
	runOnce()
	for i := range 3 {
		w.appendLine(sid, fmt.Sprintf("[x 📡] second run %d", i))
	}
	runOnce()
	for _, f := range w.waitQueued(6) {
		if f.Disposition != fakedoor.Queued {
			t.Errorf("frame %q: %s; want every line written into a bucket with room", f.Content, f.Disposition)
		}
	}
	acks := readAcks(t, inboxv1.FilesFor(w.fs.Paths.InboxDir, sid).Ack)
	if len(acks) != 6 {
		t.Fatalf("%d acks, want 6", len(acks))
	}
}

// Defect 3, doubled delivery when the ack cannot be written: the line the
// receiver queued is not written to the door again; its ack is retried,
// the heartbeat says why, and it lands once the ack file can be written.
func TestAckUnwritableNotRedelivered(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	cfg := w.config()
	cfg.DoormanPoll = 50 * time.Millisecond
	dm, lg, stop := w.running(doorman.Options{Host: w.host(nil), Config: cfg})
	defer func() {
		if t.Failed() {
			t.Log(lg.String())
		}
	}()
	waitState(t, dm, inboxv1.StateFollowing)
	if err := os.MkdirAll(files.Ack, 0o700); err != nil { // an ack file that cannot be appended to
		t.Fatal(err)
	}
	w.appendLine(sid, "[a 📡] once only")
	w.waitQueued(1)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.HasPrefix(dm.Status().LastError, string(inboxv1.ReasonAckUnwritable)) {
		if time.Now().After(deadline) {
			t.Fatalf("last_error %q, want it to start with %s", dm.Status().LastError, inboxv1.ReasonAckUnwritable)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second) // twenty safety polls: time enough to write the line again
	if n := len(userFrames(w.door.Frames())); n != 1 {
		t.Errorf("while its ack could not be written, the line went to the door %d times, want once", n)
	}
	if err := os.Remove(files.Ack); err != nil {
		t.Fatal(err)
	}
	acks := w.waitAcks(sid, 1)
	stop()
	if n := len(userFrames(w.door.Frames())); n != 1 {
		t.Errorf("the line went to the door %d times, want once", n)
	}
	if acks[0].Confirm != inboxv1.ConfirmTranscript || acks[0].QueuedAt == nil {
		t.Errorf("ack confirm %q queued_at %v, want transcript and the row's time", acks[0].Confirm, acks[0].QueuedAt)
	}
}

// Defect 4, a bad token: a token the door frame cannot carry is a delivery
// error (the line waits, the heartbeat says why), not a refused ack.
func TestBadTokenIsADeliveryError(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	w.fs.WriteKey(w.row, "bad\ntoken")
	w.appendLine(sid, "[a 📡] waits for a good token")
	err, st, log := w.runOnce(doorman.ModeMCP, "", nil)
	var de *doorman.DeliveryError
	if !errors.As(err, &de) {
		t.Fatalf("run = %v, want a *DeliveryError\n%s", err, log)
	}
	if !strings.HasPrefix(st.LastError, string(inboxv1.ReasonBadToken)) {
		t.Errorf("last_error %q, want %s", st.LastError, inboxv1.ReasonBadToken)
	}
	if acks := readAcks(t, inboxv1.FilesFor(w.fs.Paths.InboxDir, sid).Ack); len(acks) != 0 {
		t.Errorf("acks %+v, want none (the line waits)", acks)
	}
	if strings.Contains(log+st.LastError, "bad\ntoken") {
		t.Error("the token is in the log or the status")
	}
	if n := len(w.door.Frames()); n != 0 {
		t.Errorf("%d frames written, want none", n)
	}
}

func userFrames(fs []fakedoor.Frame) []fakedoor.Frame {
	var out []fakedoor.Frame
	for _, f := range fs {
		if f.Type == "user" {
			out = append(out, f)
		}
	}
	return out
}

// A line the receiver does not queue (a foreign writer emptied the
// sender's bucket) is not acked delivered: it stays pending with the
// reason in the status, and is written again once the receiver's windows
// have passed, then acked on its one enqueue row.
func TestNotQueuedStaysPendingThenRetried(t *testing.T) {
	w := newWorld(t)
	g := fakedoor.Guard{Capacity: 2, RefillPerSecond: 2, DedupWindow: 300 * time.Millisecond}
	// The door's clock stands still from the foreign frames until the
	// doorman's first write of the line is taken: however long the doorman
	// takes to start and write (a loaded machine), the receiver sees that
	// write when the bucket is still empty, as the test means. From then
	// on it is the real clock, so the doorman's retry, paced by its own
	// clock, finds the windows passed.
	frozen := time.Now()
	var thawed atomic.Bool
	w.door.Close()
	w.door = w.newDoor(fakedoor.Options{Guard: &g,
		Now: func() time.Time {
			if thawed.Load() {
				return time.Now()
			}
			return frozen
		},
		RefuseWhen: func(f fakedoor.Frame) bool { // f.Time is already taken
			if !strings.HasPrefix(f.Content, "foreign ") {
				thawed.Store(true)
			}
			return false
		}})
	sid := w.owned("busy")
	// The foreign writer: two frames from x, straight to the door.
	c, err := net.Dial("unix", w.door.Path())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		fmt.Fprintf(c, `{"type":"user","from":"x","message":{"role":"user","content":"foreign %d"}}`+"\n", i)
	}
	c.Close()
	w.door.WaitFrames(context.Background(), 2)
	cfg := w.config()
	cfg.DoorConfirm = 300 * time.Millisecond
	dm, _, stop := w.running(doorman.WithGuard(doorman.Options{Host: w.host(nil), Config: cfg}, doorman.Guard{Capacity: 2, RefillPerSecond: 2, DedupWindow: 300 * time.Millisecond}))
	line := "[x 📡] after the foreign frames"
	w.appendLine(sid, line)
	waitStatus(t, dm, func(s doorman.Status) bool { return s.Unconfirmed > 0 })
	if st := dm.Status(); !strings.HasPrefix(st.LastError, string(inboxv1.ReasonReceiverDidNotQueue)) {
		t.Errorf("last_error %q, want %s", st.LastError, inboxv1.ReasonReceiverDidNotQueue)
	}
	if acks := readAcks(t, inboxv1.FilesFor(w.fs.Paths.InboxDir, sid).Ack); len(acks) != 0 {
		t.Fatalf("acked %+v before the receiver queued the line", acks)
	}
	acks := w.waitAcks(sid, 1)
	// The ack is written before the doorman counts it: wait for the count.
	waitStatus(t, dm, func(s doorman.Status) bool { return s.Confirmed > 0 })
	st := dm.Status()
	stop()
	rows := enqueueTimes(t, w.transcript)[line]
	if len(rows) != 1 {
		t.Fatalf("enqueue rows of the line: %q, want exactly one", rows)
	}
	if acks[0].Confirm != inboxv1.ConfirmTranscript || acks[0].QueuedAt == nil || *acks[0].QueuedAt != rows[0] {
		t.Errorf("ack confirm %q queued_at %v, want transcript and %s", acks[0].Confirm, acks[0].QueuedAt, rows[0])
	}
	if st.Confirmed != 1 || st.Unconfirmed != 1 || st.LastError != "" {
		t.Errorf("status confirmed %d unconfirmed %d last_error %q; want 1, 1, none", st.Confirmed, st.Unconfirmed, st.LastError)
	}
	var disp []fakedoor.Disposition
	for _, f := range userFrames(w.door.Frames())[2:] {
		disp = append(disp, f.Disposition)
	}
	if diff := cmp.Diff([]fakedoor.Disposition{fakedoor.DroppedRateLimited, fakedoor.Queued}, disp); diff != "" {
		t.Errorf("the doorman's writes (-want +got):\n%s", diff)
	}
}

// After MaxWrites writes the receiver never queued, the line is acked
// refused (receiver-did-not-queue) so the lines after it move on; it was
// never acked delivered.
func TestNeverQueuedIsRefusedAfterTheLimit(t *testing.T) {
	w := newWorld(t)
	w.door.Close()
	w.door = w.newDoor(fakedoor.Options{SessionID: "00000000-0000-4000-8000-000000000000"}) // drops every frame
	sid := w.owned("busy")
	cfg := w.config()
	cfg.DoorConfirm = 100 * time.Millisecond
	_, _, stop := w.running(doorman.WithGuard(doorman.Options{Host: w.host(nil), Config: cfg}, doorman.Guard{RefillPerSecond: 20, DedupWindow: 100 * time.Millisecond}))
	w.appendLine(sid, "[a 📡] never queued")
	acks := w.waitAcks(sid, 1)
	stop()
	if acks[0].Class != inboxv1.AckRefused || acks[0].Reason != string(inboxv1.ReasonReceiverDidNotQueue) {
		t.Errorf("ack %s (%s), want refused (%s)", acks[0].Class, acks[0].Reason, inboxv1.ReasonReceiverDidNotQueue)
	}
	if n := len(userFrames(w.door.Frames())); n != doorman.MaxWrites {
		t.Errorf("%d writes, want %d", n, doorman.MaxWrites)
	}
}

// A doorman killed after its door write and before the ack: the next one
// finds the attempt record and the receiver's enqueue row of that write,
// and acks the line without writing it again.
func TestRestartAcksAnEarlierWrite(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	line := "[a 📡] written before the kill"
	off := w.appendLine(sid, line)
	fi, _ := os.Stat(files.Inbox)
	ino := fi.Sys().(*syscall.Stat_t).Ino
	at := time.Now()
	att := inbox.Attempt{LineOffset: off, SHA256: inbox.SHA256([]byte(line)), Inode: ino, MsgID: "5b0e7c1e-8a3f-4d6b-9c2e-0f1a2b3c4d5e",
		Transcript: w.transcript, At: jsonrow.FormatTime(at), Writes: 1}
	if err := inbox.WriteAttempt(files.Attempt, att); err != nil {
		t.Fatal(err)
	}
	row := `{"type":"queue-operation","operation":"enqueue","timestamp":"` + at.UTC().Format("2006-01-02T15:04:05.000Z") + `","sessionId":"` + sid + `","content":"` + line + `"}`
	if err := os.MkdirAll(filepath.Dir(w.transcript), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.transcript, []byte(row+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if n := len(w.door.Frames()); n != 0 {
		t.Errorf("%d frames: the line was written again", n)
	}
	acks := readAcks(t, files.Ack)
	if len(acks) != 1 || acks[0].MsgID != att.MsgID || acks[0].Confirm != inboxv1.ConfirmTranscript || acks[0].QueuedAt == nil {
		t.Errorf("acks %+v, want one confirmed ack with the first write's msg_id", acks)
	}
}

// writeAttemptAndRow records an earlier write of line (at, first write at
// firstAt) and, when rowAt is not zero, the receiver's enqueue row of it
// stamped rowAt in the session's transcript.
func (w *world) writeAttemptAndRow(t *testing.T, sid, line string, att inbox.Attempt, rowAt time.Time) inboxv1.Files {
	t.Helper()
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	off := w.appendLine(sid, line)
	fi, err := os.Stat(files.Inbox)
	if err != nil {
		t.Fatal(err)
	}
	att.LineOffset, att.SHA256, att.Inode = off, inbox.SHA256([]byte(line)), fi.Sys().(*syscall.Stat_t).Ino
	att.MsgID, att.Transcript = "5b0e7c1e-8a3f-4d6b-9c2e-0f1a2b3c4d5e", w.transcript
	if err := inbox.WriteAttempt(files.Attempt, att); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(w.transcript), 0o700); err != nil {
		t.Fatal(err)
	}
	var body string
	if !rowAt.IsZero() {
		body = enqueueRow(sid, line, rowAt)
	}
	if err := os.WriteFile(w.transcript, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return files
}

// enqueueRow is the receiver's enqueue row of line, stamped at.
func enqueueRow(sid, line string, at time.Time) string {
	return `{"type":"queue-operation","operation":"enqueue","timestamp":"` + at.UTC().Format("2006-01-02T15:04:05.000Z") + `","sessionId":"` + sid + `","content":"` + line + `"}` + "\n"
}

// ackedNotWritten checks that the line was acked on its row, confirmed,
// and not written to the door.
func (w *world) ackedNotWritten(t *testing.T, files inboxv1.Files) {
	t.Helper()
	if n := len(w.door.Frames()); n != 0 {
		t.Errorf("%d frames: the line was written again though its row is there", n)
	}
	if acks := readAcks(t, files.Ack); len(acks) != 1 || acks[0].Confirm != inboxv1.ConfirmTranscript {
		t.Errorf("acks %+v, want one confirmed ack", acks)
	}
}

// A doorman killed in its confirmation wait leaves a record whose fate is
// unknown (not marked unconfirmed): the receiver may hold the line or be
// slower than the bound. The next doorman does not write the line again at
// once; it waits out the bound and the receiver's windows from the
// record's time, and acks the late row when it comes.
func TestUnknownFateWaitsOutTheWindows(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	line := "[a 📡] written before the kill, its row still to come"
	at := time.Now()
	files := w.writeAttemptAndRow(t, sid, line, inbox.Attempt{At: jsonrow.FormatTime(at), Writes: 1}, time.Time{})
	err, st, log := w.runOnce(doorman.ModeMCP, "", nil)
	if !errors.Is(err, doorman.ErrNotQueued) {
		t.Fatalf("run = %v, want ErrNotQueued (the line waits)\n%s", err, log)
	}
	if !strings.HasPrefix(st.LastError, string(inboxv1.ReasonReceiverDidNotQueue)) {
		t.Errorf("last_error %q, want %s", st.LastError, inboxv1.ReasonReceiverDidNotQueue)
	}
	if n := len(w.door.Frames()); n != 0 {
		t.Fatalf("%d frames: the line was written again while the first write's row could still come\n%s", n, log)
	}
	// The held line is approved: its row comes late.
	if err := os.WriteFile(w.transcript, []byte(enqueueRow(sid, line, time.Now())), 0o600); err != nil {
		t.Fatal(err)
	}
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	w.ackedNotWritten(t, files)
}

// The late row of the line's first write counts before every later write,
// however long before the last write it was stamped: write 3 does not go
// out when write 1's row is there.
func TestLateRowOfTheFirstWrite(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	line := "[a 📡] held, then approved"
	now := time.Now()
	first, last := now.Add(-2*time.Minute), now.Add(-time.Minute)
	att := inbox.Attempt{At: jsonrow.FormatTime(last), Writes: 2, Unconfirmed: true, FirstAt: jsonrow.FormatTime(first)}
	files := w.writeAttemptAndRow(t, sid, line, att, first.Add(100*time.Millisecond))
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	w.ackedNotWritten(t, files)
}

// A record without the first-write keys (an older file) is its own first
// write; the next write's record carries the first write's time on.
func TestAttemptKeepsTheFirstWrite(t *testing.T) {
	w := newWorld(t)
	w.door.Close()
	w.door = w.newDoor(fakedoor.Options{SessionID: "00000000-0000-4000-8000-000000000000"}) // drops every frame
	sid := w.owned("busy")
	line := "[a 📡] never queued"
	first := time.Now().Add(-time.Minute)
	files := w.writeAttemptAndRow(t, sid, line, inbox.Attempt{At: jsonrow.FormatTime(first), Writes: 1, Unconfirmed: true}, time.Time{})
	cfg := w.config()
	cfg.DoorConfirm = 50 * time.Millisecond
	var log bytes.Buffer
	dm := doorman.New(doorman.Options{Host: w.host(nil), Config: cfg, Mode: doorman.ModeMCP, Once: true, Log: &log, Version: "test"})
	if err := dm.Run(context.Background()); !errors.Is(err, doorman.ErrNotQueued) {
		t.Fatalf("run = %v, want ErrNotQueued\n%s", err, log.String())
	}
	got, err := inbox.ReadAttempt(files.Attempt)
	if err != nil {
		t.Fatal(err)
	}
	at, tr, off := got.First()
	if at != jsonrow.FormatTime(first) || tr != w.transcript || off != 0 || got.Writes != 2 {
		t.Errorf("record %+v, want write 2 with the first write at %s in %s at 0", got, jsonrow.FormatTime(first), w.transcript)
	}
}

// Neither the ack nor the attempt record can be written, and the doorman
// is restarted: the line goes to the door once. A write that cannot be
// recorded is not made (the line waits, the status says why); once
// recorded and queued, its ack is retried, a restarted doorman refuses an
// ack file that is not a regular file, and once it can write the ack it
// finds the record and the row and acks the line, never writing it again.
func TestAckAndAttemptUnwritableAcrossRestarts(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	cfg := w.config()
	cfg.DoormanPoll = 50 * time.Millisecond
	dm, lg, stop := w.running(doorman.Options{Host: w.host(nil), Config: cfg})
	defer func() {
		stop()
		if t.Failed() {
			t.Log(lg.String())
		}
	}()
	waitState(t, dm, inboxv1.StateFollowing)
	for _, p := range []string{files.Ack, files.Attempt} {
		if err := os.MkdirAll(p, 0o700); err != nil { // cannot be written
			t.Fatal(err)
		}
	}
	writes := func() int { return len(userFrames(w.door.Frames())) }
	waitPrefix := func(prefix string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !strings.HasPrefix(dm.Status().LastError, prefix) {
			if time.Now().After(deadline) {
				t.Fatalf("last_error %q, want it to start with %s (%d door writes)", dm.Status().LastError, prefix, writes())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	w.appendLine(sid, "[a 📡] once only")
	waitPrefix(string(inboxv1.ReasonAttemptUnwritable))
	if n := writes(); n != 0 {
		t.Fatalf("%d door writes while the attempt could not be recorded, want none", n)
	}
	if err := os.Remove(files.Attempt); err != nil {
		t.Fatal(err)
	}
	waitPrefix(string(inboxv1.ReasonAckUnwritable))
	stop()
	if n := writes(); n != 1 {
		t.Fatalf("%d door writes, want 1", n)
	}
	if err, st, log := w.runOnce(doorman.ModeMCP, "", nil); err == nil {
		t.Fatalf("once with an ack file that is a directory: %v (%s), want a refusal\n%s", err, st.State, log)
	}
	if err := os.Remove(files.Ack); err != nil {
		t.Fatal(err)
	}
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if acks := readAcks(t, files.Ack); len(acks) != 1 || acks[0].Confirm != inboxv1.ConfirmTranscript {
		t.Errorf("acks %+v, want one confirmed ack", acks)
	}
	if n := writes(); n != 1 {
		t.Errorf("the line went to the door %d times, want once", n)
	}
}

// Defect 5 again, through the monitor-era adoption: with no .offset, an
// ack file of one 64 MiB line without a newline (and an inbox line as
// long) is read in bounded memory at start, and the lines are delivered.
func TestStartBoundedWithoutOffset(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	const size = 64 << 20
	big := bytes.Repeat([]byte("x"), size)
	if err := os.WriteFile(files.Ack, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files.Inbox, append(big, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	w.appendLine(sid, "[a 📡] after the long ones")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err, _, log := w.runOnce(doorman.ModeMCP, "", nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/4 {
		t.Errorf("the start allocated %d MiB for a %d MiB ack line; want it bounded", alloc>>20, size>>20)
	}
	if diff := cmp.Diff([]string{"[a 📡] after the long ones"}, contents(w.waitQueued(1))); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}

// A start keeps of the ack file only what its resume point needs: the
// last ack before a verified offset, the acks at or after it, and the
// deliveries the receiver still remembers, not every ack of the file.
func TestStartKeepsOnlyWhatTheResumeNeeds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.inbox.ack")
	now := time.Now()
	const n, ino = 5000, 7
	for i := range n {
		o := int64(i * 10)
		ts := now.Add(-time.Hour)
		if i >= n-3 {
			ts = now.Add(-time.Second)
		}
		a := inboxv1.Ack{TS: jsonrow.FormatTime(ts), SHA256: fmt.Sprintf("%064x", i), Class: inboxv1.AckDeliveredSteer, LineOffset: &o, Inode: ino, From: "a"}
		if err := inbox.AppendAck(p, a); err != nil {
			t.Fatal(err)
		}
	}
	off := int64((n - 2) * 10)
	last, after, recent := doorman.StartAcks(p, ino, off, doorman.Guard{Capacity: 30, RefillPerSecond: 0.5, DedupWindow: 30 * time.Second}, now)
	if last != off-10 {
		t.Errorf("last ack before the offset at %d, want %d", last, off-10)
	}
	want := map[int64]string{off: fmt.Sprintf("%064x", n-2), off + 10: fmt.Sprintf("%064x", n-1)}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Errorf("acks kept at or after the offset (-want +got):\n%s", diff)
	}
	if recent != 3 {
		t.Errorf("%d recent deliveries kept, want 3", recent)
	}
}

// failOnce is a Door whose first delivery fails with err (before writing
// anything, as a dial error does, or part way, as a write error may).
type failOnce struct {
	err    error
	failed bool
	doorman.Door
}

func (f *failOnce) Deliver(ctx context.Context, socket string, expect int, m door.Message, settle bool) (int, error) {
	if !f.failed {
		f.failed = true
		return 0, f.err
	}
	return f.Door.Deliver(ctx, socket, expect, m, settle)
}

// A door write that failed: one that reached no receiver (the dial
// failed) is tried again at once; one that may have gone out in part is
// of unknown fate and waits out the bound and the receiver's windows.
func TestFailedWriteRetry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		writes int // on the run after the failure
	}{
		{"dial", &door.OpError{Op: "dial", Socket: "s", Err: syscall.ECONNREFUSED}, 1},
		{"write", &door.OpError{Op: "write", Socket: "s", Err: syscall.EPIPE}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			sid := w.owned("busy")
			stub := &stubDoor{peer: w.me, transcript: w.transcript}
			d := &failOnce{err: tc.err, Door: stub}
			w.appendLine(sid, "[a 📡] after a failed write")
			if err, _, log := w.runOnce(doorman.ModeMCP, "", d); err == nil {
				t.Fatalf("first run: nil, want the failed write's error\n%s", log)
			}
			err, _, log := w.runOnce(doorman.ModeMCP, "", d)
			if n := len(stub.delivered); n != tc.writes {
				t.Fatalf("%d writes on the next run, want %d (run: %v)\n%s", n, tc.writes, err, log)
			}
			if tc.writes == 0 && !errors.Is(err, doorman.ErrNotQueued) {
				t.Errorf("next run = %v, want ErrNotQueued (the line waits)", err)
			}
			if tc.writes == 1 && err != nil {
				t.Errorf("next run = %v, want the line delivered", err)
			}
		})
	}
}
