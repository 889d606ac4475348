package fakesession_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakesession"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/transcript"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sender(s *fakesession.Session, wait time.Duration) *claudeinbox.Sender {
	return &claudeinbox.Sender{
		Station: s.Station.Station(), Wait: 5 * time.Second,
		ReplyWait: wait, Witness: transcript.Witness{ProjectsDir: s.Station.Paths.ProjectsDir},
	}
}

// TestAskAndAnswer: a program asks a fake session a question through the
// real sender and gets the scripted answer, for an idle session (the line
// starts a turn) and a busy one (the line is absorbed mid-turn).
func TestAskAndAnswer(t *testing.T) {
	for _, busy := range []bool{false, true} {
		s := fakesession.Start(t, fakesession.Options{Busy: busy, Answer: func(line string) fakesession.Turn {
			return fakesession.Turn{Tools: []string{"Bash"}, Text: "answer to: " + line}
		}})
		v, err := sender(s, 10*time.Second).Send(context.Background(), claudeinbox.Request{Target: s.SessionID(), Line: "what is the status?", From: "mama"})
		if err != nil {
			t.Fatal(err)
		}
		want := claudeinbox.DeliveredStart
		if busy {
			want = claudeinbox.DeliveredSteer
		}
		if v.Class != want || v.Seen == nil || !*v.Seen || v.Reply == nil {
			t.Fatalf("busy %v: class %s seen %v reply %v (note %s)", busy, v.Class, v.Seen, v.Reply, v.Note)
		}
		// The ack rests on the door's enqueue row, as the real doorman's.
		if v.Confirm != inboxv1.ConfirmTranscript || v.QueuedAt == "" {
			t.Errorf("busy %v: confirm %q queued_at %q, want %q and a time", busy, v.Confirm, v.QueuedAt, inboxv1.ConfirmTranscript)
		}
		got := *v.Reply
		got.At = time.Time{}
		if diff := cmp.Diff(receipt.Reply{Text: "answer to: [mama 📡] what is the status?", Tools: []string{"Bash"}, StopReason: "end_turn", TurnEnded: true}, got); diff != "" {
			t.Errorf("busy %v: reply (-want +got):\n%s", busy, diff)
		}
		if err := s.Err(); err != nil {
			t.Error(err)
		}
	}
}

// TestDefaultsOnDisk: the zero Options give a session whose project
// directory exists (headless.Runner.Resume refuses a recorded cwd that does
// not), named after it.
func TestDefaultsOnDisk(t *testing.T) {
	s := fakesession.Start(t, fakesession.Options{})
	fi, err := os.Stat(s.Row.CWD)
	if err != nil || !fi.IsDir() {
		t.Fatalf("the default cwd %s: %v (a directory: %v)", s.Row.CWD, err, err == nil && fi.IsDir())
	}
	if !strings.HasPrefix(s.Row.CWD, s.Station.Root+string(filepath.Separator)) {
		t.Errorf("the default cwd %s is outside the station %s", s.Row.CWD, s.Station.Root)
	}
	if !strings.HasPrefix(s.Row.Name, filepath.Base(s.Row.CWD)+"-") {
		t.Errorf("name %q is not derived from the cwd %s", s.Row.Name, s.Row.CWD)
	}
}

// readRows reads a JSONL file into objects.
func readRows(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

// kind names a row the way the comparison pairs them.
func kind(r map[string]any) string {
	k, _ := r["type"].(string)
	if op, ok := r["operation"].(string); ok {
		k += "/" + op
	}
	if a, ok := r["attachment"].(map[string]any); ok {
		k += "/" + a["type"].(string)
	}
	if m, ok := r["message"].(map[string]any); ok {
		switch c := m["content"].(type) {
		case []any:
			if b, ok := c[0].(map[string]any); ok {
				k += "/" + b["type"].(string)
			}
		case string:
			if r["origin"] != nil {
				k += "/peer"
			} else {
				k += "/prompt"
			}
		}
	}
	return k
}

func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestRowsLikeReal: every row the fake writes has the keys of its kind of
// row in the transcripts the real CLI wrote (testdata/real), at the top and
// in attachment, message and origin.
func TestRowsLikeReal(t *testing.T) {
	real := map[string]map[string]any{}
	for _, f := range []string{"steer-next-and-later.jsonl", "steered-turn.jsonl"} {
		for _, r := range readRows(t, filepath.Join("..", "..", "transcript", "testdata", "real", f)) {
			if _, ok := real[kind(r)]; !ok {
				real[kind(r)] = r
			}
		}
	}
	var fake []map[string]any
	for _, busy := range []bool{false, true} {
		s := fakesession.Start(t, fakesession.Options{Busy: busy, Answer: func(string) fakesession.Turn {
			return fakesession.Turn{Tools: []string{"Bash"}, Text: "done"}
		}})
		if _, err := sender(s, 10*time.Second).Send(context.Background(), claudeinbox.Request{Target: s.SessionID(), Line: "go"}); err != nil {
			t.Fatal(err)
		}
		fake = append(fake, readRows(t, s.Transcript)...)
	}
	kinds := map[string]bool{}
	for _, r := range fake {
		k := kind(r)
		kinds[k] = true
		want, ok := real[k]
		if !ok {
			t.Errorf("the fake writes a %s row, which the real transcripts do not have", k)
			continue
		}
		if diff := cmp.Diff(keysOf(want), keysOf(r)); diff != "" {
			t.Errorf("%s row keys (-real +fake):\n%s", k, diff)
		}
		for _, sub := range []string{"attachment", "origin"} {
			if diff := cmp.Diff(keysOf(want[sub]), keysOf(r[sub])); diff != "" {
				t.Errorf("%s row %s keys (-real +fake):\n%s", k, sub, diff)
			}
		}
		if diff := cmp.Diff(keysOf(want["message"]), keysOf(r["message"])); diff != "" {
			t.Errorf("%s row message keys (-real +fake):\n%s", k, diff)
		}
		if a, ok := r["attachment"].(map[string]any); ok {
			if diff := cmp.Diff(keysOf(want["attachment"].(map[string]any)["origin"]), keysOf(a["origin"])); diff != "" {
				t.Errorf("%s attachment origin keys (-real +fake):\n%s", k, diff)
			}
		}
	}
	for _, k := range []string{"queue-operation/enqueue", "queue-operation/dequeue", "user/peer", "attachment/queued_command", "queue-operation/remove", "assistant/tool_use", "user/tool_result", "assistant/text"} {
		if !kinds[k] {
			t.Errorf("the fake wrote no %s row", k)
		}
	}
}

// TestWatchSeesSessionsAndRiders: observatory.Watch sees a fake session
// start, its line's life, its rider come and go, and the session end.
func TestWatchSeesSessionsAndRiders(t *testing.T) {
	s := fakesession.Start(t, fakesession.Options{Answer: func(string) fakesession.Turn {
		return fakesession.Turn{Rider: &fakesession.Rider{Description: "look around", Text: "found it", Delay: 100 * time.Millisecond}, Text: "all done"}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := observatory.Watch(ctx, observatory.WatchOptions{Station: s.Station.Station()})
	if err != nil {
		t.Fatal(err)
	}
	v, err := sender(s, 10*time.Second).Send(context.Background(), claudeinbox.Request{Target: s.SessionID(), Line: "use a rider"})
	if err != nil || v.Reply == nil || v.Reply.Text != "all done" || strings.Join(v.Reply.Tools, ",") != "Agent" {
		t.Fatalf("send: %v reply %+v", err, v.Reply)
	}
	s.Stop()
	var (
		got    []string
		tokens int64
	)
	deadline := time.After(60 * time.Second)
	for done := false; !done; {
		select {
		case e := <-ch:
			if e.Session != s.SessionID() {
				continue
			}
			switch e.Event {
			case observatory.EventStatus, observatory.EventDoorman: // busy and idle may come as one change
			case observatory.EventCost: // after the rows that moved it, in no fixed place among the others
				tokens = e.Cost.Tokens
			default:
				got = append(got, string(e.Event))
			}
			if e.Event == observatory.EventRiderStarted && (e.Agent == "" || e.Description != "look around") {
				t.Errorf("rider-started %+v", e)
			}
			done = e.Event == observatory.EventSessionEnded
		case <-deadline:
			t.Fatalf("no session-ended within 60s; got %v", got)
		}
	}
	cancel()
	for range ch {
	}
	want := "session-started line-queued line-delivered line-seen rider-started rider-finished turn-ended session-ended"
	if strings.Join(got, " ") != want {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if tokens <= 0 {
		t.Errorf("the session's cost events told %d tokens; want its answer's usage", tokens)
	}
}

// TestLaterIsItsOwnTurn: a later line into a busy fake session is answered
// by a turn of its own (the peer user row), and its reply is that turn's.
func TestLaterIsItsOwnTurn(t *testing.T) {
	s := fakesession.Start(t, fakesession.Options{Busy: true, Answer: func(line string) fakesession.Turn {
		return fakesession.Turn{Text: "later answer"}
	}})
	v, err := sender(s, 10*time.Second).Send(context.Background(), claudeinbox.Request{Target: s.SessionID(), Line: "when you are done", Priority: inboxv1.PriorityLater})
	if err != nil || v.Reply == nil || v.Reply.Text != "later answer" || v.Priority != "later" {
		t.Fatalf("send: %v, priority %s reply %+v", err, v.Priority, v.Reply)
	}
	for _, r := range readRows(t, s.Transcript) {
		if k := kind(r); k == "attachment/queued_command" {
			t.Errorf("a later line was absorbed mid-turn: %v", r)
		}
	}
}
