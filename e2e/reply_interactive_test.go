package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// slowConfirm gives the doorman 10 s (instead of 2 s) to see the TUI's
// enqueue row: on a loaded machine the TUI can take longer than 2 s to
// write it, and the doorman then holds the line back for its 30 s retry.
const slowConfirm = "OO_CLAUDE_DOOR_CONFIRM_S=10"

// TestInteractiveReplyIdle: the real TUI, idle; `send --reply 30` starts a
// turn and returns exactly the fake model's answer to it.
func TestInteractiveReplyIdle(t *testing.T) {
	t.Parallel()
	answer := "INTERACTIVE-ANSWER-" + uuid.NewString()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Text(answer)}})
	s := w.startInteractive(interactiveOpts{Env: []string{slowConfirm}})
	s.waitStatus(10*time.Second, "idle")
	rc, r := w.send(s.SessionID, "question "+uuid.NewString(), "--reply", "30")
	if r.code != 0 || str(rc, "class") != "delivered-start" {
		s.fatalf("send --reply 30: want delivered-start, exit 0\n%s", r)
	}
	if rep := replyOf(t, rc); rep == nil || rep["text"] != answer || rep["turn_ended"] != true {
		s.fatalf("reply %v, want exactly %q, the turn ended\n%s", rc["reply"], answer, r)
	}
}

// TestInteractiveReplyMidTurn: the real TUI in a turn whose model wrote
// text and then called a tool; a line sent meanwhile is absorbed when the
// tool round ends, and its reply is exactly the model's answer to the
// request that carried it, without the text written before.
func TestInteractiveReplyMidTurn(t *testing.T) {
	t.Parallel()
	before := "BEFORE-" + uuid.NewString()
	answer := "AFTER-" + uuid.NewString()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Reply{Text: before, ToolUse: &fakemodel.ToolUse{Name: "Bash", Input: map[string]any{"command": "sleep 3"}}},
		fakemodel.Text(answer)}})
	s := w.startInteractive(interactiveOpts{Args: []string{"--allowedTools", "Bash"}, Env: []string{slowConfirm}})
	prompt := "run the tool " + uuid.NewString()[:8]
	s.typeLine(prompt)
	s.waitModel(20*time.Second, "with the typed prompt", func(q *fakemodel.Request) bool {
		return !fakemodel.IsSideRequest(q) && q.MessagesContain(prompt)
	})
	s.waitTranscript(10*time.Second, "the Bash tool call", func(row map[string]any) bool {
		return row["type"] == "assistant" && strings.Contains(fmt.Sprint(row["message"]), "sleep 3")
	})
	line := "mid-turn question " + uuid.NewString()
	rc, r := w.send(s.SessionID, line, "--reply", "30")
	if r.code != 0 || str(rc, "class") != "delivered-steer" {
		s.fatalf("send --reply 30: want delivered-steer, exit 0\n%s", r)
	}
	if rep := replyOf(t, rc); rep == nil || rep["text"] != answer {
		s.fatalf("reply %v, want exactly %q (not the text before the line)\n%s", rc["reply"], answer, r)
	}
	if strings.Contains(r.stdout, before) {
		t.Errorf("the reply holds text written before the line: %s", r.stdout)
	}
}

// replySamplesEnv sets how many asks TestReplyLatency measures (default 5).
const replySamplesEnv = "OO_CLAUDE_E2E_REPLY_SAMPLES"

// TestReplyLatency measures, through the real TUI with an instant fake
// model, the wall time of `oo-claude send --reply 30` (a new process: its
// start-up, the append, the doorman's delivery and ack, the turn, the
// answer read from the transcript) into an idle session. It logs every
// sample and the median; BENCHMARKS.md records them.
func TestReplyLatency(t *testing.T) {
	t.Parallel()
	n := sampleCount(t, replySamplesEnv, 5)
	answers := []fakemodel.Reply{fakemodel.Text("warm")}
	for i := 1; i <= n; i++ {
		answers = append(answers, fakemodel.Text(fmt.Sprintf("answer %d", i)))
	}
	w := newWorld(t, fakemodel.Options{Replies: answers})
	s := w.startInteractive(interactiveOpts{Env: []string{slowConfirm}})
	// A first turn typed into the pane, so the transcript exists and the
	// samples measure a session in its steady state.
	s.typeLine("warm up")
	s.waitTranscript(30*time.Second, "the warm-up answer", func(row map[string]any) bool {
		return row["type"] == "assistant" && strings.Contains(fmt.Sprint(row["message"]), "warm")
	})
	var took []time.Duration
	for i := 1; i <= n; i++ {
		s.waitStatus(10*time.Second, "idle")
		time.Sleep(200 * time.Millisecond) // settled: the TUI's own writes are done
		rc, r := w.ooJSON([]string{"send", s.SessionID, fmt.Sprintf("ask %d %s", i, uuid.NewString()), "--from", "e2e", "--reply", "30", "--min-interval", "0"})
		if rep := replyOf(t, rc); r.code != 0 || rep == nil || rep["text"] != fmt.Sprintf("answer %d", i) {
			s.fatalf("ask %d: %s", i, r)
		}
		took = append(took, r.took)
		t.Logf("sample %d: send → reply printed %v (ack after %vs, then seen %vs, reply %vs after the ack)", i, r.took.Round(time.Millisecond), rc["waited_s"], rc["seen_s"], rc["reply_s"])
	}
	slices.Sort(took)
	t.Logf("send → reply printed: median %v of %d (min %v, max %v)", took[len(took)/2].Round(time.Millisecond), n, took[0].Round(time.Millisecond), took[n-1].Round(time.Millisecond))
}
