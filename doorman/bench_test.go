package doorman_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/doorman"
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
