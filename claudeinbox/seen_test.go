package claudeinbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
)

// fakeWitness answers Mark and WaitSeen as scripted and records the calls.
type fakeWitness struct {
	markErr error
	seen    bool
	delay   time.Duration // how long WaitSeen takes when it sees the line
	err     error

	inboxPath   string
	mu          sync.Mutex
	inboxAtMark string   // the inbox when Mark was called
	marked      []string // session id, cwd
	waited      []string // path, msg_id
	from        int64
	wait        time.Duration
}

func (f *fakeWitness) Mark(sessionID, cwd string) (string, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.marked = append(f.marked, sessionID, cwd)
	b, _ := os.ReadFile(f.inboxPath)
	f.inboxAtMark = string(b)
	return "/projects/p/" + sessionID + ".jsonl", 1234, f.markErr
}

func (f *fakeWitness) WaitSeen(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (bool, error) {
	f.mu.Lock()
	f.waited, f.from, f.wait = append(f.waited, path, msgID), from, wait
	f.mu.Unlock()
	if f.seen {
		time.Sleep(f.delay)
	} else {
		time.Sleep(wait)
	}
	return f.seen, f.err
}

// TestSendSeen: with a SeenWait, a delivered line is proven by the Witness
// (marked before the append, waited for with the ack's msg_id); the class,
// and so the exit code, never changes; the receipt carries seen and seen_s.
func TestSendSeen(t *testing.T) {
	bad := errors.New("transcript unreadable")
	tests := []struct {
		name     string
		seenWait time.Duration
		witness  *fakeWitness
		doorman  *fakedoorman.Options
		class    claudeinbox.Class
		seen     string // the receipt's "seen"
		note     string // a fragment of the note; "" wants none
		err      error
		waited   bool
	}{
		{"not asked", 0, &fakeWitness{seen: true}, &fakedoorman.Options{}, claudeinbox.DeliveredSteer, "null", "", nil, false},
		{"seen", 2 * time.Second, &fakeWitness{seen: true, delay: 30 * time.Millisecond}, &fakedoorman.Options{}, claudeinbox.DeliveredSteer, "true", "", nil, true},
		{"seen, delivered-start", 2 * time.Second, &fakeWitness{seen: true}, &fakedoorman.Options{PeerStatus: station.StatusIdle}, claudeinbox.DeliveredStart, "true", "", nil, true},
		{"not seen in time", 200 * time.Millisecond, &fakeWitness{}, &fakedoorman.Options{}, claudeinbox.DeliveredSteer, "false", "not seen within 200ms", nil, true},
		{"transcript not watchable", 2 * time.Second, &fakeWitness{markErr: bad}, &fakedoorman.Options{}, claudeinbox.DeliveredSteer, "false", "cannot be watched", nil, false},
		{"witness fails", 2 * time.Second, &fakeWitness{err: bad}, &fakedoorman.Options{}, claudeinbox.DeliveredSteer, "false", "not seen", bad, true},
		{"queued: nothing to prove", 2 * time.Second, &fakeWitness{seen: true}, nil, claudeinbox.QueuedNoDoorman, "null", "no doorman heartbeat", nil, false},
		{"timeout: nothing to prove", 2 * time.Second, &fakeWitness{seen: true}, &fakedoorman.Options{NoAck: true}, claudeinbox.Timeout, "null", "no ack came", nil, false},
		{"refused by the doorman: nothing to prove", 2 * time.Second, &fakeWitness{seen: true}, &fakedoorman.Options{Refuse: inboxv1.ReasonNUL}, claudeinbox.Refused, "null", "refused", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.sender.SeenWait, w.sender.Witness = tt.seenWait, tt.witness
			if tt.class == claudeinbox.Timeout {
				w.sender.Wait = 200 * time.Millisecond
			}
			r := w.fs.AddSession(fakestation.Session{Name: "work-e9", CWD: "/home/u/proj"})
			tt.witness.inboxPath = w.fs.InboxPath(r.SessionID)
			if tt.doorman != nil {
				w.doorman(t, r.SessionID, *tt.doorman)
			}
			v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: "hello"})
			if tt.class == claudeinbox.Refused && errors.Is(err, claudeinbox.ErrRefused) {
				err = nil
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("Send error %v, want %v", err, tt.err)
			}
			var se *fs.PathError
			if tt.err != nil && (!errors.As(err, &se) || se.Op != "send seen") {
				t.Errorf("error %v is not an *fs.PathError of op send seen", err)
			}
			if v.Class != tt.class {
				t.Fatalf("class %s, want %s (note: %s)", v.Class, tt.class, v.Note)
			}
			row := receiptRows(t, w.fs.Paths.ReceiptsFile())[0]
			if got := string(row["seen"]); got != tt.seen {
				t.Errorf("receipt seen %s, want %s", got, tt.seen)
			}
			if (string(row["seen_s"]) == "null") != (tt.seen == "null") {
				t.Errorf("receipt seen_s %s with seen %s", row["seen_s"], row["seen"])
			}
			if (v.Seen == nil) != (tt.seen == "null") || (v.Seen != nil && *v.Seen != (tt.seen == "true")) {
				t.Errorf("verdict Seen %v, want %s", v.Seen, tt.seen)
			}
			if tt.note == "" && v.Note != "" || !strings.Contains(v.Note, tt.note) {
				t.Errorf("note %q, want one with %q", v.Note, tt.note)
			}
			f := tt.witness
			f.mu.Lock()
			defer f.mu.Unlock()
			if tt.seenWait > 0 && (len(f.marked) != 2 || f.marked[0] != r.SessionID || f.marked[1] != "/home/u/proj") {
				t.Errorf("Mark calls %q, want one for %s with the registry's cwd", f.marked, r.SessionID)
			}
			if tt.seenWait > 0 && f.inboxAtMark != "" {
				t.Errorf("Mark was called after the append (the inbox held %q)", f.inboxAtMark)
			}
			if (len(f.waited) > 0) != tt.waited {
				t.Fatalf("WaitSeen calls %q, want waited %v", f.waited, tt.waited)
			}
			if tt.waited {
				if f.waited[1] != v.MsgID || f.from != 1234 || f.wait != tt.seenWait || v.Transcript != f.waited[0] {
					t.Errorf("WaitSeen(%q, from %d, wait %v), want the mark's path and size, msg_id %s, wait %v", f.waited, f.from, f.wait, v.MsgID, tt.seenWait)
				}
				if string(row["seen"]) == "true" && v.SeenAfter < f.delay {
					t.Errorf("SeenAfter %v, shorter than the witness took (%v)", v.SeenAfter, f.delay)
				}
				if string(row["seen"]) == "false" && v.SeenAfter < tt.seenWait {
					t.Errorf("SeenAfter %v for a line not seen, want the whole wait %v", v.SeenAfter, tt.seenWait)
				}
				var secs float64
				json.Unmarshal(row["seen_s"], &secs)
				if d := time.Duration(secs * float64(time.Second)); d > v.SeenAfter || v.SeenAfter-d > time.Millisecond {
					t.Errorf("receipt seen_s %s, verdict SeenAfter %v", row["seen_s"], v.SeenAfter)
				}
			}
			// Where the wait started, for a reader of the reply later.
			wantOff, wantPath, wantT := "null", "null", int64(0)
			if tt.waited {
				wantOff, wantT = "1234", 1234
				b, _ := json.Marshal(f.waited[0])
				wantPath = string(b)
			}
			if got := string(row["transcript_offset"]); got != wantOff || v.TranscriptOffset != wantT {
				t.Errorf("receipt transcript_offset %s, verdict TranscriptOffset %d; want %s", got, v.TranscriptOffset, wantOff)
			}
			if got := string(row["transcript"]); got != wantPath {
				t.Errorf("receipt transcript %s, want %s", got, wantPath)
			}
		})
	}
}

func TestSendSeenBadOptions(t *testing.T) {
	tests := []struct {
		name     string
		seenWait time.Duration
		witness  claudeinbox.Witness
	}{
		{"negative", -time.Second, &fakeWitness{}},
		{"no witness", time.Second, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.sender.SeenWait, w.sender.Witness = tt.seenWait, tt.witness
			v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: w.session(t, "work-e9").SessionID, Line: "x"})
			if !errors.Is(err, claudeinbox.ErrBadOption) || v.Class != claudeinbox.Refused || v.Written {
				t.Errorf("%s written %v err %v, want refused, nothing written, ErrBadOption", v.Class, v.Written, err)
			}
		})
	}
}

// replyWitness is a fakeWitness that also answers WaitReply.
type replyWitness struct {
	fakeWitness
	reply      *receipt.Reply
	replyErr   error
	replyFrom  int64
	replyWait  time.Duration
	replyMsgID string
}

func (f *replyWitness) WaitReply(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (*receipt.Reply, error) {
	f.mu.Lock()
	f.replyFrom, f.replyWait, f.replyMsgID = from, wait, msgID
	f.mu.Unlock()
	if f.reply == nil {
		time.Sleep(wait)
	}
	return f.reply, f.replyErr
}

// TestSendReply: with a ReplyWait, a delivered line is seen and answered
// within the one budget; the verdict and the receipt carry the reply (or
// null and a note), and the class never changes.
func TestSendReply(t *testing.T) {
	answer := &receipt.Reply{Text: "PONG", Tools: []string{"Bash"}, StopReason: "end_turn", TurnEnded: true}
	tests := []struct {
		name    string
		witness *replyWitness
		reply   string // the receipt's reply, as JSON
		note    string
		err     error
	}{
		{"answered", &replyWitness{fakeWitness: fakeWitness{seen: true}, reply: answer}, `{"text":"PONG","tools":["Bash"],"stop_reason":"end_turn","turn_ended":true}`, "", nil},
		{"seen, not answered in time", &replyWitness{fakeWitness: fakeWitness{seen: true}}, "null", "has not finished answering", nil},
		{"not seen in time", &replyWitness{}, "null", "no reply within", nil},
		{"witness fails", &replyWitness{fakeWitness: fakeWitness{seen: true}, replyErr: errors.New("boom")}, "null", "", errors.New("boom")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.sender.ReplyWait, w.sender.Witness = 300*time.Millisecond, tt.witness
			r := w.fs.AddSession(fakestation.Session{Name: "work-e9", CWD: "/home/u/proj"})
			w.doorman(t, r.SessionID, fakedoorman.Options{})
			v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: "ping"})
			var se *fs.PathError
			if tt.err != nil && (!errors.As(err, &se) || se.Op != "send reply") || tt.err == nil && err != nil {
				t.Fatalf("Send error %v, want %v", err, tt.err)
			}
			if v.Class != claudeinbox.DeliveredSteer {
				t.Fatalf("class %s (note %s)", v.Class, v.Note)
			}
			row := receiptRows(t, w.fs.Paths.ReceiptsFile())[0]
			if got := string(row["reply"]); got != tt.reply {
				t.Errorf("receipt reply %s, want %s", got, tt.reply)
			}
			if string(row["reply_s"]) == "null" || string(row["seen"]) == "null" {
				t.Errorf("receipt reply_s %s seen %s: both must be set when a reply was asked for", row["reply_s"], row["seen"])
			}
			if tt.note != "" && !strings.Contains(v.Note, tt.note) || tt.note == "" && tt.err == nil && v.Note != "" {
				t.Errorf("note %q, want %q", v.Note, tt.note)
			}
			f := tt.witness
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.wait != 300*time.Millisecond {
				t.Errorf("seen wait %v, want the reply budget", f.wait)
			}
			if f.seen && (f.replyMsgID != v.MsgID || f.replyFrom != 1234 || f.replyWait > 300*time.Millisecond) {
				t.Errorf("WaitReply(from %d, %s, wait %v), want the mark's size, the ack's msg_id, what is left of the budget", f.replyFrom, f.replyMsgID, f.replyWait)
			}
			// About the budget on an idle machine; what is left of it is
			// checked above, this only catches a wait far past it.
			if v.ReplyAfter > 30*time.Second {
				t.Errorf("ReplyAfter %v: the budget is 300ms", v.ReplyAfter)
			}
		})
	}
	// A reply wait needs a ReplyWitness.
	w := newWorld(t)
	w.sender.ReplyWait, w.sender.Witness = time.Second, &fakeWitness{}
	if _, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: w.session(t, "work-e9").SessionID, Line: "x"}); !errors.Is(err, claudeinbox.ErrBadOption) {
		t.Errorf("a plain Witness with ReplyWait: %v, want ErrBadOption", err)
	}
}
