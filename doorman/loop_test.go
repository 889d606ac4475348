package doorman_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
)

// owned sets w up as the direct child of a live session listening on the
// fake door and returns the session id.
func (w *world) owned(status string) string {
	w.tree.add(w.me, 1, "claude", "/usr/bin/claude", "777")
	w.self, w.ppid = selfPID, w.me
	w.tree.add(selfPID, w.me, "oo-claude", "/usr/local/bin/oo-claude", "999")
	w.row = w.session(w.me, status)
	return w.row.SessionID
}

// running starts a doorman in the background; stop cancels it and waits.
func (w *world) running(o doorman.Options) (dm *doorman.Doorman, log *bytes.Buffer, stop func() error) {
	w.t.Helper()
	log = &bytes.Buffer{}
	if o.Host == nil {
		o.Host = w.host(nil)
		o.Config = w.config()
	}
	if o.Mode == "" {
		o.Mode = doorman.ModeMCP
	}
	o.Log = &lockedBuffer{b: log}
	o.Version = "test"
	dm = doorman.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dm.Run(ctx) }()
	stopped := false
	var err error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			err = <-done
		}
		return err
	}
	w.t.Cleanup(func() { stop() })
	return dm, log, stop
}

func (w *world) waitQueued(n int) []fakedoor.Frame {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var q []fakedoor.Frame
		all := w.door.Frames() // one snapshot: a frame landing between two reads must not be waited for twice
		for _, f := range all {
			if f.Type == "user" {
				q = append(q, f)
			}
		}
		if len(q) >= n {
			// With no settle the fake may read two connections out of
			// order; accept order is the delivery order.
			sort.SliceStable(q, func(i, j int) bool { return q[i].Conn < q[j].Conn })
			return q
		}
		if _, err := w.door.WaitFrames(ctx, len(all)+1); err != nil {
			w.t.Fatalf("waiting for %d user frames: have %d: %v", n, len(q), err)
		}
	}
}

func (w *world) waitAcks(sid string, n int) []inboxv1.Ack {
	w.t.Helper()
	path := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid).Ack
	deadline := time.Now().Add(20 * time.Second)
	for {
		a := readAcks(w.t, path)
		if len(a) >= n {
			return a
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("waiting for %d acks: have %d", n, len(a))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func contents(fs []fakedoor.Frame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Content)
	}
	return out
}

// TestPriorityTravels: a structured line's priority goes into the door
// frame and the ack; a plain line and an unknown priority are next.
func TestPriorityTravels(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	_, _, stop := w.running(doorman.Options{})
	lines := []string{`{"v":1,"from":"omi","line":"after your turn","priority":"later"}`, `{"v":1,"from":"luna","line":"now please","priority":"now"}`, "[mama 📡] plain", `{"line":"odd","priority":"soon"}`}
	for _, l := range lines {
		w.appendLine(sid, l)
	}
	q := w.waitQueued(len(lines))
	acks := w.waitAcks(sid, len(lines))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	want := []string{"later", "now", "next", "next"}
	for i := range lines {
		if q[i].Priority != want[i] || acks[i].Priority != want[i] {
			t.Errorf("line %q: frame priority %q, ack priority %q; want %q", lines[i], q[i].Priority, acks[i].Priority, want[i])
		}
	}
}

func TestRoundTripAndAckFields(t *testing.T) {
	for _, status := range []string{"busy", "idle"} {
		t.Run(status, func(t *testing.T) {
			w := newWorld(t)
			sid := w.owned(status)
			w.fs.WriteKey(w.row, "0123456789abcdef0123456789abcdef")
			_, _, stop := w.running(doorman.Options{})
			off := w.appendLine(sid, "[chatgpt 📡] hello")
			q := w.waitQueued(1)
			acks := w.waitAcks(sid, 1)
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			a := acks[0]
			class, peer := inboxv1.AckDeliveredSteer, "busy"
			if status == "idle" {
				class, peer = inboxv1.AckDeliveredStart, "idle"
			}
			fi, _ := os.Stat(inboxv1.FilesFor(w.fs.Paths.InboxDir, sid).Inbox)
			ino := fi.Sys().(*syscall.Stat_t).Ino
			want := inboxv1.Ack{
				TS: a.TS, SHA256: inbox.SHA256([]byte("[chatgpt 📡] hello")), SessionID: sid, PeerStatus: peer, Class: class,
				MsgID: q[0].MsgID, LineOffset: &off, Inode: ino, From: "chatgpt", PeerStatusRaw: status,
				DoormanPID: selfPID, V: 1, Confirm: inboxv1.ConfirmTranscript, Priority: inboxv1.PriorityNext,
			}
			if rows := enqueueTimes(t, w.transcript)["[chatgpt 📡] hello"]; len(rows) == 1 {
				want.QueuedAt = &rows[0]
			} else {
				t.Errorf("enqueue rows of the line: %q, want one", rows)
			}
			if diff := cmp.Diff(want, a); diff != "" {
				t.Errorf("ack (-want +got):\n%s", diff)
			}
			if q[0].MsgID == "" || q[0].From != "chatgpt" || q[0].SessionID != sid || q[0].PeerPID != w.me {
				t.Errorf("frame %+v", q[0])
			}
			frames := w.door.Frames()
			if frames[0].Type != "auth" || frames[0].Token.Reveal() != "0123456789abcdef0123456789abcdef" {
				t.Errorf("first frame %q is not the auth frame with the key file's token", frames[0].Type)
			}
			hb, err := inbox.ReadHeartbeat(inboxv1.FilesFor(w.fs.Paths.InboxDir, sid).Heartbeat)
			if err != nil {
				t.Fatal(err)
			}
			if hb.State != inboxv1.StateStopped || hb.Delivered != 1 || hb.Confirmed != 1 || hb.Unconfirmed != 0 || hb.Offset != off+int64(len("[chatgpt 📡] hello\n")) || hb.StoppedAt == "" || hb.Mode != "mcp" {
				t.Errorf("stopped heartbeat %+v", hb)
			}
			if strings.Contains(readFile(t, inboxv1.FilesFor(w.fs.Paths.InboxDir, sid).Heartbeat), "0123456789abcdef") {
				t.Error("the heartbeat holds the token")
			}
		})
	}
}

func TestHostileLinesAndFileChanges(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	big := strings.Repeat("x", 20<<20)
	long := "[a 📡] " + strings.Repeat("y", inboxv1.MaxLineBytes+1-len("[a 📡] "))
	// Lines written before the doorman starts: the 20 MiB line is read in
	// chunks, the rest are refused by the line rules.
	w.appendLine(sid, "[a 📡] one")
	w.appendLine(sid, "[a 📡] nul\x00here")
	w.appendLine(sid, "[a 📡] bad \xff utf8")
	w.appendLine(sid, long)
	w.appendLine(sid, big)
	w.appendLine(sid, "[a 📡] two")
	_, _, stop := w.running(doorman.Options{})
	w.waitQueued(2)

	// An unterminated long line written in two steps, then its end.
	f, _ := os.OpenFile(files.Inbox, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(strings.Repeat("z", 3<<20))
	time.Sleep(50 * time.Millisecond)
	f.WriteString(strings.Repeat("z", 3<<20) + "\n[a 📡] three\n")
	f.Close()
	w.waitQueued(3)

	// Truncation: from 0.
	if err := os.Truncate(files.Inbox, 0); err != nil {
		t.Fatal(err)
	}
	w.appendLine(sid, "[a 📡] four")
	w.waitQueued(4)

	// Replacement: the new file is followed from 0.
	tmp := filepath.Join(w.fs.Paths.InboxDir, "new")
	os.WriteFile(tmp, []byte("[a 📡] five\n[a 📡] six\n"), 0o600)
	if err := os.Rename(tmp, files.Inbox); err != nil {
		t.Fatal(err)
	}
	w.waitQueued(6)
	w.appendLine(sid, "[a 📡] seven")
	q := w.waitQueued(7)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	want := []string{"one", "two", "three", "four", "five", "six", "seven"}
	for i := range want {
		want[i] = "[a 📡] " + want[i]
	}
	if diff := cmp.Diff(want, contents(q)); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	reasons := map[string]int{}
	for _, a := range readAcks(t, files.Ack) {
		if a.Class == inboxv1.AckRefused {
			reasons[a.Reason]++
		}
	}
	wantReasons := map[string]int{string(inboxv1.ReasonNUL): 1, string(inboxv1.ReasonInvalidUTF8): 1, string(inboxv1.ReasonTooLong): 3}
	if diff := cmp.Diff(wantReasons, reasons); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
}

func TestRestartSkipsAckedLines(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	for _, l := range []string{"[a 📡] 1", "[b 📡] 2", "[c 📡] bad\x00", "[d 📡] 3"} {
		w.appendLine(sid, l)
	}
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	// A crash between the ack and the offset: the offset goes back.
	if err := os.WriteFile(files.Offset, []byte("0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.appendLine(sid, "[e 📡] 4")
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if diff := cmp.Diff([]string{"[a 📡] 1", "[b 📡] 2", "[d 📡] 3", "[e 📡] 4"}, contents(w.waitQueued(4))); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	if n := len(readAcks(t, files.Ack)); n != 5 {
		t.Errorf("%d acks, want 5 (4 delivered, 1 refused once)", n)
	}
}

func TestMonitorEraAdoption(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	w.appendLine(sid, "[a 📡] read by the monitor")
	w.appendLine(sid, "[a 📡] "+strings.Repeat("long ", 30))
	w.appendLine(sid, "[a 📡] new")
	ack := "2026-10-30T20:00:00Z read: [a 📡] read by the monitor\n" +
		"2026-10-30T20:00:01Z read: " + string([]rune("[a 📡] " + strings.Repeat("long ", 30))[:80]) + "\n"
	os.WriteFile(files.Ack, []byte(ack), 0o600)
	if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if diff := cmp.Diff([]string{"[a 📡] new"}, contents(w.waitQueued(1))); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}

func TestTwoDoormenOneDelivers(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	first, _, stopFirst := w.running(doorman.Options{})
	waitState(t, first, inboxv1.StateFollowing)
	second, _, stopSecond := w.running(doorman.Options{})
	waitState(t, second, inboxv1.StateStandby)
	for i := range 5 {
		w.appendLine(sid, "[a 📡] before "+string(rune('0'+i)))
	}
	w.waitQueued(5)
	if err := stopFirst(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		w.appendLine(sid, "[a 📡] after "+string(rune('0'+i)))
	}
	q := w.waitQueued(10)
	stopSecond()
	if first.Status().Delivered != 5 || second.Status().Delivered != 5 {
		t.Errorf("delivered first %d second %d, want 5 and 5", first.Status().Delivered, second.Status().Delivered)
	}
	if len(q) != 10 {
		t.Errorf("%d frames, want 10", len(q))
	}
}

func TestPacing(t *testing.T) {
	w := newWorld(t)
	w.door.Close()
	w.door = w.newDoor(fakedoor.Options{Guard: &fakedoor.Guard{DedupWindow: 300 * time.Millisecond}})
	sid := w.owned("busy")
	_, _, stop := w.running(doorman.WithGuard(doorman.Options{}, doorman.Guard{DedupWindow: 300 * time.Millisecond}))
	w.appendLine(sid, "[a 📡] same")
	w.appendLine(sid, "[a 📡] same")
	q := w.waitQueued(2)
	acks := w.waitAcks(sid, 2)
	stop()
	for _, f := range q {
		if f.Disposition != fakedoor.Queued {
			t.Errorf("frame %q: %s, want queued", f.Content, f.Disposition)
		}
	}
	if acks[0].PacedMS != 0 || acks[1].PacedMS < 200 {
		t.Errorf("paced_ms %d, %d; want 0 and about 300", acks[0].PacedMS, acks[1].PacedMS)
	}
}

func TestSilenced(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	w.appendLine(sid, "[a 📡] x")
	var log bytes.Buffer
	cfg := w.config()
	cfg.DoormanEnabled = false
	dm := doorman.New(doorman.Options{Host: w.host(nil), Config: cfg, Mode: doorman.ModeMCP, Once: true, Log: &log})
	if err := dm.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if dm.Status().State != inboxv1.StateSilenced || len(w.door.Frames()) != 0 {
		t.Errorf("state %s, %d frames", dm.Status().State, len(w.door.Frames()))
	}
	if diff := cmp.Diff([]string{sid + ".inbox"}, w.inboxEntries()); diff != "" {
		t.Errorf("inbox dir (-want +got):\n%s", diff)
	}
}

func waitState(t *testing.T, dm *doorman.Doorman, s inboxv1.State) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for dm.Status().State != s {
		if time.Now().After(deadline) {
			t.Fatalf("state %s, want %s", dm.Status().State, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readFile(t testing.TB, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestAttemptRecordReadOnce: a following doorman is the attempt file's
// only writer (it holds the inbox lock), so it reads the record once and
// then knows it, instead of reading it again before every line. A record
// planted between two lines, naming the second line's write as fresh and
// of unknown fate, is not read: the second line goes out at once. (Read
// before each line, the planted record held the line back as a write
// whose fate is unknown.)
func TestAttemptRecordReadOnce(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	_, log, _ := w.running(doorman.Options{})
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
	w.appendLine(sid, "[a 📡] one")
	first := w.waitAcks(sid, 1)[0]
	second := "[b 📡] two"
	fi, err := os.Stat(files.Inbox)
	if err != nil {
		t.Fatal(err)
	}
	plant := inbox.Attempt{LineOffset: fi.Size(), SHA256: inbox.SHA256([]byte(second)), Inode: first.Inode, Gen: first.Gen,
		MsgID: uuid.NewString(), At: jsonrow.FormatTime(time.Now())}
	if err := inbox.WriteAttempt(files.Attempt, plant); err != nil {
		t.Fatal(err)
	}
	w.appendLine(sid, second)
	w.waitAcks(sid, 2)
	if strings.Contains(log.String(), "fate of the last door write") {
		t.Errorf("the second line was held back by a record read again:\n%s", log)
	}
}
