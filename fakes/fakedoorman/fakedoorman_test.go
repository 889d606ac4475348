package fakedoorman_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakeowner"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
	"go.uber.org/goleak"
)

// TestMain lets the test binary play the real doorman for the conformance
// test (conformance_test.go).
func TestMain(m *testing.M) {
	if os.Getenv(realDoormanEnv) == "1" {
		os.Exit(runRealDoorman())
	}
	goleak.VerifyTestMain(m)
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // it ends at the event; generous for a loaded machine
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitAcked waits (a generous minute) for the doorman's n-th ack.
func waitAcked(t *testing.T, d *fakedoorman.Doorman, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.WaitAcked(ctx, n); err != nil {
		t.Fatalf("waiting for ack %d (%d written): %v", n, d.Acked(), err)
	}
}

// TestBeforeAck: BeforeAck is called with each delivered line's msg_id
// while its ack is not yet written; a refused line has none.
func TestBeforeAck(t *testing.T) {
	dir, sid := t.TempDir(), uuid.NewString()
	files := inboxv1.FilesFor(dir, sid)
	var ids []string
	var ackedBefore []int // the acks on disk when it was called
	var mu sync.Mutex
	d := fakedoorman.Start(t, dir, sid, fakedoorman.Options{BeforeAck: func(id string) {
		b, _ := os.ReadFile(files.Ack)
		mu.Lock()
		defer mu.Unlock()
		ids = append(ids, id)
		ackedBefore = append(ackedBefore, bytes.Count(b, []byte("\n")))
	}})
	for _, l := range []string{"one", "two"} {
		fsx.AppendLine(files.Inbox, []byte(l))
	}
	waitAcked(t, d, 2)
	d.Stop()
	var acks []string
	f, err := os.Open(files.Ack)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inbox.ScanAcks(f, 0, func(a inboxv1.Ack, _ int64) bool { acks = append(acks, a.MsgID); return true })
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(ids, acks) || !slices.Equal(ackedBefore, []int{0, 1}) {
		t.Errorf("BeforeAck got %v with %v acks written before each; the acks carry %v", ids, ackedBefore, acks)
	}

	dir, sid = t.TempDir(), uuid.NewString()
	files = inboxv1.FilesFor(dir, sid)
	var called atomic.Bool
	d = fakedoorman.Start(t, dir, sid, fakedoorman.Options{Refuse: inboxv1.ReasonSymlink, BeforeAck: func(string) { called.Store(true) }})
	fsx.AppendLine(files.Inbox, []byte("x"))
	waitAcked(t, d, 1)
	d.Stop()
	if called.Load() {
		t.Error("BeforeAck called for a refused line")
	}
}

// TestWaitAcked: WaitAcked returns once the n-th ack is written (woken by
// the ack itself), at once for acks already written, with ctx's error when
// ctx ends first, and with an error once the doorman stopped short of n.
func TestWaitAcked(t *testing.T) {
	dir, sid := t.TempDir(), uuid.NewString()
	files := inboxv1.FilesFor(dir, sid)
	d := fakedoorman.Start(t, dir, sid, fakedoorman.Options{})
	done := make(chan error, 1)
	go func() { done <- d.WaitAcked(context.Background(), 2) }()
	fsx.AppendLine(files.Inbox, []byte("[a 📡] one"))
	fsx.AppendLine(files.Inbox, []byte("[a 📡] two"))
	select {
	case err := <-done:
		if err != nil || d.Acked() < 2 {
			t.Fatalf("WaitAcked(2) = %v with %d acks", err, d.Acked())
		}
	case <-time.After(time.Minute):
		t.Fatalf("WaitAcked(2) did not return; %d acks written", d.Acked())
	}
	if err := d.WaitAcked(context.Background(), 1); err != nil {
		t.Errorf("WaitAcked for an ack already written: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.WaitAcked(ctx, 3); err != context.Canceled {
		t.Errorf("WaitAcked with an ended ctx: %v, want context.Canceled", err)
	}
	d.Stop()
	if err := d.WaitAcked(context.Background(), 3); err == nil {
		t.Error("WaitAcked on a stopped doorman short of n returned nil")
	}
	var zero fakedoorman.Doorman
	if err := zero.WaitAcked(context.Background(), 1); err == nil {
		t.Error("WaitAcked on a Doorman not made by Start returned nil")
	}
}

func acks(t *testing.T, path string) []inboxv1.Ack {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []inboxv1.Ack
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var a inboxv1.Ack
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// The fake writes what the contract says a doorman writes: a fresh
// heartbeat naming its session and its live pid, one ack per line (replayed
// lines too) with the line's sha256 and offset, and a stopped heartbeat at
// the end.
func TestContract(t *testing.T) {
	tests := []struct {
		name  string
		opts  fakedoorman.Options
		class inboxv1.AckClass
	}{
		{"busy", fakedoorman.Options{}, inboxv1.AckDeliveredSteer},
		{"idle", fakedoorman.Options{PeerStatus: station.StatusIdle}, inboxv1.AckDeliveredStart},
		{"refuse", fakedoorman.Options{Refuse: inboxv1.ReasonTooLong}, inboxv1.AckRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, sid := t.TempDir(), uuid.NewString()
			files := inboxv1.FilesFor(dir, sid)
			first, _ := fsx.AppendLine(files.Inbox, []byte("[a 📡] before the doorman"))
			d := fakedoorman.Start(t, dir, sid, tt.opts)
			h, fr := inbox.HeartbeatFreshness(files.Heartbeat, time.Now(), sid, func(pid int) bool { return (station.Proc{}).Alive(pid, "") })
			if !fr.Fresh || h.PID != os.Getpid() {
				t.Fatalf("heartbeat %+v not fresh: %+v", h, fr)
			}
			second, _ := fsx.AppendLine(files.Inbox, []byte("[a 📡] after"))
			waitAcked(t, d, 2)
			got := acks(t, files.Ack)
			for i, want := range []struct {
				line string
				off  int64
			}{{"[a 📡] before the doorman", first}, {"[a 📡] after", second}} {
				a := got[i]
				// A refused line went through no door: no msg_id, as the
				// real doorman's refusal has none.
				if !a.Matches(inbox.SHA256([]byte(want.line)), want.off) || a.Class != tt.class || a.SessionID != sid || (a.MsgID == "") != (tt.class == inboxv1.AckRefused) {
					t.Errorf("ack %d: %+v", i, a)
				}
				if tt.class == inboxv1.AckRefused && a.Reason != string(tt.opts.Refuse) {
					t.Errorf("refused without the reason: %+v", a)
				}
			}
			d.Stop()
			d.Stop()
			if d.Err() != nil {
				t.Fatal(d.Err())
			}
			h, fr = inbox.HeartbeatFreshness(files.Heartbeat, time.Now(), sid, nil)
			if fr.Fresh || h.State != inboxv1.StateStopped {
				t.Errorf("after Stop: %+v %+v", h, fr)
			}
		})
	}
}

func TestScriptedHeartbeats(t *testing.T) {
	other := uuid.NewString()
	tests := []struct {
		name   string
		opts   fakedoorman.Options
		reason inboxv1.Reason
	}{
		{"stale", fakedoorman.Options{Stale: true}, inboxv1.ReasonHeartbeatStale},
		{"other session", fakedoorman.Options{HeartbeatSession: other}, inboxv1.ReasonOtherSession},
		{"stopped", fakedoorman.Options{State: inboxv1.StateStopped}, inboxv1.ReasonDoormanState},
		{"dead pid", fakedoorman.Options{PID: fakedoorman.DeadPID()}, inboxv1.ReasonDoormanGone},
		{"none", fakedoorman.Options{NoHeartbeat: true}, inboxv1.ReasonHeartbeatMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, sid := t.TempDir(), uuid.NewString()
			fakedoorman.Start(t, dir, sid, tt.opts)
			_, fr := inbox.HeartbeatFreshness(inboxv1.FilesFor(dir, sid).Heartbeat, time.Now(), sid, func(pid int) bool { return (station.Proc{}).Alive(pid, "") })
			if fr.Fresh || fr.Reason != tt.reason {
				t.Errorf("freshness %+v, want not fresh because %s", fr, tt.reason)
			}
		})
	}
}

func TestNoAckAndDelay(t *testing.T) {
	dir, sid := t.TempDir(), uuid.NewString()
	files := inboxv1.FilesFor(dir, sid)
	d := fakedoorman.Start(t, dir, sid, fakedoorman.Options{NoAck: true})
	fsx.AppendLine(files.Inbox, []byte("x"))
	waitFor(t, "the line read", func() bool { return d.Read() == 1 })
	d.Stop()
	if _, err := os.Stat(files.Ack); err == nil {
		t.Error("NoAck wrote an ack")
	}

	dir, sid = t.TempDir(), uuid.NewString()
	files = inboxv1.FilesFor(dir, sid)
	d = fakedoorman.Start(t, dir, sid, fakedoorman.Options{AckDelay: 150 * time.Millisecond})
	start := time.Now()
	fsx.AppendLine(files.Inbox, []byte("x"))
	waitAcked(t, d, 1)
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("acked after %v, before the delay", el)
	}
	// Stop during a delay returns promptly.
	fsx.AppendLine(files.Inbox, []byte("y"))
	waitFor(t, "the line read", func() bool { return d.Read() == 2 })
	d.Stop()
	if strings.Count(readAll(t, files.Ack), "\n") != 1 {
		t.Error("an ack was written after Stop")
	}
}

func readAll(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// With a Transcript, a line is acked only once its enqueue row is there,
// and the ack's queued_at is the row's timestamp, as the real doorman's:
// an ack written when the door write returned could reach a sender (or a
// test reading the door's frames) before the receiver took the line. Here
// the door writes its rows elsewhere, so the row the fake waits for comes
// only when the test plants it.
func TestAckWaitsForTheEnqueueRow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := fakeowner.New(t, fakeowner.Options{})
	planted := filepath.Join(t.TempDir(), "transcript.jsonl")
	d := fakedoorman.Start(t, o.Station.Paths.InboxDir, o.SessionID(), fakedoorman.Options{Door: o.Door.Path(), Transcript: planted})
	o.Append("an untagged line")
	frames, err := o.Door.WaitFrames(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(o.Acks()); n != 0 {
		t.Fatalf("%d acks before the line's enqueue row", n)
	}
	const ts = "2001-02-03T04:05:06.789Z"
	row, _ := json.Marshal(map[string]string{"type": "queue-operation", "operation": "enqueue", "timestamp": ts, "sessionId": o.SessionID(), "content": frames[0].Content})
	if _, err := fsx.AppendLine(planted, row); err != nil {
		t.Fatal(err)
	}
	got, err := o.WaitAcks(ctx, 1)
	if err != nil {
		t.Fatalf("no ack after the enqueue row: %v (%v)", err, d.Err())
	}
	if a := got[0]; a.Confirm != inboxv1.ConfirmTranscript || a.QueuedAt == nil || *a.QueuedAt != ts {
		t.Errorf("ack confirm %q queued_at %v, want %q %q (the row's)", a.Confirm, a.QueuedAt, inboxv1.ConfirmTranscript, ts)
	}
	d.Stop()
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestOwnerPID: the heartbeat's owner_pid is this process by default and
// Options.OwnerPID when set, in every heartbeat (the stopped one too), so a
// test whose session has a registry row of its own can name the row's pid
// there, as a real doorman names its claude process.
func TestOwnerPID(t *testing.T) {
	for _, tt := range []struct {
		name      string
		owner     int
		wantOwner int
	}{{"default", 0, os.Getpid()}, {"set", 4242, 4242}} {
		t.Run(tt.name, func(t *testing.T) {
			dir, sid := t.TempDir(), uuid.NewString()
			files := inboxv1.FilesFor(dir, sid)
			d := fakedoorman.Start(t, dir, sid, fakedoorman.Options{OwnerPID: tt.owner})
			h, fr := inbox.HeartbeatFreshness(files.Heartbeat, time.Now(), sid, func(pid int) bool { return (station.Proc{}).Alive(pid, "") })
			if !fr.Fresh || h.PID != os.Getpid() || h.OwnerPID != tt.wantOwner {
				t.Fatalf("heartbeat pid %d owner_pid %d (fresh %v), want pid %d owner_pid %d", h.PID, h.OwnerPID, fr.Fresh, os.Getpid(), tt.wantOwner)
			}
			d.Stop()
			if h, _ = inbox.HeartbeatFreshness(files.Heartbeat, time.Now(), sid, nil); h.State != inboxv1.StateStopped || h.OwnerPID != tt.wantOwner {
				t.Errorf("stopped heartbeat: state %s owner_pid %d, want %s %d", h.State, h.OwnerPID, inboxv1.StateStopped, tt.wantOwner)
			}
		})
	}
}
