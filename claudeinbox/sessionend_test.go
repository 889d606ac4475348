package claudeinbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
)

// waitingWitness is a ReplyWitness whose waits end only with their
// context (or the line is seen at once, when seen is set); began is told
// when a wait that blocks has begun.
type waitingWitness struct {
	seen  bool
	began chan string // "seen" or "reply"
}

func newWaitingWitness(seen bool) *waitingWitness {
	return &waitingWitness{seen: seen, began: make(chan string, 2)}
}

func (f *waitingWitness) Mark(sessionID, cwd string) (string, int64, error) {
	return "/projects/p/" + sessionID + ".jsonl", 1234, nil
}

func (f *waitingWitness) WaitSeen(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (bool, error) {
	if f.seen {
		return true, nil
	}
	f.began <- "seen"
	<-ctx.Done()
	return false, ctx.Err()
}

func (f *waitingWitness) WaitReply(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (*receipt.Reply, error) {
	f.began <- "reply"
	<-ctx.Done()
	return nil, ctx.Err()
}

// sigCause is a context cause that names a signal, as the CLI's does.
type sigCause struct{ s os.Signal }

func (c sigCause) Error() string     { return c.s.String() + " signal received" }
func (c sigCause) Signal() os.Signal { return c.s }
func (c sigCause) Is(err error) bool { return err == context.Canceled }

// await blocks until the witness's wait began (it runs on a goroutine of
// its own: it reports, it does not end the test).
func await(t *testing.T, f *waitingWitness, want string) bool {
	t.Helper()
	select {
	case got := <-f.began:
		if got != want {
			t.Errorf("the %s wait began, want the %s wait", got, want)
			return false
		}
		return true
	case <-time.After(time.Minute):
		t.Errorf("the %s wait never began", want)
		return false
	}
}

// TestSendInterruptedWait: a context cancelled during the seen or the
// reply wait returns the verdict so far with ctx's error: the class stays
// delivered, the note and the receipt say interrupted (naming the signal
// of the cause), never a timeout.
func TestSendInterruptedWait(t *testing.T) {
	for _, tt := range []struct {
		name        string
		reply, seen bool
		wait        string
		note        string
	}{
		{"seen wait", false, false, "seen", "the transcript has no row with its msg_id yet"},
		{"reply wait, not seen", true, false, "seen", "the transcript has no row with its msg_id yet"},
		{"reply wait, seen", true, true, "reply", "had not finished answering"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			f := newWaitingWitness(tt.seen)
			w.sender.Witness = f
			if tt.reply {
				w.sender.ReplyWait = time.Hour
			} else {
				w.sender.SeenWait = time.Hour
			}
			r := w.fs.AddSession(fakestation.Session{Name: "work-e9", CWD: "/home/u/proj"})
			w.doorman(t, r.SessionID, fakedoorman.Options{})
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			go func() {
				await(t, f, tt.wait)
				cancel(sigCause{syscall.SIGINT})
			}()
			v, err := w.sender.Send(ctx, claudeinbox.Request{Target: r.SessionID, Line: "ping"})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Send error %v, want context.Canceled", err)
			}
			if v.Class != claudeinbox.DeliveredSteer || v.MsgID == "" {
				t.Fatalf("class %s msg_id %q: an interrupted wait keeps the ack's class", v.Class, v.MsgID)
			}
			if v.WaitEnd != inboxv1.ReasonInterrupted || v.InterruptedBy != "SIGINT" {
				t.Errorf("wait end %q interrupted by %q, want interrupted by SIGINT", v.WaitEnd, v.InterruptedBy)
			}
			if !strings.HasPrefix(v.Note, "interrupted (SIGINT) ") || strings.Contains(v.Note, "within") || !strings.Contains(v.Note, tt.note) {
				t.Errorf("note %q: want it interrupted, with %q, never a timeout", v.Note, tt.note)
			}
			if (v.Seen == nil || *v.Seen != tt.seen) || v.Reply != nil {
				t.Errorf("seen %v reply %v, want seen %v and no reply", v.Seen, v.Reply, tt.seen)
			}
			row := receiptRows(t, w.fs.Paths.ReceiptsFile())[0]
			for k, want := range map[string]string{"class": `"delivered-steer"`, "delivered": "true", "interrupted": `"SIGINT"`, "wait_end": `"interrupted"`, "seen": strconv.FormatBool(tt.seen)} {
				if got := string(row[k]); got != want {
					t.Errorf("receipt %s = %s, want %s", k, got, want)
				}
			}
		})
	}
}

// TestSendWaitEndsWithTheSession: a session that ends during the seen or
// reply wait ends the wait at once (not when the wait runs out), with the
// outcome session-ended, a nil error and the class the ack said: its
// process killed (the registry row left behind, as after a SIGKILL), its
// row removed (the process still there), or its row naming another
// session (/clear).
func TestSendWaitEndsWithTheSession(t *testing.T) {
	for _, tt := range []struct {
		name  string
		seen  bool
		pid   bool // the session's process is the test's (alive to the end)
		end   func(w *world, r station.Row)
		why   string
		wait  string
		reply bool
	}{
		{"process killed, not seen", false, false, func(w *world, r station.Row) { w.fs.Crash(r.PID) }, "its process %d exited", "seen", true},
		{"process killed, seen", true, false, func(w *world, r station.Row) { w.fs.Crash(r.PID) }, "its process %d exited", "reply", true},
		{"process killed, seen wait", false, false, func(w *world, r station.Row) { w.fs.Crash(r.PID) }, "its process %d exited", "seen", false},
		{"row removed", false, true, func(w *world, r station.Row) { w.fs.RemoveSession(r.PID) }, "its registry row is gone", "seen", true},
		{"row names another session", true, true, func(w *world, r station.Row) {
			r.SessionID = uuid.NewString()
			w.fs.WriteRow(r)
		}, "its process now runs session", "reply", true},
		// A stopped doorman alone is no end (its heartbeat only wakes the
		// check); one that says the session switched is.
		{"doorman stopped, then switched", true, true, func(w *world, r station.Row) {
			w.doormen[r.SessionID].Stop()
			hb := w.fs.InboxPath(r.SessionID) + ".doorman.json"
			b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "session_id": r.SessionID, "state": "switched", "last_seen": time.Now().UTC().Format(time.RFC3339Nano)})
			os.WriteFile(hb+".tmp", b, 0o600)
			os.Rename(hb+".tmp", hb)
		}, "its doorman says it switched to another session", "reply", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			f := newWaitingWitness(tt.seen)
			w.sender.Witness = f
			const budget = time.Hour
			if tt.reply {
				w.sender.ReplyWait = budget
			} else {
				w.sender.SeenWait = budget
			}
			s := fakestation.Session{Name: "work-e9", CWD: "/home/u/proj"}
			if tt.pid {
				s.PID = livePID(t)
			}
			r := w.fs.AddSession(s)
			w.doormen = map[string]*fakedoorman.Doorman{r.SessionID: w.doorman(t, r.SessionID, fakedoorman.Options{})}
			ended := make(chan time.Time, 1)
			go func() {
				if await(t, f, tt.wait) {
					ended <- time.Now()
					tt.end(w, r)
				}
			}()
			v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: "ping"})
			after := time.Since(<-ended)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			// Generous for a loaded machine: the point is that the wait
			// (an hour) did not run out.
			if after > 20*time.Second {
				t.Errorf("the wait ended %v after the session", after)
			}
			t.Logf("the wait ended %v after the session", after)
			if v.Class != claudeinbox.DeliveredSteer {
				t.Fatalf("class %s: the session's end keeps the ack's class", v.Class)
			}
			why := strings.Replace(tt.why, "%d", strconv.Itoa(r.PID), 1)
			if v.WaitEnd != inboxv1.ReasonSessionEnded || v.InterruptedBy != "" {
				t.Errorf("wait end %q interrupted by %q, want session-ended", v.WaitEnd, v.InterruptedBy)
			}
			if !strings.HasPrefix(v.Note, "the session ended ("+why) || strings.Contains(v.Note, "within") {
				t.Errorf("note %q, want the session's end (%s), never a timeout", v.Note, why)
			}
			row := receiptRows(t, w.fs.Paths.ReceiptsFile())[0]
			if got := string(row["wait_end"]); got != `"session-ended"` || string(row["interrupted"]) != "null" {
				t.Errorf("receipt wait_end %s interrupted %s", got, row["interrupted"])
			}
			var secs float64
			json.Unmarshal(row["seen_s"], &secs)
			if d := time.Duration(secs * float64(time.Second)); d >= budget {
				t.Errorf("seen_s %s: the whole wait", row["seen_s"])
			}
		})
	}
}
