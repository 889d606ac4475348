package doorman_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// quickGuard is a receiver's guard whose windows pass at once, so that the
// same line may go through the door again within a test.
var quickGuard = doorman.Guard{Capacity: 30, RefillPerSecond: 50, DedupWindow: time.Millisecond}

// once runs a doorman with --once semantics pacing for quickGuard and
// returns its log and error.
func (w *world) once(ctx context.Context, d doorman.Door) (string, error) {
	var log bytes.Buffer
	dm := doorman.New(doorman.WithGuard(doorman.Options{Host: w.host(d), Config: w.config(), Mode: doorman.ModeMCP, Once: true, Log: &log, Version: "test"}, quickGuard))
	err := dm.Run(ctx)
	return log.String(), err
}

// deliveredTwice checks that line was delivered twice, each delivery with
// its own door write, its own enqueue row and its own msg_id in its ack.
func (w *world) deliveredTwice(t *testing.T, files inboxv1.Files, line string, log string) {
	t.Helper()
	frames := userFrames(w.door.Frames())
	if len(frames) != 2 {
		t.Fatalf("%d door writes, want 2 (the line sent again after the inbox was emptied is a new line)\n%s", len(frames), log)
	}
	if rows := enqueueTimes(t, w.transcript)[line]; len(rows) != 2 {
		t.Errorf("enqueue rows %q, want 2", rows)
	}
	acks := readAcks(t, files.Ack)
	if len(acks) != 2 {
		t.Fatalf("acks %+v, want 2", acks)
	}
	for i, a := range acks {
		if a.Class != inboxv1.AckDeliveredSteer || a.Confirm != inboxv1.ConfirmTranscript || a.MsgID != frames[i].MsgID {
			t.Errorf("ack %d: %s confirm %q msg_id %s, want delivered-steer on its row with its own write's msg_id %s", i, a.Class, a.Confirm, a.MsgID, frames[i].MsgID)
		}
	}
	if acks[0].MsgID == acks[1].MsgID {
		t.Errorf("both acks carry msg_id %s: the second was acked on the first write", acks[0].MsgID)
	}
}

// Issue 18 point 1, a doorman running: the same line sent again after the
// inbox was emptied is a line of the file's new generation. It is written
// to the door again and acked on its own enqueue row with its own msg_id,
// never on the first write's record and row.
func TestSameLineAfterTruncationWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait bool // wait for the doorman to see the empty file before the line comes again
	}{{"seen-empty", true}, {"refilled-at-once", false}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			sid := w.owned("busy")
			files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
			cfg := w.config()
			cfg.DoormanPoll = 20 * time.Millisecond
			dm, lg, stop := w.running(doorman.WithGuard(doorman.Options{Host: w.host(nil), Config: cfg}, quickGuard))
			waitState(t, dm, inboxv1.StateFollowing)
			line := "[cron 📡] hourly check"
			w.appendLine(sid, line)
			w.waitAcks(sid, 1)
			waitStatus(t, dm, func(s doorman.Status) bool { return s.Offset > 0 })
			if tc.wait {
				if err := os.Truncate(files.Inbox, 0); err != nil {
					t.Fatal(err)
				}
				waitStatus(t, dm, func(s doorman.Status) bool { return s.Offset == 0 })
				w.appendLine(sid, line)
			} else {
				// Emptied and refilled before the doorman looks: its
				// size is the same, its time another.
				w.rewriteLater(files.Inbox, files.Offset, line+"\n")
			}
			w.waitAcks(sid, 2)
			stop()
			w.deliveredTwice(t, files, line, lg.String())
		})
	}
}

// Issue 18 point 1, no doorman running: the inbox is emptied and the same
// line sent again while no doorman runs. The next doorman finds the file
// modified after its offset was written without growing past it (a
// rewrite: an append grows the file) and delivers the line again.
func TestSameLineAfterTruncationWithNoDoorman(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	line := "[cron 📡] hourly check"
	w.appendLine(sid, line)
	if log, err := w.once(context.Background(), nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	w.rewriteLater(files.Inbox, files.Offset, line+"\n")
	log, err := w.once(context.Background(), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	w.deliveredTwice(t, files, line, log)
}

// A new generation's lines do not take the old acks for theirs: after the
// inbox was emptied (seen by a running doorman) and a line of it
// delivered, a restarted doorman delivers the next line, though an ack of
// the earlier contents has its offset and sha256.
func TestOldGenerationAcksDoNotCount(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	cfg := w.config()
	cfg.DoormanPoll = 20 * time.Millisecond
	dm, lg, stop := w.running(doorman.WithGuard(doorman.Options{Host: w.host(nil), Config: cfg}, quickGuard))
	waitState(t, dm, inboxv1.StateFollowing)
	a, b := "[cron 📡] hourly check", "[cron 📡] daily check"
	w.appendLine(sid, a)
	w.appendLine(sid, b)
	w.waitAcks(sid, 2)
	waitStatus(t, dm, func(s doorman.Status) bool { return s.Offset == int64(len(a)+len(b)+2) })
	if err := os.Truncate(files.Inbox, 0); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, dm, func(s doorman.Status) bool { return s.Offset == 0 })
	w.appendLine(sid, a)
	w.waitAcks(sid, 3)
	waitStatus(t, dm, func(s doorman.Status) bool { return s.Offset == int64(len(a)+1) })
	stop()
	w.appendLine(sid, b) // where the old b was, with its sha256
	if log, err := w.once(context.Background(), nil); err != nil {
		t.Fatalf("%v\n%s\n%s", err, lg.String(), log)
	}
	if got := contents(userFrames(w.door.Frames())); len(got) != 4 || got[3] != b {
		t.Errorf("door writes %q, want a, b, a, b", got)
	}
	if acks := readAcks(t, files.Ack); len(acks) != 4 || acks[3].Class != inboxv1.AckDeliveredSteer {
		t.Errorf("acks %+v, want 4, the last one delivered", acks)
	}
}

// A doorman stopped between recording the new generation and moving the
// offset: the next one does not take the old offset for the new file's.
func TestGenerationRecordedOffsetNotMoved(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	line := "[cron 📡] hourly check"
	w.appendLine(sid, line)
	if log, err := w.once(context.Background(), nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	// What the stopped doorman left: the generation recorded, the file
	// emptied and refilled (to the same size, at the offset file's time,
	// so that only the record tells), the offset not moved.
	pi, err := os.Stat(files.Offset)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files.Inbox, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(files.Inbox, pi.ModTime(), pi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := inbox.WriteAttempt(files.Attempt, inbox.GenerationRecord(inodeOf(t, files.Inbox), "g2")); err != nil {
		t.Fatal(err)
	}
	log, err := w.once(context.Background(), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	w.deliveredTwice(t, files, line, log)
}

// Issue 18 point 2: a doorman killed after recording its write and before
// the frames go out, three times over. The record of a write of unknown
// fate is waited out each time (it may have gone out), but none of them
// counts toward the limit: the line is then written and delivered, not
// refused receiver-did-not-queue.
func TestKilledBeforeTheWriteDoesNotCount(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	var mu sync.Mutex
	now := time.Now().Add(-10 * time.Minute) // rows are stamped by the real clock: never before it
	w.clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func() { mu.Lock(); now = now.Add(time.Minute); mu.Unlock() }
	line := "[a 📡] killed before its write, three times"
	w.appendLine(sid, line)
	for k := range doorman.MaxWrites {
		d := &killedInWrite{entered: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-d.entered; cancel() }() // the kill
		if log, err := w.once(ctx, d); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("kill %d: %v\n%s", k+1, err, log)
		}
		cancel()
		att, err := inbox.ReadAttempt(files.Attempt)
		if err != nil || att.Unconfirmed || att.Writes != 0 {
			t.Errorf("kill %d: record %+v (%v), want one of unknown fate with no write counted", k+1, att, err)
		}
		advance() // past the bound and the receiver's windows
	}
	log, err := w.once(context.Background(), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	acks := readAcks(t, files.Ack)
	if len(acks) != 1 || acks[0].Class != inboxv1.AckDeliveredSteer {
		t.Fatalf("acks %+v, want the line delivered (it never reached the door before)\n%s", acks, log)
	}
	if n := len(userFrames(w.door.Frames())); n != 1 {
		t.Errorf("%d door writes, want 1", n)
	}
}

// killedInWrite is a door whose Deliver blocks until its context ends,
// as a doorman killed on its way to the door: nothing is written.
type killedInWrite struct {
	once    sync.Once
	entered chan struct{}
}

func (k *killedInWrite) Peer(ctx context.Context, socket string) (int, error) {
	return os.Getpid(), nil
}

func (k *killedInWrite) Deliver(ctx context.Context, socket string, expect int, m door.Message, _ bool) (int, error) {
	k.once.Do(func() { close(k.entered) })
	<-ctx.Done()
	return 0, ctx.Err()
}

// rewriteLater replaces the contents of the file at path with body in
// place (truncate, then write) once the file system's clock has passed the
// modification time of the file at after: the rewrite is later than it,
// as when a user empties an inbox and the same line comes again.
func (w *world) rewriteLater(path, after, body string) {
	w.t.Helper()
	w.clockPast(after)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(body); err != nil {
		w.t.Fatal(err)
	}
}

// clockPast waits until a file written now gets a modification time after
// that of the file at after (the file system's clock moves in ticks).
func (w *world) clockPast(after string) {
	w.t.Helper()
	ai, err := os.Stat(after)
	if err != nil {
		w.t.Fatal(err)
	}
	probe := filepath.Join(w.t.TempDir(), "clock")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			w.t.Fatal(err)
		}
		pi, err := os.Stat(probe)
		if err != nil {
			w.t.Fatal(err)
		}
		if pi.ModTime().After(ai.ModTime()) {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatal("the file system's clock did not move in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// waitStatus waits until the doorman's status satisfies ok.
func waitStatus(t *testing.T, dm *doorman.Doorman, ok func(doorman.Status) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok(dm.Status()) {
		if time.Now().After(deadline) {
			t.Fatalf("status %+v: not the one waited for", dm.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The look for a rewrite takes no restart for one: a doorman restarted
// with nothing new writes nothing, and one restarted after an append
// writes the new line only, however much later the fs clock is.
func TestRestartIsNoNewGeneration(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	w.appendLine(sid, "[a 📡] first")
	if log, err := w.once(context.Background(), nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	w.clockPast(files.Offset)
	if log, err := w.once(context.Background(), nil); err != nil || len(userFrames(w.door.Frames())) != 1 {
		t.Fatalf("restart with nothing new: %v, %d door writes, want 1\n%s", err, len(userFrames(w.door.Frames())), log)
	}
	w.clockPast(files.Offset)
	w.appendLine(sid, "[a 📡] second")
	if log, err := w.once(context.Background(), nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if got := contents(userFrames(w.door.Frames())); len(got) != 2 || got[1] != "[a 📡] second" {
		t.Errorf("door writes %q, want first, second", got)
	}
	for _, a := range readAcks(t, files.Ack) {
		if a.Gen != "" {
			t.Errorf("ack %+v of a new generation; the file was only appended to", a)
		}
	}
}

// A touch of the inbox (or an append that failed for want of space, which
// sets the file's time and writes nothing) is not a rewrite: a running
// doorman that finds the file the same size with a later time, and no
// write among its file events, replays nothing. The next line is
// delivered once, and the line before it is not delivered again.
func TestTouchIsNotARewrite(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	looked := make(chan struct{}, 64)
	cfg := w.config()
	dm, lg, stop := w.running(doorman.WithCaughtUp(doorman.WithGuard(doorman.Options{Host: w.host(nil), Config: cfg}, quickGuard), func() {
		select {
		case looked <- struct{}{}:
		default:
		}
	}))
	waitState(t, dm, inboxv1.StateFollowing)
	probe := fsx.NewFileWaker(time.Hour, files.Inbox)
	polling := probe.Polling()
	probe.Close()
	if polling {
		t.Skip("no file events here: the doorman polls, and a touch reads as a rewrite")
	}
	w.appendLine(sid, "[cron 📡] first")
	w.waitAcks(sid, 1)
	waitStatus(t, dm, func(s doorman.Status) bool { return s.Offset > 0 })
	for len(looked) > 0 {
		<-looked
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(files.Inbox, later, later); err != nil {
		t.Fatal(err)
	}
	select { // the touch's event wakes the follower: its look sees the new time
	case <-looked:
	case <-time.After(20 * time.Second):
		t.Fatal("the doorman did not look at the touched inbox")
	}
	second := w.appendLine(sid, "[cron 📡] second")
	deadline := time.Now().Add(20 * time.Second)
	for !slices.ContainsFunc(readAcks(t, files.Ack), func(a inboxv1.Ack) bool { return a.LineOffset != nil && *a.LineOffset == second }) {
		if time.Now().After(deadline) {
			t.Fatalf("no ack of the second line\n%s", lg.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if frames := userFrames(w.door.Frames()); len(frames) != 2 {
		t.Errorf("%d door writes, want 2 (the touch replayed the inbox)\n%s", len(frames), lg.String())
	}
	if acks := readAcks(t, files.Ack); len(acks) != 2 {
		t.Errorf("%d acks, want 2", len(acks))
	}
}

// A line a writer left unfinished (an append that stopped short: a full
// disk, a file size limit) is never delivered: the next send ends it with
// inbox.TornMark, the doorman refuses it (torn) and delivers the line
// after it, once.
func TestTornLineIsNotDelivered(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	torn := "[cron 📡] remove the build directory, but only with --dry"
	if err := os.WriteFile(files.Inbox, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	off, err := inbox.AppendInbox(files.Inbox, []byte("[cron 📡] second"))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(torn) + len(inbox.TornMark) + 1); off != want {
		t.Errorf("the line after the torn one starts at %d, want %d", off, want)
	}
	log, err := w.once(context.Background(), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	frames := userFrames(w.door.Frames())
	if len(frames) != 1 || !bytes.Contains(frames[0].Raw, []byte("second")) {
		t.Errorf("door writes %v, want the second line alone\n%s", frames, log)
	}
	acks := readAcks(t, files.Ack)
	if len(acks) != 2 || acks[0].Class != inboxv1.AckRefused || acks[0].Reason != string(inboxv1.ReasonTorn) || acks[1].Class != inboxv1.AckDeliveredSteer {
		t.Errorf("acks %+v, want the torn line refused (torn), then the second delivered", acks)
	}
}

// An inbox made writable by others while a doorman follows it is untrusted
// from its next look on, as at the start: the line that came after is not
// delivered, and the heartbeat says untrusted.
func TestInboxUntrustedWhileFollowed(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	dm, lg, stop := w.running(doorman.WithGuard(doorman.Options{Host: w.host(nil), Config: w.config()}, quickGuard))
	waitState(t, dm, inboxv1.StateFollowing)
	w.appendLine(sid, "[cron 📡] first")
	w.waitAcks(sid, 1)
	if err := os.Chmod(files.Inbox, 0o666); err != nil {
		t.Fatal(err)
	}
	w.appendLine(sid, "[mallory 📡] written by another user")
	deadline := time.Now().Add(20 * time.Second)
	for dm.Status().State != inboxv1.StateUntrusted && len(readAcks(t, files.Ack)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("state %s, no second ack\n%s", dm.Status().State, lg.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	st := dm.Status()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if st.State != inboxv1.StateUntrusted {
		t.Errorf("state %s, want untrusted", st.State)
	}
	if frames := userFrames(w.door.Frames()); len(frames) != 1 {
		t.Errorf("%d door writes, want 1: the line after the chmod was delivered\n%s", len(frames), lg.String())
	}
}
