package doorman_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// BenchmarkFollowLatency is append → ack through an in-process doorman and
// a real fake door with the default 0.25 s settle: following by file
// events, and the same loop following by a 0.5 s poll alone (v0.1's
// follower) for comparison. It reports the median.
func BenchmarkFollowLatency(b *testing.B) {
	for _, mode := range []struct {
		name string
		poll time.Duration
		only bool
	}{{"events", 5 * time.Second, false}, {"poll-0.5s", 500 * time.Millisecond, true}} {
		b.Run(mode.name, func(b *testing.B) {
			w := newWorld(b)
			sid := w.owned("busy")
			cfg := w.config()
			cfg.DoorSettle = 250 * time.Millisecond
			cfg.DoormanPoll = mode.poll
			o := doorman.Options{Host: w.host(doorman.DoorDialer{Settle: cfg.DoorSettle}), Config: cfg, Mode: doorman.ModeMCP}
			if mode.only {
				o = doorman.WithPollOnly(o)
			}
			_, _, stop := w.running(o)
			defer stop()
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Append at a random phase of the follower's timers.
				time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
				start := time.Now()
				w.appendLine(sid, fmt.Sprintf("[s%d 📡] bench %d", i, i))
				w.waitAcks(sid, i+1)
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "median-ms")
		})
	}
}

// BenchmarkIdleWakeups counts the follow loop's wake-ups of an idle
// in-process doorman over 10 s (default knobs: heartbeat and poll 5 s),
// per minute.
func BenchmarkIdleWakeups(b *testing.B) {
	w := newWorld(b)
	w.owned("busy")
	cfg := w.config()
	dm, _, stop := w.running(doorman.Options{Host: w.host(nil), Config: cfg, Mode: doorman.ModeMCP})
	defer stop()
	time.Sleep(time.Second)
	const window = 10 * time.Second
	for i := 0; i < b.N; i++ {
		before := dm.Wakeups()
		time.Sleep(window)
		b.ReportMetric(float64(dm.Wakeups()-before)*float64(time.Minute)/float64(window), "loop-wakeups/min")
	}
}

// BenchmarkReplay is a backlog of 200 lines replayed by one --once
// doorman through a real fake door that writes each line's enqueue row
// (confirmation on, as a restarted doorman replays an inbox); it reports
// the wall time per confirmed line.
func BenchmarkReplay(b *testing.B) {
	const lines = 200
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		w := newWorld(b)
		sid := w.owned("busy")
		for j := range lines {
			w.appendLine(sid, fmt.Sprintf("[s%04d 📡] replay %d", j, j))
		}
		b.StartTimer()
		start := time.Now()
		if err, _, log := w.runOnce(doorman.ModeMCP, "", nil); err != nil {
			b.Fatalf("%v\n%s", err, log)
		}
		el := time.Since(start)
		b.StopTimer()
		if n := len(w.door.Frames()); n < lines {
			b.Fatalf("%d frames, want %d", n, lines)
		}
		b.ReportMetric(float64(el.Microseconds())/lines/1000, "ms/line")
		w.door.Close()
	}
}

// BenchmarkDoormanFront is the doorman's share of the front of a send: a
// line appended to the inbox → its frame at the door (the time the
// receiver stamps its enqueue row with), through an in-process MCP doorman
// on the real /proc, as in a session: the identity by events (the owner's
// registry files watched, the chain's exits as pidfds), the transcript
// located, the confirmation on, the peer checked on the dial, no settle,
// no pacing. Each line is acked before the next is appended. It reports
// the median and the 90th percentile.
func BenchmarkDoormanFront(b *testing.B) {
	fs := fakestation.New(b)
	sid := uuid.NewString()
	tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(worldCWD), sid+transcriptfile.Ext)
	fd := fakedoor.New(b, fakedoor.Options{Transcript: tp})
	row := fs.AddSession(fakestation.Session{PID: os.Getpid(), SessionID: sid, Socket: fd.Path(), Status: station.StatusBusy, CWD: worldCWD})
	fs.WriteKey(row, "00112233445566778899aabbccddeeff")
	if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(tp, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	child := exec.Command("sleep", "600") // stands for the doorman: the owner's child
	if err := child.Start(); err != nil {
		b.Skipf("no child process: %v", err)
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
	}()
	cfg := station.DefaultConfig(fs.Paths)
	cfg.DoorSettle = 0
	host := &doorman.Host{
		Station: station.New(fs.Paths), Getenv: func(string) string { return "" },
		PID: child.Process.Pid, PPID: os.Getpid(), Door: doorman.DoorDialer{Settle: door.NoSettle},
	}
	dm := doorman.New(doorman.WithoutPacing(doorman.Options{Host: host, Config: cfg, Mode: doorman.ModeMCP, Version: "test"}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dm.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	files := inboxv1.FilesFor(fs.Paths.InboxDir, sid)
	for dm.Status().State != inboxv1.StateFollowing {
		time.Sleep(time.Millisecond)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer wcancel()
	var front []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		time.Sleep(time.Duration(20+rand.IntN(30)) * time.Millisecond) // the doorman asleep again
		b.StartTimer()
		start := time.Now()
		if _, err := fsx.AppendLine(files.Inbox, []byte(fmt.Sprintf("[s%d 📡] front %d", i, i))); err != nil {
			b.Fatal(err)
		}
		var q []fakedoor.Frame
		for n := 2 * (i + 1); ; n++ { // an auth frame and a user frame a line
			if _, err := fd.WaitFrames(wctx, n); err != nil {
				b.Fatal(err)
			}
			if q = fd.Queued(); len(q) > i {
				break
			}
		}
		front = append(front, q[i].Time.Sub(start))
		for dm.Status().Delivered < i+1 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	b.StopTimer()
	if st := dm.Status(); st.Confirmed != b.N {
		b.Fatalf("%d of %d lines confirmed by the transcript: %+v", st.Confirmed, b.N, st)
	}
	sort.Slice(front, func(i, j int) bool { return front[i] < front[j] })
	b.ReportMetric(float64(front[len(front)/2].Microseconds())/1000, "front-median-ms")
	b.ReportMetric(float64(front[len(front)*9/10].Microseconds())/1000, "front-p90-ms")
}
