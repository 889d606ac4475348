package doorman_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/hostile"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
)

// deadlineClock is a clock whose timers fire in the order of their
// deadlines: advance moves the clock to the earliest one and fires every
// timer due then, as one wake-up of the process.
type deadlineClock struct {
	mu      sync.Mutex
	now     time.Time
	pending []deadlineTimer
	asked   chan struct{} // a timer was asked for
}

type deadlineTimer struct {
	at time.Time
	d  time.Duration
	c  chan time.Time
}

func newDeadlineClock() *deadlineClock {
	return &deadlineClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), asked: make(chan struct{}, 1)}
}

func (c *deadlineClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *deadlineClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := deadlineTimer{at: c.now.Add(d), d: d, c: make(chan time.Time, 1)}
	c.pending = append(c.pending, t)
	select {
	case c.asked <- struct{}{}:
	default:
	}
	return t.c
}

// advance fires the timers due at the earliest deadline and returns their
// durations; none when no timer is pending.
func (c *deadlineClock) advance() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	sort.Slice(c.pending, func(i, j int) bool { return c.pending[i].at.Before(c.pending[j].at) })
	at := c.pending[0].at
	c.now = at
	var fired []time.Duration
	for len(c.pending) > 0 && !c.pending[0].at.After(at) {
		c.pending[0].c <- at
		fired = append(fired, c.pending[0].d)
		c.pending = c.pending[1:]
	}
	return fired
}

// pendingCount is how many timers wait.
func (c *deadlineClock) pendingCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// realOwner is a session on the real /proc: the test process owns it (its
// registry row, its door), and the doorman's host is a real child of the
// test process (a sleeping process standing for the doorman), so the
// owner's exit and its registry files can be events.
type realOwner struct {
	fs    *fakestation.Station
	door  *fakedoor.Door
	row   station.Row
	child *exec.Cmd
	files inboxv1.Files
}

func newRealOwner(t *testing.T) *realOwner {
	t.Helper()
	fs := fakestation.New(t)
	d := fakedoor.New(t, fakedoor.Options{})
	sid := uuid.NewString()
	row := fs.AddSession(fakestation.Session{PID: os.Getpid(), SessionID: sid, Socket: d.Path(), Status: station.StatusBusy, CWD: fs.Root})
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		t.Skipf("no child process to stand for the doorman: %v", err)
	}
	t.Cleanup(func() {
		child.Process.Kill()
		child.Wait()
	})
	return &realOwner{fs: fs, door: d, row: row, child: child, files: inboxv1.FilesFor(fs.Paths.InboxDir, sid)}
}

func (o *realOwner) host(clk *deadlineClock) *doorman.Host {
	return &doorman.Host{
		Station: station.New(o.fs.Paths), Getenv: func(string) string { return "" },
		PID: o.child.Process.Pid, PPID: os.Getpid(), Now: clk.Now,
		Door: doorman.DoorDialer{Settle: door.NoSettle},
	}
}

// TestIdleDoormanWakesOncePerHeartbeat holds the idle cost: a doorman
// following an inbox with nothing to do wakes once a heartbeat interval
// (the contract's 5 s by default), writing the heartbeat once then and its
// safety poll riding on that wake-up: over a minute of its clock, 12
// wake-ups, all heartbeat timers, 12 heartbeat writes, no identity
// timer, and the inbox watch's goroutine never wakes (the heartbeat's own
// writes beside the inbox are no events of it). A change (a line
// delivered) writes the heartbeat at once, with no timer. Its clock is
// fake: the test waits for no timer.
func TestIdleDoormanWakesOncePerHeartbeat(t *testing.T) {
	o := newRealOwner(t)
	clk := newDeadlineClock()
	cfg := station.DefaultConfig(o.fs.Paths)
	cfg.DoorConfirm = 0 // acks on the settle: no transcript follow in real time
	every := cfg.DoormanHeartbeat
	if every != 5*time.Second || cfg.DoormanPoll != every {
		t.Fatalf("default heartbeat %v and poll %v, want both 5 s (the contract's interval)", every, cfg.DoormanPoll)
	}
	dm, wait := runIdleDoorman(t, o, clk, cfg)
	heartbeat := func() inboxv1.Heartbeat {
		h, _ := inbox.ReadHeartbeat(o.files.Heartbeat)
		return h
	}
	wait("following", func() bool { return heartbeat().State == inboxv1.StateFollowing })
	// Settled: the heartbeat's timer asked for and the loop asleep.
	start := clk.Now()
	// Asleep: every timer it had is asked for again, and the follow loop's
	// wake-ups stand still over five looks (a loaded machine delivers a
	// file event of the set-up late).
	settle := func(timers int) {
		t.Helper()
		last, still := int64(-1), 0
		deadline := time.Now().Add(30 * time.Second)
		for {
			n, p := dm.Wakeups(), clk.pendingCount()
			if n == last && p >= timers {
				if still++; still >= 5 {
					return
				}
			} else {
				still = 0
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for the doorman asleep at %v: %d timers asked for, want %d; wake-ups %d then %d; status %+v",
					clk.Now().Sub(start), p, timers, last, n, dm.Status())
			}
			last = n
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait("the heartbeat's timer", func() bool { return clk.pendingCount() >= 1 })
	settle(1)

	start = clk.Now()
	startWakeups, startWatch := dm.Wakeups(), dm.InboxWatchWakeups()
	var fired []time.Duration
	writes := 0
	for clk.Now().Sub(start) < time.Minute {
		n := clk.pendingCount()
		before := heartbeat().LastSeen
		f := clk.advance()
		if len(f) == 0 {
			t.Fatalf("no timer pending at %v", clk.Now().Sub(start))
		}
		fired = append(fired, f...)
		settle(n)
		if heartbeat().LastSeen != before {
			writes++
		}
	}
	if len(fired) != 12 || writes != 12 {
		t.Errorf("a minute idle: %d timers fired %v, %d heartbeat writes; want 12 of %v and 12", len(fired), fired, writes, every)
	}
	for _, d := range fired {
		if d != every {
			t.Errorf("an idle doorman's timer of %v: only the heartbeat's (%v) should wake it", d, every)
			break
		}
	}
	if n := dm.Wakeups() - startWakeups; n > 12 {
		t.Errorf("the follow loop woke %d times in an idle minute, want at most 12 (the heartbeat's beats)", n)
	}
	// The doorman's own writes beside the inbox (12 heartbeats, each a
	// temporary file written and renamed) are no events of the inbox
	// watch: its goroutine sleeps through the idle minute. (Watching the
	// directory, it woke for each of them, 12 times and more.)
	if n := dm.InboxWatchWakeups() - startWatch; n > 2 {
		t.Errorf("the inbox watch woke %d times in an idle minute of %d heartbeat writes, want none (at most 2): the doorman's own writes wake it", n, writes)
	}

	// A change is written at once: a line delivered is in the heartbeat
	// without any timer firing.
	now := clk.Now()
	if _, err := fsx.AppendLine(o.files.Inbox, []byte("[t 📡] hello")); err != nil {
		t.Fatal(err)
	}
	wait("the delivery in the heartbeat", func() bool { return heartbeat().Delivered == 1 })
	if clk.Now() != now {
		t.Errorf("the clock moved: a timer fired for the change")
	}
}

// TestIdentityOnChange: the doorman works its identity out again when the
// owner's registry files change, not on a timer: the row's status turned
// idle between two lines gives the second one's ack delivered-start, and
// the row's session id changed (/clear) switches the doorman to the new
// session's inbox, with no timer fired for either.
func TestIdentityOnChange(t *testing.T) {
	o := newRealOwner(t)
	clk := newDeadlineClock()
	cfg := station.DefaultConfig(o.fs.Paths)
	cfg.DoorConfirm = 0 // acks on the settle: no transcript follow in real time
	_, wait := runIdleDoorman(t, o, clk, cfg)
	heartbeat := func(files inboxv1.Files) inboxv1.Heartbeat {
		h, _ := inbox.ReadHeartbeat(files.Heartbeat)
		return h
	}
	wait("following", func() bool { return heartbeat(o.files).State == inboxv1.StateFollowing })
	acks := func() []inboxv1.Ack { return readAcks(t, o.files.Ack) }
	send := func(line string) {
		t.Helper()
		if _, err := fsx.AppendLine(o.files.Inbox, []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	now := clk.Now()
	send("[a 📡] while busy")
	wait("the first ack", func() bool { return len(acks()) == 1 })
	o.fs.SetStatus(o.row.PID, station.StatusIdle)
	send("[b 📡] now idle")
	wait("the second ack", func() bool { return len(acks()) == 2 })
	if a := acks(); a[0].Class != inboxv1.AckDeliveredSteer || a[1].Class != inboxv1.AckDeliveredStart {
		t.Errorf("acks %s then %s, want delivered-steer then delivered-start (the row's status as it changed)", a[0].Class, a[1].Class)
	}

	// /clear: the same owner, another session id.
	r, err := station.ReadRow(o.fs.Paths.SessionsDir + "/" + strconv.Itoa(o.row.PID) + ".json")
	if err != nil {
		t.Fatal(err)
	}
	r.SessionID = uuid.NewString()
	o.fs.WriteRow(r)
	next := inboxv1.FilesFor(o.fs.Paths.InboxDir, r.SessionID)
	wait("the switch to the new session's inbox", func() bool {
		return heartbeat(o.files).State == inboxv1.StateSwitched && heartbeat(next).State == inboxv1.StateFollowing
	})
	if clk.Now() != now {
		t.Errorf("a timer fired (the clock moved %v): the identity was re-checked on a timer, not on the change", clk.Now().Sub(now))
	}
}

// runIdleDoorman runs an MCP doorman for o on clk's timers until the test
// ends, and returns it with a wait for a condition another process or
// goroutine makes true (polled, with a 30 s backstop).
func runIdleDoorman(t *testing.T, o *realOwner, clk *deadlineClock, cfg station.Config) (*doorman.Doorman, func(what string, ok func() bool)) {
	t.Helper()
	dm := doorman.New(doorman.Options{Host: o.host(clk), Config: cfg, Mode: doorman.ModeMCP, After: clk.After, Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dm.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	wait := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s; status %+v", what, dm.Status())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return dm, wait
}

// TestRealClockHeartbeatIsATimerfd: on the real clock (no After seam) an
// idle doorman's one timer, the heartbeat's interval, is a timerfd
// (fsx.Ticker), not a runtime timer: a runtime timer's due time also
// wakes the runtime's monitor thread, which then spins in 20 µs sleeps
// until the poller, woken by the kernel up to 0.1% of the interval late,
// runs the beat (an idle doorman process measured 219 wake-ups a minute
// with it, 81 without). The timerfd is closed when the doorman stops.
func TestRealClockHeartbeatIsATimerfd(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("timerfd is Linux's")
	}
	o := newRealOwner(t)
	cfg := station.DefaultConfig(o.fs.Paths)
	before := hostile.OpenFDs(t, hostile.TimerFD)
	host := o.host(newDeadlineClock())
	host.Now = nil // the real clock
	dm := doorman.New(doorman.Options{Host: host, Config: cfg, Mode: doorman.ModeMCP, Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dm.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, _ := inbox.ReadHeartbeat(o.files.Heartbeat)
		if h.State == inboxv1.StateFollowing {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("not following after 30 s: %+v", dm.Status())
		}
		time.Sleep(2 * time.Millisecond)
	}
	// The heartbeat loop arms its ticker on a goroutine of its own, which
	// may come after the first heartbeat says following.
	n := hostile.OpenFDs(t, hostile.TimerFD)
	for n < before+1 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
		n = hostile.OpenFDs(t, hostile.TimerFD)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n != before+1 {
		t.Errorf("%d timerfds open while following, %d before: want the heartbeat's one", n, before)
	}
	if after := hostile.OpenFDs(t, hostile.TimerFD); after != before {
		t.Errorf("%d timerfds open after the doorman stopped, %d before", after, before)
	}
}

// TestCaughtUpDropsTheTranscriptWatch: a doorman that has handled its
// last line lets the line's transcript watch go without waiting for the
// kernel to retire it (closing an inotify instance that held a watch
// waits out a grace period: up to 25 ms measured), so a line appended
// meanwhile is not held behind that close before its door write. No Waker
// is closed with Close between the doorman's catching up before the line
// and after it; the watch is still released (no inotify descriptor is
// left once the doorman stops). Not parallel: it counts the process's
// Close calls and inotify descriptors.
func TestCaughtUpDropsTheTranscriptWatch(t *testing.T) {
	w := newWorld(t)
	sid := w.owned("busy")
	// Each catch-up reports how many lines the doorman had delivered by
	// then, so one before the line (at the start, or a heartbeat's
	// wake-up) is not taken for the one after it.
	var dm atomic.Pointer[doorman.Doorman]
	caughtUp := make(chan int, 64)
	report := func() {
		n := 0
		if d := dm.Load(); d != nil {
			n = d.Status().Delivered
		}
		select {
		case caughtUp <- n:
		default: // never blocks the doorman
		}
	}
	inotify := hostile.OpenFDs(t, hostile.InotifyFD)
	d, _, stop := w.running(doorman.WithCaughtUp(doorman.Options{}, report))
	dm.Store(d)
	wait := func(what string, delivered int) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case n := <-caughtUp:
				if n >= delivered {
					return
				}
			case <-timeout:
				t.Fatalf("the doorman did not catch up %s", what)
			}
		}
	}
	wait("at its start", 0)
	closes := fsx.WaitedCloses()
	w.appendLine(sid, "[mama 📡] one line")
	if a := w.waitAcks(sid, 1); a[0].Confirm != inboxv1.ConfirmTranscript {
		t.Fatalf("ack %+v: want one confirmed on the transcript (the watch this test is about)", a[0])
	}
	wait("after the line", 1)
	if got := fsx.WaitedCloses() - closes; got != 0 {
		t.Errorf("the doorman closed %d Wakers with Close between catching up before the line and after it, want 0: it drops the transcript watch", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// The dropped watch's descriptor is closed on a goroutine of its own:
	// wait for the count to come back (the kernel's grace period), bounded.
	deadline := time.Now().Add(20 * time.Second)
	for hostile.OpenFDs(t, hostile.InotifyFD) != inotify {
		if time.Now().After(deadline) {
			t.Fatalf("%d inotify descriptors after the doorman stopped, %d before it started", hostile.OpenFDs(t, hostile.InotifyFD), inotify)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
