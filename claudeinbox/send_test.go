package claudeinbox_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
)

// sendKeys are v0.1's send-row keys, verbatim from its "Receipts" section,
// then oo-claude's additions (seen, seen_s, transcript, transcript_offset: send --seen or --reply; reply, reply_s: send --reply; priority: send --priority; confirm, queued_at: from the ack; wait_end, interrupted: how a wait ended; station: Sender.StationName).
var sendKeys = strings.Split("ts, ts_ms, kind, class, delivered, target, session_id, name, pid, running, status, from, line, sha256, bytes, inbox, line_offset, doorman, ack, peer_status, msg_id, waited_s, wait_s, min_interval_s, reason, note, hint, client_version, seen, seen_s, transcript, transcript_offset, reply, reply_s, priority, confirm, queued_at, wait_end, interrupted, station", ", ")

// world is one fake station with a sender pointed at it.
type world struct {
	fs      *fakestation.Station
	sender  *claudeinbox.Sender
	doormen map[string]*fakedoorman.Doorman // by session, where a test keeps them
}

func newWorld(t testing.TB) *world {
	t.Helper()
	fs := fakestation.New(t)
	return &world{fs: fs, sender: &claudeinbox.Sender{
		Station: fs.Station(),
		// The ack wait of a send the fake doorman acks: it ends at the
		// ack (milliseconds), so it is generous for a loaded machine.
		// Tests of a timeout set their own.
		Wait:          30 * time.Second,
		Receipts:      &receipt.Writer{Path: fs.Paths.ReceiptsFile()},
		ClientVersion: "test",
	}}
}

// offline returns the id of a session that ran on this station and does
// not run now: its transcript is there, no registry row names it.
func (w *world) offline(t testing.TB) string {
	t.Helper()
	sid := uuid.NewString()
	w.fs.AddTranscript(sid, "")
	return sid
}

// session registers a running session of this process named name.
func (w *world) session(t testing.TB, name string) station.Row {
	t.Helper()
	return w.fs.AddSession(fakestation.Session{Name: name})
}

func (w *world) doorman(t testing.TB, sid string, o fakedoorman.Options) *fakedoorman.Doorman {
	t.Helper()
	return fakedoorman.Start(t, w.fs.Paths.InboxDir, sid, o)
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

func receiptRows(t testing.TB, path string) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	sc := bufio.NewScanner(strings.NewReader(readFile(t, path)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("receipt line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func keys(m map[string]json.RawMessage) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// TestSendClasses runs every class v0.1 names through Send and checks the
// class, its exit code, the reason, whether the line reached the file and
// the receipt row.
func TestSendClasses(t *testing.T) {
	type setup func(t *testing.T, w *world) (req claudeinbox.Request)
	running := func(o *fakedoorman.Options) setup {
		return func(t *testing.T, w *world) claudeinbox.Request {
			r := w.session(t, "work-e9")
			if o != nil {
				w.doorman(t, r.SessionID, *o)
			}
			return line(r.SessionID, "hello")
		}
	}
	tests := []struct {
		name    string
		setup   setup
		class   claudeinbox.Class
		exit    int
		reason  inboxv1.Reason
		written bool
		hint    bool
	}{
		{"newline", func(t *testing.T, w *world) claudeinbox.Request {
			return line(w.session(t, "work-e9").SessionID, "two\nlines")
		}, claudeinbox.Refused, 1, inboxv1.ReasonNewline, false, false},
		{"16 KiB + 1", func(t *testing.T, w *world) claudeinbox.Request {
			r := line(w.session(t, "work-e9").SessionID, strings.Repeat("x", inboxv1.MaxLineBytes+1))
			r.NoTag = true
			return r
		}, claudeinbox.Refused, 1, inboxv1.ReasonTooLong, false, false},
		{"16 KiB with its tag", func(t *testing.T, w *world) claudeinbox.Request {
			return line(w.session(t, "work-e9").SessionID, strings.Repeat("x", inboxv1.MaxLineBytes-5))
		}, claudeinbox.Refused, 1, inboxv1.ReasonTooLong, false, false},
		{"empty", func(t *testing.T, w *world) claudeinbox.Request {
			r := line(w.session(t, "work-e9").SessionID, "")
			r.NoTag = true
			return r
		}, claudeinbox.Refused, 1, inboxv1.ReasonEmpty, false, false},
		{"invalid UTF-8", func(t *testing.T, w *world) claudeinbox.Request {
			return line(w.session(t, "work-e9").SessionID, "bad \xff byte")
		}, claudeinbox.Refused, 1, inboxv1.ReasonInvalidUTF8, false, false},
		{"bad from", func(t *testing.T, w *world) claudeinbox.Request {
			r := line(w.session(t, "work-e9").SessionID, "hi")
			r.From = "mama]"
			return r
		}, claudeinbox.Refused, 1, inboxv1.ReasonBadFrom, false, false},
		{"ambiguous fragment", func(t *testing.T, w *world) claudeinbox.Request {
			w.session(t, "proj-alpha-1")
			w.fs.AddSession(fakestation.Session{PID: livePID(t), Name: "proj-alpha-2"})
			return line("alpha", "hi")
		}, claudeinbox.Refused, 1, inboxv1.ReasonAmbiguousTarget, false, false},
		{"unknown name", func(t *testing.T, w *world) claudeinbox.Request {
			w.session(t, "work-e9")
			return line("nobody-here", "hi")
		}, claudeinbox.Refused, 1, inboxv1.ReasonUnknownTarget, false, false},
		{"bad target", func(t *testing.T, w *world) claudeinbox.Request {
			return line("../etc", "hi")
		}, claudeinbox.Refused, 1, inboxv1.ReasonBadTarget, false, false},
		{"offline full id", func(t *testing.T, w *world) claudeinbox.Request {
			return line(w.offline(t), "wake up")
		}, claudeinbox.QueuedOffline, 3, "", true, true},
		{"dead session's row", func(t *testing.T, w *world) claudeinbox.Request {
			r := w.fs.AddSession(fakestation.Session{Name: "gone", ProcStart: "1"}) // a recycled pid
			w.fs.AddTranscript(r.SessionID, "")
			return line(r.SessionID, "wake up")
		}, claudeinbox.QueuedOffline, 3, "", true, true},
		// A full id with one wrong character: no live session, no
		// transcript. It was queued-offline for good (resume refuses it,
		// gc keeps it); it is refused, nothing written.
		{"full id nobody has", func(t *testing.T, w *world) claudeinbox.Request {
			sid := w.offline(t)
			return line(typo(sid), "wake up")
		}, claudeinbox.Refused, 1, inboxv1.ReasonUnknownSession, false, true},
		{"dead row, no transcript", func(t *testing.T, w *world) claudeinbox.Request {
			r := w.fs.AddSession(fakestation.Session{Name: "gone", ProcStart: "1"})
			return line(r.SessionID, "wake up")
		}, claudeinbox.Refused, 1, inboxv1.ReasonUnknownSession, false, true},
		{"full id nobody has, ExpectStart", func(t *testing.T, w *world) claudeinbox.Request {
			r := line(uuid.NewString(), "wake up")
			r.ExpectStart = true
			return r
		}, claudeinbox.QueuedOffline, 3, "", true, true},
		// A session whose start is in progress: its registry row is
		// there, its transcript not yet. It is live, not unknown.
		{"started, no transcript yet", running(nil), claudeinbox.QueuedNoDoorman, 3, inboxv1.ReasonHeartbeatMissing, true, false},
		{"running, no heartbeat", running(nil), claudeinbox.QueuedNoDoorman, 3, inboxv1.ReasonHeartbeatMissing, true, false},
		{"stale heartbeat", running(&fakedoorman.Options{Stale: true}), claudeinbox.QueuedNoDoorman, 3, inboxv1.ReasonHeartbeatStale, true, false},
		{"heartbeat of another session", running(&fakedoorman.Options{HeartbeatSession: uuid.NewString()}), claudeinbox.QueuedNoDoorman, 3, inboxv1.ReasonOtherSession, true, false},
		{"stopped doorman", running(&fakedoorman.Options{State: inboxv1.StateStopped}), claudeinbox.QueuedNoDoorman, 3, inboxv1.ReasonDoormanState, true, false},
		{"doorman pid gone", running(&fakedoorman.Options{PID: fakedoorman.DeadPID()}), claudeinbox.QueuedNoDoorman, 3, inboxv1.ReasonDoormanGone, true, false},
		{"fresh heartbeat, no ack", running(&fakedoorman.Options{NoAck: true}), claudeinbox.Timeout, 5, "", true, false},
		{"delivered-steer", running(&fakedoorman.Options{}), claudeinbox.DeliveredSteer, 0, "", true, false},
		{"delivered-start", running(&fakedoorman.Options{PeerStatus: station.StatusIdle}), claudeinbox.DeliveredStart, 0, "", true, false},
		{"delivered after a delay", running(&fakedoorman.Options{AckDelay: 200 * time.Millisecond}), claudeinbox.DeliveredSteer, 0, "", true, false},
		{"v1 ack without offset", running(&fakedoorman.Options{NoOffset: true}), claudeinbox.DeliveredSteer, 0, "", true, false},
		{"doorman refuses", running(&fakedoorman.Options{Refuse: inboxv1.ReasonNUL}), claudeinbox.Refused, 1, inboxv1.ReasonNUL, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			if tt.class == claudeinbox.Timeout {
				w.sender.Wait = 300 * time.Millisecond
			}
			req := tt.setup(t, w)
			v, err := w.sender.Send(context.Background(), req)
			var re *claudeinbox.RefusedError
			switch {
			case tt.class == claudeinbox.Refused && (!errors.Is(err, claudeinbox.ErrRefused) || !errors.As(err, &re) || re.Reason != tt.reason):
				t.Fatalf("Send error %v, want a *RefusedError of reason %s", err, tt.reason)
			case tt.class != claudeinbox.Refused && err != nil:
				t.Fatalf("Send: %v", err)
			}
			if v.Class != tt.class || v.Reason != tt.reason {
				t.Fatalf("class %q reason %q, want %q %q (note: %s)", v.Class, v.Reason, tt.class, tt.reason, v.Note)
			}
			if got := v.Class.ExitCode(); got != tt.exit {
				t.Errorf("exit code %d, want %d", got, tt.exit)
			}
			wantHint := "oo-claude resume " + v.SessionID
			if v.Reason == inboxv1.ReasonUnknownSession {
				wantHint = "oo-claude sessions"
			}
			if (v.Hint != "") != tt.hint || (tt.hint && v.Hint != wantHint) {
				t.Errorf("hint %q", v.Hint)
			}
			if v.Class != claudeinbox.DeliveredSteer && v.Class != claudeinbox.DeliveredStart && v.Note == "" {
				t.Errorf("no note for %s", v.Class)
			}
			// The line is in the file exactly when the class says so, at
			// its offset.
			inbox := ""
			if v.SessionID != "" {
				inbox = readFile(t, w.fs.InboxPath(v.SessionID))
			}
			if v.Written != tt.written {
				t.Fatalf("written %v, want %v", v.Written, tt.written)
			}
			if tt.written {
				if want := v.Line + "\n"; !strings.HasPrefix(inbox[v.LineOffset:], want) {
					t.Errorf("inbox at %d = %q, want %q", v.LineOffset, inbox[v.LineOffset:], want)
				}
			} else if inbox != "" {
				t.Errorf("a refused line reached the inbox: %q", inbox)
			}
			if v.Class.Delivered() || (v.Class == claudeinbox.Refused && tt.written) {
				// A refused line went through no door: its ack has no
				// msg_id (the real doorman's; fakedoorman conforms).
				if claudeinbox.AckOf(v) == nil || (v.MsgID == "") == v.Class.Delivered() || claudeinbox.AckOf(v).SHA256 != v.SHA256 {
					t.Errorf("ack %+v does not belong to the line", claudeinbox.AckOf(v))
				}
			}
			// One receipt row with every key.
			rows := receiptRows(t, w.fs.Paths.ReceiptsFile())
			if len(rows) != 1 {
				t.Fatalf("%d receipt rows, want 1", len(rows))
			}
			if diff := cmp.Diff(sortedCopy(sendKeys), keys(rows[0])); diff != "" {
				t.Errorf("receipt keys (-want +got):\n%s", diff)
			}
			var got, want map[string]any
			b, _ := json.Marshal(rows[0])
			json.Unmarshal(b, &got)
			b, _ = json.Marshal(v.Row())
			json.Unmarshal(b, &want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("receipt row vs the verdict's (-want +got):\n%s", diff)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

// Two identical lines sent at once: the doorman acks both (same sha256)
// and each send must take the ack with its own line_offset.
func TestIdenticalLinesMatchTheirOwnAck(t *testing.T) {
	w := newWorld(t)
	r := w.session(t, "work-e9")
	w.doorman(t, r.SessionID, fakedoorman.Options{AckDelay: 150 * time.Millisecond})
	var wg sync.WaitGroup
	verdicts := make([]claudeinbox.Verdict, 2)
	errs := make([]error, 2)
	for i := range verdicts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			verdicts[i], errs[i] = w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: "the same line"})
		}()
	}
	wg.Wait()
	for i, v := range verdicts {
		if errs[i] != nil || v.Class != claudeinbox.DeliveredSteer {
			t.Fatalf("send %d: %v %v (%s)", i, v.Class, errs[i], v.Note)
		}
		if claudeinbox.AckOf(v).LineOffset == nil || *claudeinbox.AckOf(v).LineOffset != v.LineOffset {
			t.Errorf("send %d at offset %d took the ack of offset %v", i, v.LineOffset, claudeinbox.AckOf(v).LineOffset)
		}
	}
	if verdicts[0].SHA256 != verdicts[1].SHA256 {
		t.Fatal("the lines differ")
	}
	if verdicts[0].LineOffset == verdicts[1].LineOffset || verdicts[0].MsgID == verdicts[1].MsgID {
		t.Errorf("both sends took one ack: %+v / %+v", claudeinbox.AckOf(verdicts[0]), claudeinbox.AckOf(verdicts[1]))
	}
}

// The same with two sequential sends whose acks come late and in one go:
// the second send reads the ack file from before its own append.
func TestIdenticalLinesSequential(t *testing.T) {
	w := newWorld(t)
	r := w.session(t, "work-e9")
	w.doorman(t, r.SessionID, fakedoorman.Options{})
	var offs, msgs []string
	for i := 0; i < 3; i++ {
		v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: "again"})
		if err != nil || !v.Class.Delivered() {
			t.Fatalf("send %d: %v %v", i, v.Class, err)
		}
		if *claudeinbox.AckOf(v).LineOffset != v.LineOffset {
			t.Errorf("send %d at %d took the ack of %d", i, v.LineOffset, *claudeinbox.AckOf(v).LineOffset)
		}
		offs = append(offs, fmt.Sprint(v.LineOffset))
		msgs = append(msgs, v.MsgID)
	}
	if offs[0] == offs[1] || offs[1] == offs[2] || msgs[0] == msgs[1] || msgs[1] == msgs[2] {
		t.Errorf("offsets %v msg ids %v", offs, msgs)
	}
}

// A throttled second send is dropped: exit 6, nothing appended, a note
// saying when to resend; refusals and failed appends never consume the
// interval; another sender or another session is not throttled.
func TestThrottle(t *testing.T) {
	w := newWorld(t)
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	w.sender.Now = func() time.Time { return clock }
	w.sender.MinInterval = 30 * time.Second
	sid := w.offline(t) // offline: no waiting
	send := func(line, from string) claudeinbox.Verdict {
		t.Helper()
		v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: line, From: from})
		if err != nil && !errors.Is(err, claudeinbox.ErrRefused) {
			t.Fatal(err)
		}
		return v
	}
	// A refusal first: it must not consume the interval.
	if v := send("", "mama"); v.Class != claudeinbox.Refused {
		t.Fatalf("empty line: %s", v.Class)
	}
	if v := send("one", "mama"); v.Class != claudeinbox.QueuedOffline {
		t.Fatalf("first line after a refusal: %s (%s)", v.Class, v.Note)
	}
	before := readFile(t, w.fs.InboxPath(sid))
	clock = clock.Add(12 * time.Second)
	v := send("two", "mama")
	if v.Class != claudeinbox.Dropped || v.Class.ExitCode() != 6 || v.Reason != inboxv1.ReasonThrottled || v.Written {
		t.Fatalf("second line: %+v", v)
	}
	if v.RetryAfter != 18*time.Second {
		t.Errorf("RetryAfter %v, want 18s", v.RetryAfter)
	}
	if !strings.Contains(v.Note, "after 18 s") {
		t.Errorf("note %q does not say after 18 s", v.Note)
	}
	if after := readFile(t, w.fs.InboxPath(sid)); after != before {
		t.Errorf("a dropped line was written: %q", strings.TrimPrefix(after, before))
	}
	// The line's own tag is the sender: a line tagged [mama 📡] from
	// another --from is the same sender.
	if v := send("[mama 📡] three", "luna"); v.Class != claudeinbox.Dropped {
		t.Errorf("a line tagged mama: %s", v.Class)
	}
	if v := send("from luna", "luna"); v.Class != claudeinbox.QueuedOffline {
		t.Errorf("another sender: %s", v.Class)
	}
	if v, _ := w.sender.Send(context.Background(), claudeinbox.Request{Target: w.offline(t), Line: "x", From: "mama"}); v.Class != claudeinbox.QueuedOffline {
		t.Errorf("another session: %s", v.Class)
	}
	clock = clock.Add(18 * time.Second)
	if v := send("four", "mama"); v.Class != claudeinbox.QueuedOffline {
		t.Errorf("after the interval: %s (%s)", v.Class, v.Note)
	}
	// A failed append does not consume it either.
	sid2 := w.offline(t)
	if err := os.Symlink(filepath.Join(t.TempDir(), "victim"), w.fs.InboxPath(sid2)); err != nil {
		t.Fatal(err)
	}
	if v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid2, Line: "x", From: "mama"}); v.Class != claudeinbox.Refused || err == nil {
		t.Fatalf("symlinked inbox: %s %v", v.Class, err)
	}
	os.Remove(w.fs.InboxPath(sid2))
	if v := func() claudeinbox.Verdict {
		v, _ := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid2, Line: "x", From: "mama"})
		return v
	}(); v.Class != claudeinbox.QueuedOffline {
		t.Errorf("after a failed append: %s", v.Class)
	}
}

func TestThrottleRejectsNegative(t *testing.T) {
	w := newWorld(t)
	w.sender.MinInterval = -1
	v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: uuid.NewString(), Line: "x"})
	if !errors.Is(err, claudeinbox.ErrBadOption) || v.Class != claudeinbox.Refused {
		t.Errorf("negative MinInterval: %s %v", v.Class, err)
	}
}

// 16 goroutines × 200 sends into one inbox, throttle off: every line whole
// on its own line, none lost, every receipt's line_offset right.
func TestConcurrentSends(t *testing.T) {
	w := newWorld(t)
	w.sender.Wait = 0
	sid := w.offline(t)
	const G, N = 16, 200
	var wg sync.WaitGroup
	errc := make(chan error, G)
	for g := 0; g < G; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < N; i++ {
				// Lines of different lengths, so a torn write would show.
				text := fmt.Sprintf("g%02d i%03d %s", g, i, strings.Repeat("·", (g*N+i)%97))
				v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: text, From: fmt.Sprintf("g%d", g)})
				if err != nil || v.Class != claudeinbox.QueuedOffline {
					errc <- fmt.Errorf("g%d i%d: %s %v", g, i, v.Class, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	checkInboxAgainstReceipts(t, readFile(t, w.fs.InboxPath(sid)), receiptRows(t, w.fs.Paths.ReceiptsFile()), G*N)
}

// checkInboxAgainstReceipts checks that the inbox holds exactly the lines
// the receipts name, each whole, at its receipt's line_offset.
func checkInboxAgainstReceipts(t *testing.T, inbox string, rows []map[string]json.RawMessage, n int) {
	t.Helper()
	if len(rows) != n {
		t.Fatalf("%d receipts, want %d", len(rows), n)
	}
	lines := strings.Split(strings.TrimSuffix(inbox, "\n"), "\n")
	if len(lines) != n || !strings.HasSuffix(inbox, "\n") {
		t.Fatalf("%d lines in the inbox, want %d", len(lines), n)
	}
	at := map[int64]string{}
	var off int64
	for _, l := range lines {
		at[off] = l
		off += int64(len(l)) + 1
	}
	seen := map[int64]bool{}
	for _, r := range rows {
		var line string
		var lo int64
		if json.Unmarshal(r["line"], &line) != nil || json.Unmarshal(r["line_offset"], &lo) != nil {
			t.Fatalf("receipt without line/line_offset: %s %s", r["line"], r["line_offset"])
		}
		if at[lo] != line {
			t.Fatalf("receipt says %q at %d, the inbox has %q", line, lo, at[lo])
		}
		if seen[lo] {
			t.Fatalf("two receipts at offset %d", lo)
		}
		seen[lo] = true
	}
}

func TestFileModes(t *testing.T) {
	w := newWorld(t)
	w.sender.InboxDir = filepath.Join(w.fs.Root, "fresh", "inbox")
	w.sender.StateDir = filepath.Join(w.fs.Root, "fresh", "state")
	w.sender.MinInterval = time.Minute
	w.sender.Receipts.Path = filepath.Join(w.sender.StateDir, "receipts.jsonl")
	sid := w.offline(t)
	if v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "x"}); err != nil || v.Class != claudeinbox.QueuedOffline {
		t.Fatalf("%s %v", v.Class, err)
	}
	for path, want := range map[string]os.FileMode{
		w.sender.InboxDir: 0o700 | os.ModeDir,
		filepath.Join(w.sender.InboxDir, sid+".inbox"): 0o600,
		w.sender.StateDir: 0o700 | os.ModeDir,
		filepath.Join(w.sender.StateDir, inbox.ThrottleDir):                                      0o700 | os.ModeDir,
		inbox.ThrottleFor(w.sender.StateDir, time.Minute, nil).KeyFile(sid, inboxv1.DefaultFrom): 0o600,
		w.sender.Receipts.Path: 0o600,
	} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: %v, want %v", strings.TrimPrefix(path, w.fs.Root), fi.Mode(), want)
		}
	}
}

func TestSymlinkAtInbox(t *testing.T) {
	w := newWorld(t)
	r := w.session(t, "work-e9")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, w.fs.InboxPath(r.SessionID)); err != nil {
		t.Fatal(err)
	}
	v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: "through?"})
	if !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("error %v, want one wrapping ErrSymlink", err)
	}
	var se *fs.PathError
	if !errors.As(err, &se) || se.Op != "send append" || se.Path != w.fs.InboxPath(r.SessionID) {
		t.Errorf("error %#v does not name the append and the inbox", err)
	}
	if v.Class != claudeinbox.Refused || v.Reason != inboxv1.ReasonSymlink || v.Written || !strings.Contains(v.Note, "symlink") {
		t.Errorf("verdict %+v", v)
	}
	if got := readFile(t, victim); got != "keep\n" {
		t.Errorf("written through the symlink: %q", got)
	}
}

// A receipt that cannot be written never hides the verdict.
func TestReceiptWriteError(t *testing.T) {
	w := newWorld(t)
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), w.fs.Paths.ReceiptsFile()); err != nil {
		t.Fatal(err)
	}
	v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: w.offline(t), Line: "x"})
	if err != nil || v.Class != claudeinbox.QueuedOffline || !v.Written {
		t.Fatalf("%s %v", v.Class, err)
	}
	if v.ReceiptWriteError == "" {
		t.Fatal("no receipt_write_error")
	}
	row := v.Row()
	if row.ReceiptWriteError == nil || *row.ReceiptWriteError != v.ReceiptWriteError {
		t.Errorf("the row does not carry the write error: %v", row.ReceiptWriteError)
	}
}

// The messaging token of the environment reaches no verdict, receipt,
// inbox or any other file.
func TestNoTokenAnywhere(t *testing.T) {
	const secret = "5ec2e7000000000000000000000c0ffe"
	t.Setenv("CLAUDE_CODE_MESSAGING_TOKEN", secret)
	w := newWorld(t)
	r := w.session(t, "work-e9")
	w.fs.WriteKey(r, secret+"-key")
	w.doorman(t, r.SessionID, fakedoorman.Options{})
	var dump bytes.Buffer
	for _, req := range []claudeinbox.Request{
		{Target: r.SessionID, Line: "hello"}, {Target: "work", Line: "hi"}, {Target: w.offline(t), Line: "x"}, {Target: "x", Line: ""},
	} {
		v, err := w.sender.Send(context.Background(), req)
		fmt.Fprintf(&dump, "%+v %#v %v\n", v, v, err)
	}
	if bytes.Contains(dump.Bytes(), []byte(secret)) {
		t.Errorf("a verdict or error carries the token")
	}
	filepath.WalkDir(w.fs.Root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".key") {
			return nil
		}
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the token", strings.TrimPrefix(path, w.fs.Root))
		}
		return nil
	})
}

// Wait is woken by the ack's file event, not by a coarse timer: an ack
// that comes after 50 ms is seen well before the 1 s a timer would take.
// A send takes about 60 ms on an idle machine; on a loaded one any single
// send can be slow, so the bound is on the fastest of five (each figure is
// logged): a wait that only a timer ended would make every one slow.
func TestAckWaitIsEventDriven(t *testing.T) {
	w := newWorld(t)
	r := w.session(t, "work-e9")
	w.doorman(t, r.SessionID, fakedoorman.Options{AckDelay: 50 * time.Millisecond})
	fastest := time.Duration(-1)
	for i := 0; i < 5; i++ {
		start := time.Now()
		v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: fmt.Sprint("ping ", i)})
		if err != nil || !v.Class.Delivered() {
			t.Fatalf("%s %v", v.Class, err)
		}
		d := time.Since(start)
		t.Logf("send %d took %v", i, d)
		if fastest < 0 || d < fastest {
			fastest = d
		}
	}
	if fastest > claudeinbox.AckPoll*3/4 {
		t.Errorf("the fastest of five sends took %v: not woken by the ack's event", fastest)
	}
}

// A line the doorman holds because the receiver did not queue it is a
// timeout (exit 5, do not resend), and the note carries the doorman's
// reason from its heartbeat.
func TestTimeoutNoteSaysWhy(t *testing.T) {
	w := newWorld(t)
	w.sender.Wait = 100 * time.Millisecond
	r := w.session(t, "work-n0")
	why := string(inboxv1.ReasonReceiverDidNotQueue) + ": no enqueue row for the line at offset 0 within 2s of write 1 of 3"
	w.doorman(t, r.SessionID, fakedoorman.Options{NoAck: true, LastError: why})
	v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: "x"})
	if err != nil || v.Class != claudeinbox.Timeout || v.Class.ExitCode() != 5 {
		t.Fatalf("%s %v, want timeout", v.Class, err)
	}
	if !strings.Contains(v.Note, why) || !strings.Contains(v.Note, "do not resend") {
		t.Errorf("note %q lacks the doorman's reason", v.Note)
	}
	if v.Confirm != "" || v.QueuedAt != "" {
		t.Errorf("confirm %q queued_at %q on a timeout", v.Confirm, v.QueuedAt)
	}
}

func TestContextEndsTheWait(t *testing.T) {
	w := newWorld(t)
	w.sender.Wait = time.Minute
	r := w.session(t, "work-e9")
	w.doorman(t, r.SessionID, fakedoorman.Options{NoAck: true})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	v, err := w.sender.Send(ctx, claudeinbox.Request{Target: r.SessionID, Line: "x"})
	if !errors.Is(err, context.DeadlineExceeded) || v.Class != claudeinbox.Interrupted || !v.Written || !v.Class.Waiting() {
		t.Errorf("%s %v", v.Class, err)
	}
	if v.InterruptedBy != "deadline-exceeded" || strings.Contains(v.Note, "within") || !strings.Contains(v.Note, "interrupted (deadline-exceeded)") || !strings.Contains(v.Note, "do not resend") {
		t.Errorf("interrupted by %q, note %q: want it said interrupted, never a timeout", v.InterruptedBy, v.Note)
	}
}

func TestStructuredLineIsNotTagged(t *testing.T) {
	w := newWorld(t)
	sid := w.offline(t)
	raw := `{"v":1,"id":"` + uuid.NewString() + `","ts":"2026-11-30T12:00:00Z","from":"zai","line":"PONG"}`
	v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: raw})
	if err != nil || v.Line != raw || v.From != "zai" {
		t.Errorf("line %q from %q err %v", v.Line, v.From, err)
	}
	v, _ = w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "[zai 📡 PONG 🐉] hi", From: "x"})
	if v.Line != "[zai 📡 PONG 🐉] hi" || v.From != "zai" {
		t.Errorf("tagged line became %q from %q", v.Line, v.From)
	}
	v, _ = w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "plain", NoTag: true})
	if v.Line != "plain" {
		t.Errorf("--no-tag line became %q", v.Line)
	}
}

// TestRefusedCauses: a refused send's error matches its cause with
// errors.Is and errors.As, so a program branches without reading Reason.
func TestRefusedCauses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, w *world) claudeinbox.Request
		cause error
	}{
		{"unknown target", func(t *testing.T, w *world) claudeinbox.Request {
			return line("nobody-here", "hi")
		}, station.ErrUnknownTarget},
		{"ambiguous target", func(t *testing.T, w *world) claudeinbox.Request {
			w.session(t, "proj-alpha-1")
			w.session(t, "proj-alpha-2")
			return line("alpha", "hi")
		}, station.ErrAmbiguousTarget},
		{"newline", func(t *testing.T, w *world) claudeinbox.Request {
			return line(w.session(t, "work-e9").SessionID, "two\nlines")
		}, inboxv1.ErrNewline},
		{"empty", func(t *testing.T, w *world) claudeinbox.Request {
			return line(w.session(t, "work-e9").SessionID, "  ")
		}, inboxv1.ErrEmptyLine},
		{"too long", func(t *testing.T, w *world) claudeinbox.Request {
			return line(w.session(t, "work-e9").SessionID, strings.Repeat("x", inboxv1.MaxLineBytes))
		}, inboxv1.ErrLineTooLong},
		{"bad from", func(t *testing.T, w *world) claudeinbox.Request {
			r := line(w.session(t, "work-e9").SessionID, "hi")
			r.From = "a[b"
			return r
		}, inboxv1.ErrBadFrom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			v, err := w.sender.Send(context.Background(), tt.setup(t, w))
			if v.Class != claudeinbox.Refused {
				t.Fatalf("class %s, want refused", v.Class)
			}
			if !errors.Is(err, tt.cause) || !errors.Is(err, claudeinbox.ErrRefused) {
				t.Errorf("error %v does not match %v and ErrRefused", err, tt.cause)
			}
			var te *station.TargetError
			if errors.Is(tt.cause, station.ErrUnknownTarget) && (!errors.As(err, &te) || te.Target != "nobody-here") {
				t.Errorf("errors.As(*station.TargetError) = %+v", te)
			}
		})
	}
}

// TestSendCancelled: a ctx cancelled before Send writes nothing (no line,
// no receipt) and its error is context.Canceled itself; a ctx cancelled
// during the ack wait is context.Canceled too, with the line written.
func TestSendCancelled(t *testing.T) {
	w := newWorld(t)
	r := w.session(t, "work-e9")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := w.sender.Send(ctx, line(r.SessionID, "never written"))
	if err != context.Canceled || v.Class != claudeinbox.Refused || v.Reason != inboxv1.ReasonCanceled || v.Written {
		t.Fatalf("cancelled before: err %v class %s reason %s written %v", err, v.Class, v.Reason, v.Written)
	}
	if _, err := os.Stat(w.fs.InboxPath(r.SessionID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("inbox exists after a cancelled send: %v", err)
	}
	if _, err := os.Stat(w.fs.Paths.ReceiptsFile()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("receipt written for a cancelled send: %v", err)
	}

	w.doorman(t, r.SessionID, fakedoorman.Options{NoAck: true})
	w.sender.Wait = 10 * time.Second
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	v, err = w.sender.Send(ctx, line(r.SessionID, "written, then cancelled"))
	if err != context.DeadlineExceeded || v.Class != claudeinbox.Interrupted || !v.Written {
		t.Fatalf("cancelled during the wait: err %v class %s written %v", err, v.Class, v.Written)
	}
	// The receipt is written and says so.
	rows := receiptRows(t, w.fs.Paths.ReceiptsFile())
	if got := rows[len(rows)-1]; string(got["class"]) != `"interrupted"` || string(got["interrupted"]) != `"deadline-exceeded"` || string(got["delivered"]) != "false" || string(got["line_offset"]) == "null" {
		t.Errorf("receipt class %s interrupted %s delivered %s line_offset %s", got["class"], got["interrupted"], got["delivered"], got["line_offset"])
	}
}

// TestSendBeforeWrite: BeforeWrite is called once, before anything of the
// send's is written (no inbox, no ledger, no receipt yet), and not at all
// by a send refused before it would write; a ctx that ends during it
// ends the send with nothing written, refused as cancelled.
func TestSendBeforeWrite(t *testing.T) {
	w := newWorld(t)
	r := w.session(t, "work-bw")
	w.doorman(t, r.SessionID, fakedoorman.Options{})
	calls := 0
	w.sender.MinInterval = time.Minute // a ledger to write
	w.sender.BeforeWrite = func() {
		calls++
		for _, p := range []string{w.fs.InboxPath(r.SessionID), w.fs.Paths.ReceiptsFile()} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("BeforeWrite: %s is there already: %v", p, err)
			}
		}
		if ents, err := os.ReadDir(w.fs.Paths.StateDir); len(ents) > 0 {
			t.Errorf("BeforeWrite: the state directory holds %v already (%v)", ents, err)
		}
	}
	v, err := w.sender.Send(context.Background(), line(r.SessionID, "after BeforeWrite"))
	if err != nil || !v.Class.Delivered() || calls != 1 {
		t.Fatalf("send: %s %v, BeforeWrite called %d times; want delivered, once", v.Class, err, calls)
	}
	if _, err := w.sender.Send(context.Background(), line(typo(r.SessionID), "unknown")); err == nil || calls != 1 {
		t.Fatalf("a send refused before writing: %v, BeforeWrite called %d times; want an error, not called", err, calls)
	}

	r2 := w.session(t, "work-bw2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.sender.BeforeWrite = cancel // the signal came while the handler was made
	v, err = w.sender.Send(ctx, line(r2.SessionID, "never written"))
	if !errors.Is(err, context.Canceled) || v.Class != claudeinbox.Refused || v.Reason != inboxv1.ReasonCanceled || v.Written {
		t.Fatalf("cancelled in BeforeWrite: err %v class %s reason %s written %v", err, v.Class, v.Reason, v.Written)
	}
	if _, err := os.Stat(w.fs.InboxPath(r2.SessionID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("inbox written after a send cancelled in BeforeWrite: %v", err)
	}
}

// typo is sid with its last character changed.
func typo(sid string) string {
	last := sid[len(sid)-1]
	c := byte('0')
	if last == '0' {
		c = '1'
	}
	return sid[:len(sid)-1] + string(c)
}

func line(target, text string) claudeinbox.Request {
	return claudeinbox.Request{Target: target, Line: text}
}

// TestSendPriority: a now or later line is written in the structured form
// with its priority (the doorman's Decode reads it back), a next or unset
// one as v1 writes it; the verdict and the receipt record the priority; an
// unknown priority is refused with ErrBadPriority and nothing is written.
func TestSendPriority(t *testing.T) {
	tests := []struct {
		priority, line, wantLine, want string
	}{
		{"", "hello", "[mama 📡] hello", "next"},
		{"next", "hello", "[mama 📡] hello", "next"},
		{"later", "hello", `{"v":1,"from":"mama","line":"[mama 📡] hello","priority":"later"}`, "later"},
		{"now", "[omi 📡] <b>", `{"v":1,"from":"omi","line":"[omi 📡] <b>","priority":"now"}`, "now"},
		{"later", `{"from":"luna","line":"x"}`, `{"v":1,"from":"luna","line":"x","priority":"later"}`, "later"},
		{"later", `{"from":"luna","x-trace":{"span":[1, 2]},"line":"<x>","priority":"now","v":1}`, `{"from":"luna","x-trace":{"span":[1, 2]},"line":"<x>","priority":"later","v":1}`, "later"},
		{"now", `{"v":null,"line":"x","id":"7"}`, `{"v":1,"line":"x","id":"7","priority":"now"}`, "now"},
	}
	for _, tt := range tests {
		t.Run(tt.priority+" "+tt.line, func(t *testing.T) {
			w := newWorld(t)
			sid := w.offline(t)
			v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: tt.line, From: "mama", Priority: tt.priority})
			if err != nil || v.Class != claudeinbox.QueuedOffline {
				t.Fatalf("%s: %v", v.Class, err)
			}
			if got := strings.TrimSuffix(readFile(t, w.fs.InboxPath(sid)), "\n"); got != tt.wantLine || v.Line != got || v.Priority != tt.want {
				t.Errorf("written %q (verdict line %q, priority %q), want %q, %q", got, v.Line, v.Priority, tt.wantLine, tt.want)
			}
			m, err := inbox.Decode([]byte(v.Line))
			if err != nil || m.Priority != tt.want {
				t.Errorf("Decode: %+v, %v; want priority %s", m, err, tt.want)
			}
			row := receiptRows(t, w.fs.Paths.ReceiptsFile())[0]
			if string(row["priority"]) != `"`+tt.want+`"` {
				t.Errorf("receipt priority %s, want %s", row["priority"], tt.want)
			}
		})
	}
	w := newWorld(t)
	sid := uuid.NewString()
	v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "x", Priority: "soon"})
	if !errors.Is(err, inboxv1.ErrBadPriority) || v.Class != claudeinbox.Refused || v.Reason != inboxv1.ReasonBadPriority || v.Written {
		t.Errorf("priority soon: %s %s written %v err %v", v.Class, v.Reason, v.Written, err)
	}
}

// TestSendBadCaller: a nil context or a Sender without a station is a
// refusal naming the misuse, never a panic, and nothing is written.
func TestSendBadCaller(t *testing.T) {
	w := newWorld(t)
	sid := uuid.NewString()
	//lint:ignore SA1012 the nil context is the bad input under test
	v, err := w.sender.Send(nil, claudeinbox.Request{Target: sid, Line: "hi"})
	var re *claudeinbox.RefusedError
	if !errors.Is(err, claudeinbox.ErrBadOption) || !errors.As(err, &re) || re.Reason != inboxv1.ReasonBadOption || v.Class != claudeinbox.Refused || v.Written {
		t.Errorf("nil ctx: %v, %+v; want a bad-option refusal", err, v)
	}
	var zero claudeinbox.Sender
	v, err = zero.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "hi"})
	if !errors.Is(err, claudeinbox.ErrNoStation) || !errors.Is(err, claudeinbox.ErrRefused) || v.Class != claudeinbox.Refused || v.Reason != inboxv1.ReasonBadOption {
		t.Errorf("zero Sender: %v, %+v; want a no-station refusal", err, v)
	}
	if _, err := os.Stat(w.fs.InboxPath(sid)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an inbox was written: %v", err)
	}
	// A zero station.Config's Sender has relative directories: refused,
	// and nothing is written to the working directory (the inbox, the
	// ledger or the receipt would have gone there).
	t.Chdir(t.TempDir())
	v, err = claudeinbox.NewSender(station.Config{}).Send(context.Background(), claudeinbox.Request{Target: sid, Line: "hi"})
	if !errors.Is(err, claudeinbox.ErrBadOption) || v.Class != claudeinbox.Refused || v.Written || v.ReceiptWriteError == "" {
		t.Errorf("zero Config: %v, %+v; want a bad-option refusal whose receipt was not written", err, v)
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Errorf("the zero Config's send wrote %v in the working directory", ents)
	}
}

// NewSender takes no version of its own: a program's receipts carry the
// client_version it sets, and null when it sets none (an unused key).
func TestClientVersionIsTheCallers(t *testing.T) {
	fs := fakestation.New(t)
	cfg := station.DefaultConfig(fs.Paths)
	s := claudeinbox.NewSender(cfg)
	if s.ClientVersion != "" {
		t.Fatalf("NewSender set ClientVersion %q, want none", s.ClientVersion)
	}
	for _, version := range []string{"", "dispatcher 1.2"} {
		s.ClientVersion = version
		v, _ := s.Send(context.Background(), claudeinbox.Request{Target: uuid.NewString(), Line: "hi", From: version + "x"})
		want := "null"
		if version != "" {
			want = `"` + version + `"`
		}
		rows := receiptRows(t, fs.Paths.ReceiptsFile())
		if got := string(rows[len(rows)-1]["client_version"]); got != want || v.ClientVersion != version {
			t.Errorf("ClientVersion %q: receipt client_version %s, verdict %q; want %s", version, got, v.ClientVersion, want)
		}
	}
}
