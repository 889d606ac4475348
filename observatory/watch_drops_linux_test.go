package observatory_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// gate is a watch's clock that can stop the watcher: while shut, the
// watcher's next look at the clock (the ts of its next event) waits, and
// says so on blocked.
type gate struct {
	mu      sync.Mutex
	shutC   chan struct{}
	blocked chan struct{}
}

func (g *gate) now() time.Time {
	g.mu.Lock()
	shut, blocked := g.shutC, g.blocked
	g.mu.Unlock()
	if shut != nil {
		select {
		case blocked <- struct{}{}:
		default:
		}
		<-shut
	}
	return time.Now()
}

func (g *gate) shut() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shutC, g.blocked = make(chan struct{}), make(chan struct{}, 1)
	return g.blocked
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shutC != nil {
		close(g.shutC)
		g.shutC = nil
	}
}

// flood makes n inotify events in dir, on two files in turn (the kernel
// merges an event with the one before it when they are the same).
func flood(t *testing.T, dir string, n int) {
	t.Helper()
	var fs [2]*os.File
	for i := range fs {
		f, err := os.OpenFile(filepath.Join(dir, "flood-"+strconv.Itoa(i)), os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fs[i] = f
	}
	for i := range n {
		if _, err := fs[i%2].Write([]byte{'x'}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWatchKernelDropsEvents: what changes while the kernel drops the
// watch's events (its inotify queue full: the watcher was held up) comes
// as events once the watcher learns of the drop: a rider's end, a new
// rider, an inbox line, a turn's end; and nothing already told is told
// again.
func TestWatchKernelDropsEvents(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip("no inotify queue bound to fill:", err)
	}
	queue, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || queue > 1<<17 {
		t.Skipf("an inotify queue of %q events is too long to fill", b)
	}
	fs := fakestation.New(t)
	cwd := "/home/u/proj"
	a := fs.AddSession(fakestation.Session{Name: "a", CWD: cwd, Status: station.StatusBusy})
	sid := a.SessionID
	pdir := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd))
	tp := filepath.Join(pdir, sid+transcriptfile.Ext)
	appendRow(t, tp, `{"type":"user","isSidechain":false,"message":{"role":"user","content":"go"}}`)
	rdir := filepath.Join(pdir, sid, riderwalk.Dir)
	rider := func(agent string) string { return filepath.Join(rdir, "agent-"+agent+transcriptfile.Ext) }
	riderRow := func(agent, typ, content string) string {
		return `{"type":"` + typ + `","isSidechain":true,"agentId":"` + agent + `","message":{"role":"` + typ + `","content":` + content + `,"stop_reason":"end_turn"}}`
	}
	const one, two = "a1111111111111111", "a2222222222222222"
	appendRow(t, rider(one), riderRow(one, "user", `"look"`))

	g := &gate{}
	ev := watchWith(t, observatory.WatchOptions{Station: fs.Station(), Now: g.now})
	t.Cleanup(g.open) // before the watch's own cleanup drains it
	ev.next("the initial rider-started", func(e observatory.Event) bool {
		return e.Event == observatory.EventRiderStarted && e.Agent == one
	})

	// Hold the watcher up at its next event, then fill its queue.
	blocked := g.shut()
	fs.SetStatus(a.PID, station.StatusIdle)
	select {
	case <-blocked:
	case <-time.After(60 * time.Second): // it ends at the event
		t.Fatal("the watcher did not take the status change")
	}
	flood(t, fs.Paths.InboxDir, 2*queue)
	appendRow(t, rider(one), riderRow(one, "assistant", `[{"type":"text","text":"found it"}]`))
	appendRow(t, rider(two), riderRow(two, "user", `"look too"`))
	if _, err := fsx.AppendLine(fs.InboxPath(sid), []byte("queued meanwhile")); err != nil {
		t.Fatal(err)
	}
	appendRow(t, tp, `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"done meanwhile"}],"stop_reason":"end_turn"}}`)
	g.open()

	ev.next("the warning of dropped events", func(e observatory.Event) bool {
		return e.Event == observatory.EventWarning && strings.Contains(e.Text, "overflow")
	})
	ev.next("turn-ended", is(observatory.EventTurnEnded, sid))
	if _, err := fsx.AppendLine(fs.InboxPath(sid), []byte("after")); err != nil {
		t.Fatal(err)
	}
	ev.next("the line after", func(e observatory.Event) bool { return e.Event == observatory.EventLineQueued && e.Line == "after" })

	count := map[string]int{}
	for _, e := range ev.got {
		if e.Session == sid && !e.Initial {
			count[string(e.Event)+" "+e.Agent+e.Line+e.Text]++
		}
	}
	for _, k := range []string{"rider-finished " + one, "rider-started " + two, "line-queued queued meanwhile", "turn-ended done meanwhile", "status "} {
		if count[k] != 1 {
			t.Errorf("%d events %q, want 1; got %+v", count[k], k, ev.got)
		}
	}
}
