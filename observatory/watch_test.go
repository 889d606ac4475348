package observatory_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// events collects a watch's stream.
type events struct {
	t  *testing.T
	ch <-chan observatory.Event
	// got is every event received so far, in order.
	got []observatory.Event
}

// next waits up to 10 s for an event matching match, keeping the ones
// before it, and returns it.
func (e *events) next(what string, match func(observatory.Event) bool) observatory.Event {
	e.t.Helper()
	deadline := time.After(60 * time.Second) // it ends at the event
	for {
		select {
		case ev, ok := <-e.ch:
			if !ok {
				e.t.Fatalf("stream closed while waiting for %s; got %+v", what, e.got)
			}
			e.got = append(e.got, ev)
			if match(ev) {
				return ev
			}
		case <-deadline:
			e.t.Fatalf("no %s within 60s; got %+v", what, e.got)
		}
	}
}

func is(kind observatory.EventKind, sid string) func(observatory.Event) bool {
	return func(e observatory.Event) bool { return e.Event == kind && e.Session == sid }
}

// quiet asserts that no event comes within d.
func (e *events) quiet(d time.Duration) {
	e.t.Helper()
	select {
	case ev := <-e.ch:
		e.t.Errorf("unexpected event on a quiet station: %+v", ev)
	case <-time.After(d):
	}
}

func startWatch(t *testing.T, fs *fakestation.Station, only string) *events {
	t.Helper()
	return watchWith(t, observatory.WatchOptions{Station: fs.Station(), Only: only})
}

// watchWith starts a watch with opts, ended and drained at the test's end.
func watchWith(t *testing.T, opts observatory.WatchOptions) *events {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := observatory.Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		for range ch { // drain until the watcher closes it
		}
	})
	return &events{t: t, ch: ch}
}

func appendRow(t *testing.T, path, row string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := fsx.AppendLine(path, []byte(row)); err != nil {
		t.Fatal(err)
	}
}

// TestWatchSessionLife: a session already running is reported at the
// start; one that starts later, its doorman, a line queued, delivered, seen,
// its turn's end, a rider that starts and finishes, a status change and the
// session's end come as events, in order, each from the file that changed.
func TestWatchSessionLife(t *testing.T) {
	fs := fakestation.New(t)
	old := fs.AddSession(fakestation.Session{Name: "old-a1", Status: station.StatusIdle})
	ev := startWatch(t, fs, "")
	first := ev.next("the initial session-started", is(observatory.EventSessionStarted, old.SessionID))
	if !first.Initial || first.Name != "old-a1" || first.PID != old.PID {
		t.Errorf("initial event %+v", first)
	}
	ev.next("the initial doorman state", is(observatory.EventDoorman, old.SessionID))
	ev.quiet(300 * time.Millisecond)

	cwd := "/home/u/proj"
	row := fs.AddSession(fakestation.Session{Name: "proj-b2", CWD: cwd, Status: station.StatusBusy})
	sid := row.SessionID
	if e := ev.next("session-started", is(observatory.EventSessionStarted, sid)); e.Initial || e.Status != station.StatusBusy {
		t.Errorf("session-started %+v", e)
	}
	d := fakedoorman.Start(t, fs.Paths.InboxDir, sid, fakedoorman.Options{})
	if e := ev.next("doorman up", func(e observatory.Event) bool {
		return e.Event == observatory.EventDoorman && e.Session == sid && e.Doorman == observatory.DoormanUp
	}); e.Initial {
		t.Errorf("doorman %+v", e)
	}

	// A line: queued, delivered (the fake doorman acks it), seen, answered.
	line := "[mama 📡] what is the status?"
	off, err := fsx.AppendLine(fs.InboxPath(sid), []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	q := ev.next("line-queued", is(observatory.EventLineQueued, sid))
	if q.Line != line || q.LineOffset == nil || *q.LineOffset != off {
		t.Errorf("line-queued %+v, want line %q at %d", q, line, off)
	}
	del := ev.next("line-delivered", is(observatory.EventLineDelivered, sid))
	if del.MsgID == "" || del.Class != string(inboxv1.AckDeliveredSteer) {
		t.Errorf("line-delivered %+v", del)
	}
	_ = d
	tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid+transcriptfile.Ext)
	appendRow(t, tp, `{"type":"attachment","isSidechain":false,"attachment":{"type":"queued_command","prompt":"hi","origin":{"kind":"peer","from":"mama","msg_id":"`+del.MsgID+`"},"isMeta":true}}`)
	if e := ev.next("line-seen", is(observatory.EventLineSeen, sid)); e.MsgID != del.MsgID {
		t.Errorf("line-seen %+v, want msg_id %s", e, del.MsgID)
	}
	long := strings.Repeat("é", 250)
	appendRow(t, tp, `{"type":"assistant","isSidechain":true,"message":{"role":"assistant","content":[{"type":"text","text":"rider text"}],"stop_reason":"end_turn"}}`)
	appendRow(t, tp, `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"`+long+`"}],"stop_reason":"end_turn"}}`)
	if e := ev.next("turn-ended", is(observatory.EventTurnEnded, sid)); e.Text != strings.Repeat("é", 200) {
		t.Errorf("turn-ended text %q, want the first 200 characters of the main-chain answer", e.Text)
	}

	// A rider: its directory appears with it.
	rdir := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid, riderwalk.Dir)
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		t.Fatal(err)
	}
	agent := "a505e4cb21d63ab15"
	writeFile(t, filepath.Join(rdir, "agent-"+agent+".meta.json"), `{"agentType":"general-purpose","description":"look around","finished":false}`, time.Time{})
	rt := filepath.Join(rdir, "agent-"+agent+transcriptfile.Ext)
	appendRow(t, rt, `{"type":"user","isSidechain":true,"agentId":"`+agent+`","message":{"role":"user","content":"look"}}`)
	if e := ev.next("rider-started", is(observatory.EventRiderStarted, sid)); e.Agent != agent {
		t.Errorf("rider-started %+v", e)
	}
	appendRow(t, rt, `{"type":"assistant","isSidechain":true,"agentId":"`+agent+`","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"stop_reason":"tool_use"}}`)
	ev.quiet(200 * time.Millisecond)
	appendRow(t, rt, `{"type":"assistant","isSidechain":true,"agentId":"`+agent+`","message":{"role":"assistant","content":[{"type":"text","text":"found it"}],"stop_reason":"end_turn"}}`)
	if e := ev.next("rider-finished", is(observatory.EventRiderFinished, sid)); e.Agent != agent || e.Description != "look around" {
		t.Errorf("rider-finished %+v", e)
	}

	fs.SetStatus(row.PID, station.StatusIdle)
	if e := ev.next("status", is(observatory.EventStatus, sid)); e.Status != station.StatusIdle {
		t.Errorf("status %+v", e)
	}
	fs.RemoveSession(row.PID)
	ev.next("session-ended", is(observatory.EventSessionEnded, sid))

	// The order of one session's life (its doorman: not fresh, then up).
	var order []string
	for _, e := range ev.got {
		if e.Session == sid {
			order = append(order, string(e.Event))
		}
	}
	want := []string{"session-started", "doorman", "doorman", "line-queued", "line-delivered", "line-seen", "turn-ended", "rider-started", "rider-finished", "status", "session-ended"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("events of the session:\n got %v\nwant %v", order, want)
	}
}

// TestWatchCrash: a session killed without removing its row is seen as
// ended once its doorman's heartbeat stops; sessions come and go; Only
// filters.
func TestWatchCrashAndOnly(t *testing.T) {
	fs := fakestation.New(t)
	ev := startWatch(t, fs, "")
	a := fs.AddSession(fakestation.Session{Name: "a"})
	ev.next("a started", is(observatory.EventSessionStarted, a.SessionID))
	d := fakedoorman.Start(t, fs.Paths.InboxDir, a.SessionID, fakedoorman.Options{})
	ev.next("a's doorman", func(e observatory.Event) bool {
		return e.Event == observatory.EventDoorman && e.Session == a.SessionID && e.Doorman == observatory.DoormanUp
	})
	fs.Crash(a.PID)
	d.Stop()
	ev.next("a ended", is(observatory.EventSessionEnded, a.SessionID))

	other := uuid.NewString()
	only := startWatch(t, fs, other)
	b := fs.AddSession(fakestation.Session{Name: "b"})
	ev.next("b started", is(observatory.EventSessionStarted, b.SessionID))
	only.quiet(300 * time.Millisecond)
}

// TestWatchStationNotThereYet: a watch started before Claude Code ever ran
// (no config, sessions, projects or inbox directory) picks them up as they
// are created.
func TestWatchStationNotThereYet(t *testing.T) {
	fs := fakestation.New(t)
	for _, d := range []string{fs.Paths.ConfigDir, fs.Paths.InboxDir} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	ev := startWatch(t, fs, "")
	ev.quiet(100 * time.Millisecond)
	for _, d := range []string{fs.Paths.SessionsDir, fs.Paths.ProjectsDir, fs.Paths.InboxDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	row := fs.AddSession(fakestation.Session{Name: "first", CWD: "/home/u/proj"})
	ev.next("session-started", is(observatory.EventSessionStarted, row.SessionID))
	if _, err := fsx.AppendLine(fs.InboxPath(row.SessionID), []byte("[x 📡] hi")); err != nil {
		t.Fatal(err)
	}
	ev.next("line-queued", is(observatory.EventLineQueued, row.SessionID))
	tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir("/home/u/proj"), row.SessionID+transcriptfile.Ext)
	appendRow(t, tp, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn"}}`)
	if e := ev.next("turn-ended", is(observatory.EventTurnEnded, row.SessionID)); e.Text != "hello" {
		t.Errorf("turn-ended %+v", e)
	}
}

// TestWatchCWDChange: a session whose registry row moves to another cwd
// (cd inside the app) is followed in its new project directory.
func TestWatchCWDChange(t *testing.T) {
	fs := fakestation.New(t)
	ev := startWatch(t, fs, "")
	row := fs.AddSession(fakestation.Session{Name: "mover", CWD: "/home/u/a"})
	ev.next("session-started", is(observatory.EventSessionStarted, row.SessionID))
	row.CWD = "/home/u/b"
	fs.WriteRow(row)
	time.Sleep(100 * time.Millisecond)
	tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir("/home/u/b"), row.SessionID+transcriptfile.Ext)
	appendRow(t, tp, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"moved"}],"stop_reason":"end_turn"}}`)
	if e := ev.next("turn-ended in the new directory", is(observatory.EventTurnEnded, row.SessionID)); e.Text != "moved" {
		t.Errorf("turn-ended %+v", e)
	}
}

// TestWatchOverflow: a reader that stops holds at most MaxQueued events;
// the rest are counted, and once it has taken the queued ones it gets one
// overflow event with the count and the station as it is now (a session
// that started meanwhile, not the one that ended, its doorman's state with
// its reason), then the stream goes on.
func TestWatchOverflow(t *testing.T) {
	const max, lines = 5, 50
	fs := fakestation.New(t)
	a := fs.AddSession(fakestation.Session{Name: "a"})
	ev := watchWith(t, observatory.WatchOptions{Station: fs.Station(), MaxQueued: max})
	// The reader stops: lines are queued, a session starts, one ends.
	for i := range lines {
		if _, err := fsx.AppendLine(fs.InboxPath(a.SessionID), []byte("line "+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	b := fs.AddSession(fakestation.Session{Name: "b"})
	time.Sleep(time.Second)
	fs.RemoveSession(a.PID)
	time.Sleep(2 * time.Second) // the watcher reads it all meanwhile

	over := ev.next("overflow", func(e observatory.Event) bool { return e.Event == observatory.EventOverflow })
	if n := len(ev.got) - 1; n != max {
		t.Errorf("%d events before the overflow, want MaxQueued %d: %+v", n, max, ev.got)
	}
	// 2 initial events and 3 lines were queued; 47 lines, b's start and
	// doorman state and a's end were dropped.
	if want := lines - (max - 2) + 3; over.Dropped != want {
		t.Errorf("overflow %+v, want dropped %d", over, want)
	}
	got := map[string]bool{}
	for range 2 {
		e := ev.next("the station as it is", func(observatory.Event) bool { return true })
		if !e.Initial {
			t.Errorf("after the overflow %+v, want the Initial events of the station as it is", e)
		}
		if e.Event == observatory.EventDoorman && (e.Doorman != observatory.DoormanNotFresh || e.Reason != "missing") {
			t.Errorf("after the overflow %+v, want not-fresh for its missing heartbeat, as at the start", e)
		}
		got[string(e.Event)+" "+e.Session] = true
	}
	want := map[string]bool{"session-started " + b.SessionID: true, "doorman " + b.SessionID: true}
	if !maps.Equal(got, want) {
		t.Errorf("after the overflow %v, want %v", got, want)
	}
	// The stream goes on.
	if _, err := fsx.AppendLine(fs.InboxPath(b.SessionID), []byte("after")); err != nil {
		t.Fatal(err)
	}
	if e := ev.next("line-queued", is(observatory.EventLineQueued, b.SessionID)); e.Line != "after" || e.Initial {
		t.Errorf("after the overflow: %+v", e)
	}
}

// TestWatchLiveness: a session killed without removing its row and
// without a doorman to say so is seen as ended at the next liveness check;
// with the check off, nothing says so.
func TestWatchLiveness(t *testing.T) {
	for _, tt := range []struct {
		name     string
		liveness time.Duration
	}{{"checked", 200 * time.Millisecond}, {"off", -1}} {
		t.Run(tt.name, func(t *testing.T) {
			fs := fakestation.New(t)
			a := fs.AddSession(fakestation.Session{Name: "a"})
			ev := watchWith(t, observatory.WatchOptions{Station: fs.Station(), Liveness: tt.liveness})
			ev.next("a's doorman state", is(observatory.EventDoorman, a.SessionID))
			fs.Crash(a.PID)
			if tt.liveness < 0 {
				ev.quiet(time.Second)
				return
			}
			start := time.Now()
			if e := ev.next("a ended", is(observatory.EventSessionEnded, a.SessionID)); e.PID != a.PID {
				t.Errorf("session-ended %+v", e)
			}
			t.Logf("ended seen %v after the crash", time.Since(start))
		})
	}
}

// TestWatchTranscriptBackToRegular: a transcript whose path was for a
// while a FIFO or a symlink is followed again once a regular file stands
// there: its rows give their events.
func TestWatchTranscriptBackToRegular(t *testing.T) {
	for _, kind := range []string{"fifo", "symlink"} {
		t.Run(kind, func(t *testing.T) {
			fs := fakestation.New(t)
			cwd := "/home/u/proj"
			a := fs.AddSession(fakestation.Session{Name: "a", CWD: cwd})
			sid := a.SessionID
			tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid+transcriptfile.Ext)
			appendRow(t, tp, `{"type":"user","isSidechain":false,"message":{"role":"user","content":"go"}}`)
			ev := startWatch(t, fs, "")
			ev.next("session-started", is(observatory.EventSessionStarted, sid))

			if err := os.Remove(tp); err != nil {
				t.Fatal(err)
			}
			switch kind {
			case "fifo":
				if err := syscall.Mkfifo(tp, 0o600); err != nil {
					t.Fatal(err)
				}
			case "symlink":
				other := filepath.Join(t.TempDir(), "other.jsonl")
				writeFile(t, other, "", time.Time{})
				if err := os.Symlink(other, tp); err != nil {
					t.Fatal(err)
				}
			}
			// The watcher reads its events in order: once it tells of this
			// line, it has seen the transcript's path as a FIFO or symlink.
			if _, err := fsx.AppendLine(fs.InboxPath(sid), []byte("seen the "+kind)); err != nil {
				t.Fatal(err)
			}
			ev.next("line-queued", is(observatory.EventLineQueued, sid))
			if err := os.Remove(tp); err != nil {
				t.Fatal(err)
			}
			appendRow(t, tp, `{"type":"user","isSidechain":false,"message":{"role":"user","content":"again"}}`)
			appendRow(t, tp, `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"back"}],"stop_reason":"end_turn"}}`)
			if e := ev.next("turn-ended", is(observatory.EventTurnEnded, sid)); e.Text != "back" {
				t.Errorf("turn-ended %+v", e)
			}
		})
	}
}

// TestWatchRidersNotRegular: a FIFO, a directory or a symlink where a
// rider's transcript would be is no rider (riders and sessions leave them
// out too), whether there when the watch starts or made later, meta file
// or not; a regular rider beside them is.
func TestWatchRidersNotRegular(t *testing.T) {
	fs := fakestation.New(t)
	cwd := "/home/u/proj"
	a := fs.AddSession(fakestation.Session{Name: "a", CWD: cwd})
	sid := a.SessionID
	rdir := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid, riderwalk.Dir)
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "real.jsonl")
	writeFile(t, target, `{"type":"user","isSidechain":true,"message":{"role":"user","content":"look"}}`+"\n", time.Time{})
	plant := func(agent, kind string) {
		t.Helper()
		p := filepath.Join(rdir, "agent-"+agent+transcriptfile.Ext)
		var err error
		switch kind {
		case "fifo":
			err = syscall.Mkfifo(p, 0o600)
		case "dir":
			err = os.Mkdir(p, 0o700)
		case "symlink":
			err = os.Symlink(target, p)
		}
		if err != nil {
			t.Fatal(err)
		}
		// The meta file after: a meta file alone is a rider starting.
		writeFile(t, filepath.Join(rdir, "agent-"+agent+".meta.json"), `{"description":"`+kind+`","finished":false}`, time.Time{})
	}
	plant("a0000000000000001", "fifo")
	ev := startWatch(t, fs, "")
	ev.next("the initial doorman", is(observatory.EventDoorman, sid))
	plant("a0000000000000002", "fifo")
	plant("a0000000000000003", "dir")
	plant("a0000000000000004", "symlink")
	const real = "a0000000000000005"
	appendRow(t, filepath.Join(rdir, "agent-"+real+transcriptfile.Ext), `{"type":"user","isSidechain":true,"message":{"role":"user","content":"look"}}`)
	ev.next("the regular rider's rider-started", func(e observatory.Event) bool {
		return e.Event == observatory.EventRiderStarted && e.Agent == real
	})
	for _, e := range ev.got {
		if e.Event == observatory.EventRiderStarted && e.Agent != real {
			t.Errorf("a rider that is not a regular file: %+v", e)
		}
	}
}
