package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakeowner"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

func TestDoormanUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		in   string
	}{
		{"no mode", []string{"doorman"}, "refuses to run without --allow-foreground"},
		{"once alone", []string{"doorman", "--once"}, "refuses to run without --allow-foreground"},
		{"mcp with once", []string{"doorman", "--mcp", "--once"}, "--mcp takes no other flag"},
		{"argument", []string{"doorman", "--allow-foreground", "x"}, "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runBinary(t, []string{"HOME=" + t.TempDir()}, "", tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.in) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", r.code, r.stdout, r.stderr, tt.in)
			}
		})
	}
}

func userFrames(d *fakedoor.Door) []fakedoor.Frame {
	var q []fakedoor.Frame
	for _, f := range d.Frames() {
		if f.Type == "user" {
			q = append(q, f)
		}
	}
	sort.SliceStable(q, func(i, j int) bool { return q[i].Conn < q[j].Conn })
	return q
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// TestDoormanRoundTrip: a line appended to the inbox reaches the door from
// the doorman's pid, and the ack names the frame's msg_id and the class the
// registry status says.
func TestDoormanRoundTrip(t *testing.T) {
	t.Parallel()
	for _, status := range []string{"busy", "idle"} {
		t.Run(status, func(t *testing.T) {
			t.Parallel()
			o := fakeowner.New(t, fakeowner.Options{Status: status})
			ctx := ctxT(t, 30*time.Second)
			c := o.Start(command(ctx, t, []string{"OO_CLAUDE_DOOR_SETTLE_S=0.05"}, "doorman", "--mcp"))
			c.Stdin.Write([]byte(initialize))
			if _, err := o.WaitHeartbeat(ctx, func(h inboxv1.Heartbeat) bool { return h.State == inboxv1.StateFollowing }); err != nil {
				t.Fatalf("no following heartbeat: %v; stderr:\n%s", err, c.Stderr())
			}
			off := o.Append("[chatgpt 📡] round trip")
			acks, err := o.WaitAcks(ctx, 1)
			if err != nil {
				t.Fatalf("no ack: %v; stderr:\n%s", err, c.Stderr())
			}
			q := userFrames(o.Door)
			want := inboxv1.AckDeliveredSteer
			if status == "idle" {
				want = inboxv1.AckDeliveredStart
			}
			a := acks[0]
			switch {
			case len(q) != 1:
				t.Fatalf("%d frames", len(q))
			case a.Class != want:
				t.Errorf("class %s, want %s", a.Class, want)
			case a.MsgID != q[0].MsgID || a.MsgID == "":
				t.Errorf("ack msg_id %q, frame %q", a.MsgID, q[0].MsgID)
			case q[0].PeerPID != c.PID() || a.DoormanPID != c.PID():
				t.Errorf("writer pid %d, ack doorman_pid %d, want the doorman %d", q[0].PeerPID, a.DoormanPID, c.PID())
			case a.LineOffset == nil || *a.LineOffset != off:
				t.Errorf("line_offset %v, want %d", a.LineOffset, off)
			}

			// The sender's side: oo-claude send waits for this doorman's ack.
			r := runBinary(t, o.Station.Env(), "", "send", o.SessionID(), "through send", "--from", "mama", "--json")
			if r.code != 0 || !strings.Contains(r.stdout, `"class":"`+string(want)+`"`) {
				t.Fatalf("send: exit %d stdout %q stderr %q; doorman stderr:\n%s", r.code, r.stdout, r.stderr, c.Stderr())
			}
			q = userFrames(o.Door)
			acks = o.Acks()
			if len(q) != 2 || q[1].Content != "[mama 📡] through send" || q[1].PeerPID != c.PID() || acks[1].MsgID != q[1].MsgID || !strings.Contains(r.stdout, q[1].MsgID) {
				t.Errorf("after send: frames %+v, acks %+v, receipt %s", q, acks, r.stdout)
			}
			c.Stdin.Close()
			if code, err := c.Wait(ctx); code != 0 || err != nil {
				t.Fatalf("exit %d %v", code, err)
			}
			h, _ := inbox.ReadHeartbeat(o.Files().Heartbeat)
			if h.State != inboxv1.StateStopped || h.Delivered != 2 {
				t.Errorf("heartbeat %+v", h)
			}
			if !strings.HasPrefix(c.Stdout(), `{"jsonrpc":"2.0","id":1,"result":{`) || !strings.Contains(c.Stdout(), `"protocolVersion":"2025-11-25"`) || strings.Count(c.Stdout(), "\n") != 1 {
				t.Errorf("stdout %q", c.Stdout())
			}
			if strings.Contains(c.Stderr(), fakeowner.Token) {
				t.Error("the token is on stderr")
			}
		})
	}
}

func inboxDir(t *testing.T, o *fakeowner.Owner) []string {
	ents, _ := os.ReadDir(o.Station.Paths.InboxDir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestDoormanRefusesElsewhere: a doorman that is not below the session, one
// given another session's id, and an MCP doorman started from a tool write
// nothing and say why.
func TestDoormanRefusesElsewhere(t *testing.T) {
	t.Parallel()
	t.Run("another session's --session", func(t *testing.T) {
		t.Parallel()
		o := fakeowner.New(t, fakeowner.Options{})
		ctx := ctxT(t, 30*time.Second)
		c := o.Start(command(ctx, t, nil, "doorman", "--allow-foreground", "--once", "--json", "--session", "0badc0de-0000-4000-8000-000000000000"))
		c.Stdin.Close()
		code, _ := c.Wait(ctx)
		if code != 3 || !strings.Contains(c.Stderr(), "session-mismatch") || !strings.Contains(c.Stdout(), `"state":"session-mismatch"`) {
			t.Errorf("exit %d stdout %q stderr %q", code, c.Stdout(), c.Stderr())
		}
		if got := inboxDir(t, o); len(got) != 0 {
			t.Errorf("inbox dir holds %v", got)
		}
	})
	t.Run("not a descendant", func(t *testing.T) {
		t.Parallel()
		o := fakeowner.New(t, fakeowner.Options{})
		o.Append("[a 📡] must wait")
		ctx := ctxT(t, 30*time.Second)
		dir := t.TempDir()
		// A subshell in the background: the doorman's parent is reparented
		// away from this process.
		script := fmt.Sprintf(`(%q doorman --allow-foreground --once >%q/out 2>%q/err; echo $? >%q/rc.tmp; mv %q/rc.tmp %q/rc) &`, binary(t), dir, dir, dir, dir, dir)
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
		cmd.Env = append([]string{"OO_CLAUDE_TEST_AS_BINARY=1", "PATH=/usr/bin:/bin", childGORACE()}, o.Env()...)
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		var rc []byte
		for {
			var err error
			if rc, err = os.ReadFile(filepath.Join(dir, "rc")); err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatal("no exit code")
			}
			time.Sleep(10 * time.Millisecond)
		}
		stderr, _ := os.ReadFile(filepath.Join(dir, "err"))
		if strings.TrimSpace(string(rc)) != "3" || !strings.Contains(string(stderr), "not-descendant") {
			t.Errorf("exit %s, stderr %q", rc, stderr)
		}
		if got := inboxDir(t, o); len(got) != 1 || len(o.Door.Frames()) != 0 {
			t.Errorf("inbox dir holds %v; %d frames", got, len(o.Door.Frames()))
		}
	})
	t.Run("mcp doorman started from a tool", func(t *testing.T) {
		t.Parallel()
		o := fakeowner.New(t, fakeowner.Options{})
		o.Append("[a 📡] must wait")
		ctx := ctxT(t, 30*time.Second)
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", strconv.Quote(binary(t))+" doorman --mcp; exit $?")
		cmd.Env = []string{"OO_CLAUDE_TEST_AS_BINARY=1", "PATH=/usr/bin:/bin", childGORACE()}
		c := o.Start(cmd)
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claude_inbox_status"}}` + "\n"
		c.Stdin.Write([]byte(initialize))
		// The status call once the doorman has judged its identity (it
		// says so on stderr), not after a fixed 300 ms.
		for !strings.Contains(c.Stderr(), "not-descendant") && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		c.Stdin.Write([]byte(call))
		c.Stdin.Close()
		if code, _ := c.Wait(ctx); code != 0 {
			t.Errorf("exit %d; stderr %q", code, c.Stderr())
		}
		if !strings.Contains(c.Stdout(), `\"state\":\"not-descendant\"`) || !strings.Contains(c.Stderr(), "not-descendant") {
			t.Errorf("stdout %q stderr %q", c.Stdout(), c.Stderr())
		}
		if got := inboxDir(t, o); len(got) != 1 || len(o.Door.Frames()) != 0 {
			t.Errorf("inbox dir holds %v; %d frames", got, len(o.Door.Frames()))
		}
	})
}

// TestDoormanSIGINT holds the doorman to Claude Code's stop sequence: the
// stopped heartbeat is on disk before the SIGTERM that follows SIGINT by
// 100 ms. The typical figure (well under 50 ms) is a measurement, not an
// assertion: BenchmarkDoormanSIGINT reports its median, and BENCHMARKS.md
// records it; a wall-clock bound tighter than the real deadline would only
// measure how loaded the machine running the tests is.
//
// On a loaded machine any one stop can miss 100 ms for want of a CPU, so
// the bound holds for the fastest of up to five doormen (a stop that does
// not write the heartbeat at once, say after a timer, misses it every
// time); each figure is logged.
func TestDoormanSIGINT(t *testing.T) {
	var figures []time.Duration
	for range 5 {
		took, h := stopAfterSIGINT(t)
		if h.StoppedAt == "" {
			t.Error("no stopped_at")
		}
		t.Logf("stopped heartbeat %v after SIGINT", took)
		figures = append(figures, took)
		if took < 100*time.Millisecond {
			return
		}
	}
	t.Errorf("stopped heartbeat after %v, want it before Claude Code's SIGTERM at 100 ms", figures)
}

// BenchmarkDoormanSIGINT is SIGINT → the stopped heartbeat on disk, for the
// real binary as an MCP doorman child of this process; it reports the
// median.
func BenchmarkDoormanSIGINT(b *testing.B) {
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		took, _ := stopAfterSIGINT(b)
		lat = append(lat, took)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
}

// stopAfterSIGINT starts an MCP doorman, waits until it follows, sends it
// SIGINT and returns how long the stopped heartbeat took to reach the disk,
// and that heartbeat. The doorman must then exit 0.
func stopAfterSIGINT(tb testing.TB) (time.Duration, inboxv1.Heartbeat) {
	tb.Helper()
	o := fakeowner.New(tb, fakeowner.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := o.Start(command(ctx, tb, nil, "doorman", "--mcp"))
	c.Stdin.Write([]byte(initialize))
	if _, err := o.WaitHeartbeat(ctx, func(h inboxv1.Heartbeat) bool { return h.State == inboxv1.StateFollowing }); err != nil {
		tb.Fatalf("%v; stderr %s", err, c.Stderr())
	}
	start := time.Now()
	c.Signal(syscall.SIGINT)
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second) // it comes at once; generous for a loaded machine
	defer wcancel()
	h, err := o.WaitHeartbeat(wctx, func(h inboxv1.Heartbeat) bool { return h.State == inboxv1.StateStopped })
	took := time.Since(start)
	if err != nil {
		tb.Fatalf("no stopped heartbeat: %v", err)
	}
	if code, _ := c.Wait(ctx); code != 0 {
		tb.Errorf("exit %d", code)
	}
	return took, h
}

// TestDoormanKill9Replay kills the doorman at random points of a 1,000-line
// replay, 20 times: no line is lost, none is enqueued twice by the receiver
// (the fake door's own record, its enqueue rows: a restarted doorman finds
// the row of a write made before the kill and acks it instead of writing
// again), every delivered ack rests on its enqueue row, and each refused
// line is acked exactly once.
func TestDoormanKill9Replay(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow")
	}
	o := fakeowner.New(t, fakeowner.Options{})
	const n, kills = 1000, 20
	var good []string
	refusedAt := map[int64]bool{}
	for i := range n {
		if i%97 == 50 {
			refusedAt[o.Append(fmt.Sprintf("[s%04d 📡] bad\x00%d", i, i))] = true
			continue
		}
		line := fmt.Sprintf("[s%04d 📡] line %d", i, i)
		good = append(good, line)
		o.Append(line)
	}
	// The replay itself takes a few seconds (about 3 ms a line). A kill
	// that lands between a write's record and the write leaves a write of
	// unknown fate, which the next doorman waits out with the receiver's
	// windows (30 s) before it writes the line again: the bound allows
	// that for a handful of kills on a loaded machine under -race.
	ctx := ctxT(t, 10*time.Minute)
	env := []string{"OO_CLAUDE_DOOR_SETTLE_S=0"}
	r := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	began := time.Now()
	for k := range kills {
		c := o.Start(command(ctx, t, env, "doorman", "--allow-foreground"))
		// Spread the kills over the replay: wait for a share of the acks,
		// then kill at a random moment after it.
		if _, err := o.WaitAcks(ctx, (k+1)*n/(kills+1)-r.IntN(20)); err != nil {
			t.Fatalf("kill %d: %v; stderr %s", k+1, err, c.Stderr())
		}
		time.Sleep(time.Duration(r.IntN(3000)) * time.Microsecond)
		c.Cmd.Process.Kill()
		c.Wait(ctx)
		t.Logf("kill %d: %d acks", k+1, len(o.Acks()))
	}
	// The last run: --once until it delivers all (exit 0); a line whose
	// write the last kill left of unknown fate waits (exit 4) first.
	for {
		c := o.Start(command(ctx, t, env, "doorman", "--allow-foreground", "--once"))
		code, _ := c.Wait(ctx)
		if code == 0 {
			break
		}
		if code != 4 || !strings.Contains(c.Stderr(), string(inboxv1.ReasonReceiverDidNotQueue)) || ctx.Err() != nil {
			t.Fatalf("final run exit %d: %s", code, c.Stderr())
		}
		time.Sleep(time.Second)
	}
	t.Logf("replayed in %v (%.1f ms a line, kills and restarts included)", time.Since(began).Round(time.Millisecond), float64(time.Since(began).Microseconds())/n/1000)
	q := userFrames(o.Door)
	var got []string
	seen := map[string]bool{}
	for _, f := range q {
		if !seen[f.Content] {
			seen[f.Content] = true
			got = append(got, f.Content)
		}
	}
	if strings.Join(got, "\n") != strings.Join(good, "\n") {
		t.Errorf("first deliveries: %d lines, want the %d good lines in order", len(got), len(good))
	}
	t.Logf("%d door writes of %d good lines over %d kills", len(q), len(good), kills)
	rows := enqueueRows(t, o.Transcript)
	for _, l := range good {
		if n := len(rows[l]); n != 1 {
			t.Errorf("line %q enqueued %d times, want once", l, n)
		}
	}
	for _, a := range o.Acks() {
		if (a.Class == inboxv1.AckDeliveredSteer || a.Class == inboxv1.AckDeliveredStart) && (a.Confirm != inboxv1.ConfirmTranscript || a.QueuedAt == nil) {
			t.Errorf("delivered ack at %d: confirm %q queued_at %v, want transcript and its row's time", *a.LineOffset, a.Confirm, a.QueuedAt)
		}
	}
	refusals := map[int64]int{}
	for _, a := range o.Acks() {
		if a.Class == inboxv1.AckRefused {
			refusals[*a.LineOffset]++
		}
	}
	for off := range refusedAt {
		if refusals[off] != 1 {
			t.Errorf("line at %d refused %d times, want 1", off, refusals[off])
		}
	}
	if len(refusals) != len(refusedAt) {
		t.Errorf("%d refused offsets, want %d", len(refusals), len(refusedAt))
	}
}

// TestDoormanOneProc: the doorman's process runs on one P (GOMAXPROCS 1:
// an I/O-bound process whose second P only woke idle threads to spin),
// unless its environment sets GOMAXPROCS. The runtime's own scheduler
// trace (GODEBUG=schedtrace) says how many Ps the child runs on once it
// follows.
func TestDoormanOneProc(t *testing.T) {
	t.Parallel()
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: one P either way")
	}
	for _, tt := range []struct {
		name string
		env  []string
		want string
	}{
		{"unset", nil, "gomaxprocs=1 "},
		{"set", []string{"GOMAXPROCS=2"}, "gomaxprocs=2 "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := fakeowner.New(t, fakeowner.Options{})
			ctx := ctxT(t, time.Minute)
			c := o.Start(command(ctx, t, append(tt.env, "GODEBUG=schedtrace=20"), "doorman", "--mcp"))
			c.Stdin.Write([]byte(initialize))
			if _, err := o.WaitHeartbeat(ctx, func(h inboxv1.Heartbeat) bool { return h.State == inboxv1.StateFollowing }); err != nil {
				t.Fatalf("no following heartbeat: %v; stderr:\n%s", err, c.Stderr())
			}
			// oo-claude traces its own scheduler (two Ps) until it execs the
			// doorman program, and those lines may still be on their way
			// through the pipe: the third whole line after following is
			// the doorman program's (20 ms apart, it follows already).
			from := len(c.Stderr())
			var line string
			for line == "" {
				if ctx.Err() != nil {
					t.Fatalf("no scheduler trace after following; stderr:\n%s", c.Stderr())
				}
				time.Sleep(5 * time.Millisecond) // stderr is another process's: polled
				var sched []string
				for _, l := range strings.SplitAfter(c.Stderr()[from:], "\n") {
					if strings.HasPrefix(l, "SCHED ") && strings.HasSuffix(l, "\n") {
						sched = append(sched, strings.TrimSuffix(l, "\n"))
					}
				}
				if len(sched) >= 3 {
					line = sched[2]
				}
			}
			if !strings.Contains(line, tt.want) {
				t.Errorf("env %q: the running doorman's scheduler says %q, want %s", tt.env, line, tt.want)
			}
		})
	}
}

// BenchmarkDoormanLatency is append → ack through the real binary (an MCP
// doorman child of this process) on a fake station with the default 0.25 s
// settle; it reports the median.
func BenchmarkDoormanLatency(b *testing.B) {
	o := fakeowner.New(b, fakeowner.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := o.Start(command(ctx, b, []string{"OO_CLAUDE_DOOR_SETTLE_S=0.25"}, "doorman", "--mcp"))
	c.Stdin.Write([]byte(initialize))
	if _, err := o.WaitHeartbeat(ctx, func(h inboxv1.Heartbeat) bool { return h.State == inboxv1.StateFollowing }); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 3))
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(time.Duration(r.IntN(500)) * time.Millisecond)
		start := time.Now()
		o.Append(fmt.Sprintf("[s%d 📡] bench %d", i, i))
		if _, err := o.WaitAcks(ctx, i+1); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkDoormanFrontProcs is the doorman's share of the front of a
// send through the real binary (an MCP doorman child of this process, no
// settle): a line appended → its frame complete at the fake door, for a
// doorman on one P (GOMAXPROCS unset: the doorman's own choice) and one on
// two (GOMAXPROCS=2), each on its own fake station, their lines
// interleaved so both see the same load. Each line is acked before the
// next; it reports the medians and 90th percentiles.
func BenchmarkDoormanFrontProcs(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	type side struct {
		name  string
		o     *fakeowner.Owner
		front []time.Duration
	}
	sides := []*side{{name: "1p"}, {name: "2p"}}
	for i, s := range sides {
		s.o = fakeowner.New(b, fakeowner.Options{})
		env := []string{"OO_CLAUDE_DOOR_SETTLE_S=0"}
		if i == 1 {
			env = append(env, "GOMAXPROCS=2")
		}
		c := s.o.Start(command(ctx, b, env, "doorman", "--mcp"))
		c.Stdin.Write([]byte(initialize))
		if _, err := s.o.WaitHeartbeat(ctx, func(h inboxv1.Heartbeat) bool { return h.State == inboxv1.StateFollowing }); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range sides {
			time.Sleep(time.Duration(20+rand.IntN(30)) * time.Millisecond) // the doorman asleep again
			start := time.Now()
			s.o.Append(fmt.Sprintf("[s%d 📡] front %d", i, i)) // a sender a line: no pacing
			if _, err := s.o.WaitAcks(ctx, i+1); err != nil {
				b.Fatal(err)
			}
			q := userFrames(s.o.Door)
			s.front = append(s.front, q[len(q)-1].Time.Sub(start))
		}
	}
	b.StopTimer()
	for _, s := range sides {
		sort.Slice(s.front, func(i, j int) bool { return s.front[i] < s.front[j] })
		b.ReportMetric(float64(s.front[len(s.front)/2].Microseconds())/1000, s.name+"-median-ms")
		b.ReportMetric(float64(s.front[len(s.front)*9/10].Microseconds())/1000, s.name+"-p90-ms")
	}
}

// BenchmarkDoormanIdle measures an idle MCP doorman (the real binary) for
// 20 s: voluntary context switches per minute (its wake-ups, all threads)
// and its resident set.
func BenchmarkDoormanIdle(b *testing.B) {
	o := fakeowner.New(b, fakeowner.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := o.Start(command(ctx, b, nil, "doorman", "--mcp"))
	c.Stdin.Write([]byte(initialize))
	if _, err := o.WaitHeartbeat(ctx, func(h inboxv1.Heartbeat) bool { return h.State == inboxv1.StateFollowing }); err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	const window = 20 * time.Second
	perMin := func(n float64) float64 { return n * float64(time.Minute) / float64(window) }
	for i := 0; i < b.N; i++ {
		before, cpu0 := ctxSwitches(b, c.PID()), cpuNS(c.PID())
		// perf (when installed and allowed) counts the window's system
		// calls: the total and the ones advisory state costs.
		sys, perfErr := perfSyscalls(ctx, c.PID(), window)
		if perfErr != nil {
			time.Sleep(window)
		}
		after, cpu1 := ctxSwitches(b, c.PID()), cpuNS(c.PID())
		b.ReportMetric(perMin(float64(after-before)), "wakeups/min")
		b.ReportMetric(perMin(float64(cpu1-cpu0))/1e6, "cpu-ms/min")
		if perfErr != nil {
			b.Logf("no syscall counts (perf: %v)", perfErr)
			continue
		}
		for _, k := range []string{"raw_syscalls:sys_enter", "syscalls:sys_enter_fsync", "syscalls:sys_enter_rename", "syscalls:sys_enter_nanosleep"} {
			name := strings.TrimPrefix(strings.TrimPrefix(k, "syscalls:sys_enter_"), "raw_syscalls:sys_enter")
			if name == "" {
				name = "syscalls"
			} else {
				name += "s"
			}
			b.ReportMetric(perMin(float64(sys[k])), name+"/min")
		}
		b.ReportMetric(perMin(float64(sys["syscalls:sys_enter_renameat"]+sys["syscalls:sys_enter_renameat2"])), "renameats/min")
	}
	b.ReportMetric(float64(procStatus(b, c.PID(), "VmRSS")), "rss-KiB")
}

// ctxSwitches sums voluntary_ctxt_switches over the process's threads.
func ctxSwitches(b *testing.B, pid int) int64 {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var n int64
	for _, t := range tasks {
		tid, _ := strconv.Atoi(t.Name())
		n += procTaskStatus(b, pid, tid, "voluntary_ctxt_switches")
	}
	return n
}

// cpuNS sums the time on a CPU of the process's threads, in ns
// (/proc/<pid>/task/<tid>/schedstat's first field).
func cpuNS(pid int) int64 {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var n int64
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(raw)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			n += v
		}
	}
	return n
}

// perfSyscalls counts pid's system calls for window with perf stat: the
// total (raw_syscalls:sys_enter) and fsync, rename, renameat(2) and
// nanosleep, by event name.
func perfSyscalls(ctx context.Context, pid int, window time.Duration) (map[string]int64, error) {
	events := "raw_syscalls:sys_enter,syscalls:sys_enter_fsync,syscalls:sys_enter_rename,syscalls:sys_enter_renameat,syscalls:sys_enter_renameat2,syscalls:sys_enter_nanosleep"
	out, err := exec.CommandContext(ctx, "perf", "stat", "-x", ",", "-e", events, "-p", strconv.Itoa(pid), "--", "sleep", strconv.FormatFloat(window.Seconds(), 'f', -1, 64)).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	got := map[string]int64{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Split(l, ",")
		if len(f) < 3 {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			got[f[2]] = n
		}
	}
	if _, ok := got["raw_syscalls:sys_enter"]; !ok {
		return nil, fmt.Errorf("no count in perf's output: %s", out)
	}
	return got, nil
}

func procStatus(b *testing.B, pid int, key string) int64 {
	return statusField(b, fmt.Sprintf("/proc/%d/status", pid), key)
}

func procTaskStatus(b *testing.B, pid, tid int, key string) int64 {
	return statusField(b, fmt.Sprintf("/proc/%d/task/%d/status", pid, tid), key)
}

func statusField(b *testing.B, path, key string) int64 {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			f := strings.Fields(v)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n
		}
	}
	return 0
}

// enqueueRows returns the timestamps of the transcript's enqueue rows by
// content.
func enqueueRows(t testing.TB, path string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		row, err := transcriptfile.ParseRow([]byte(l))
		if err != nil || row.Type != transcriptfile.RowQueueOperation || row.Operation != transcriptfile.QueueEnqueue {
			continue
		}
		var c string
		json.Unmarshal(row.Content, &c)
		out[c] = append(out[c], row.Timestamp)
	}
	return out
}

// TestDoormanJSONStatusUnwritable: `doorman --json` does not drop the
// final status it cannot print (stdout is /dev/full, where every write
// fails): after a good run that is exit 1 and said on stderr; after a run
// that could not deliver here, the run's exit 3 stands and stderr says
// both.
func TestDoormanJSONStatusUnwritable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"a good run", []string{"doorman", "--allow-foreground", "--once", "--json"}, 1},
		{"not deliverable here", []string{"doorman", "--allow-foreground", "--once", "--json", "--session", "0badc0de-0000-4000-8000-000000000000"}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skipf("no /dev/full: %v", err)
			}
			defer full.Close()
			o := fakeowner.New(t, fakeowner.Options{})
			ctx := ctxT(t, 30*time.Second)
			cmd := command(ctx, t, nil, tt.args...)
			cmd.Stdout = full
			c := o.Start(cmd)
			c.Stdin.Close()
			code, _ := c.Wait(ctx)
			if code != tt.code || !strings.Contains(c.Stderr(), "doorman --json: the final status") || !strings.Contains(c.Stderr(), "no space left") {
				t.Errorf("exit %d, stderr %q; want exit %d and the status's write error on stderr", code, c.Stderr(), tt.code)
			}
		})
	}
}
