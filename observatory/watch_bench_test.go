package observatory_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// watchBig starts a watch on the 200 × 10 station of BenchmarkBuild200x10
// and drains its initial events.
func watchBig(tb testing.TB, liveness time.Duration) (<-chan observatory.Event, func(i int) (inbox, tpath string)) {
	tb.Helper()
	st := bigStation(tb, 200, 10, 2)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := observatory.Watch(ctx, observatory.WatchOptions{Station: st, Liveness: liveness})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cancel()
		for range ch {
		}
	})
	started := 0
	for started < 200 {
		select {
		case e := <-ch:
			if e.Event == observatory.EventSessionStarted {
				started++
			}
		case <-time.After(30 * time.Second):
			tb.Fatalf("%d of 200 sessions reported", started)
		}
	}
	drain(ch, 200*time.Millisecond)
	paths := func(i int) (string, string) {
		sid := fmt.Sprintf("dddddddd-0000-4000-8000-%012d", i)
		cwd := fmt.Sprintf("/home/u/proj%03d", i)
		return inboxv1.FilesFor(st.Paths.InboxDir, sid).Inbox, filepath.Join(st.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid+transcriptfile.Ext)
	}
	return ch, paths
}

// drain reads events until none came for quiet.
func drain(ch <-chan observatory.Event, quiet time.Duration) {
	for {
		select {
		case <-ch:
		case <-time.After(quiet):
			return
		}
	}
}

func await(b *testing.B, ch <-chan observatory.Event, kind observatory.EventKind) {
	for {
		select {
		case e := <-ch:
			if e.Event == kind {
				return
			}
		case <-time.After(10 * time.Second):
			b.Fatalf("no %s within 10 s", kind)
		}
	}
}

// BenchmarkWatchEvent200x10 is the latency from a cause to its event on the
// 200 × 10 station (goal: ≤ 50 ms): a line appended to one session's inbox
// → line-queued, a final answer appended to one session's transcript →
// turn-ended. Each op is one incremental update of the watcher (the file
// event, the bytes read since the last look, the event): compare its time
// with BenchmarkBuild200x10's, which reads the whole station.
func BenchmarkWatchEvent200x10(b *testing.B) {
	ch, paths := watchBig(b, 0)
	b.Run("inbox-line", func(b *testing.B) {
		i := 0
		for b.Loop() {
			inbox, _ := paths(i % 200)
			if _, err := fsx.AppendLine(inbox, []byte(fmt.Sprintf("[mama 📡] bench %d", i))); err != nil {
				b.Fatal(err)
			}
			await(b, ch, observatory.EventLineQueued)
			i++
		}
	})
	b.Run("transcript-row", func(b *testing.B) {
		i := 0
		for b.Loop() {
			_, tp := paths(i % 200)
			row := `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"answer"}],"stop_reason":"end_turn"}}`
			if _, err := fsx.AppendLine(tp, []byte(row)); err != nil {
				b.Fatal(err)
			}
			await(b, ch, observatory.EventTurnEnded)
			i++
		}
	})
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestWatchIdleCPU: a watch of the 200 × 10 station uses no CPU while
// nothing changes (measured over 3 s: the whole test process, Go's runtime
// included, within 30 ms; about 1 ms on a quiet machine) and emits nothing.
// The station's process table is a fake one, which cannot be waited on
// through pidfds, so the liveness poll is off here: what is measured is the
// file side, the transcripts, inboxes and registry the watch follows.
// BenchmarkWatchAtRest measures the pidfd side with real processes.
func TestWatchIdleCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("idles for 3 s")
	}
	ch, _ := watchBig(t, -1)
	runtime.GC() // the start-up's garbage is not the idle watch's
	before := cpuTime(t)
	select {
	case e := <-ch:
		t.Errorf("an event on an idle station: %+v", e)
	case <-time.After(3 * time.Second):
	}
	used := cpuTime(t) - before
	t.Logf("CPU used while idle for 3 s: %v", used)
	if used > 30*time.Millisecond {
		t.Errorf("the idle watch used %v of CPU in 3 s; want next to none", used)
	}
}

// BenchmarkWatchAtRest is the CPU a watch uses at rest, per minute, on a
// station of 20, 200 and 1000 live sessions, each a real process (so each
// one's exit is a pidfd event) with no doorman: one op idles for 5 s, and
// cpu-ms/min is the whole test process's CPU time over it, scaled to a
// minute. Run it with -benchtime=1x.
func BenchmarkWatchAtRest(b *testing.B) {
	for _, n := range []int{20, 200, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			fs := fakestation.New(b)
			for i := range n {
				fs.AddSession(fakestation.Session{Name: fmt.Sprintf("rest-%04d", i), Status: station.StatusIdle})
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch, err := observatory.Watch(ctx, observatory.WatchOptions{Station: fs.Station()})
			if err != nil {
				b.Fatal(err)
			}
			drain(ch, 500*time.Millisecond)
			var used time.Duration
			idle := 5 * time.Second
			for b.Loop() {
				before := cpuTime(b)
				select {
				case e := <-ch:
					b.Fatalf("an event at rest: %+v", e)
				case <-time.After(idle):
				}
				used += cpuTime(b) - before
			}
			b.ReportMetric(float64(used.Milliseconds())*float64(time.Minute/idle)/float64(b.N), "cpu-ms/min")
		})
	}
}
