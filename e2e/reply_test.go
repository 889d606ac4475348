package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/transcript"
)

// replyOf is the receipt's reply object.
func replyOf(t *testing.T, rc map[string]any) map[string]any {
	t.Helper()
	m, _ := rc["reply"].(map[string]any)
	return m
}

// TestReplyMidTurn: `send --reply 30` into a busy -p session whose model
// wrote text before the line arrived (text + a tool call): the line is
// absorbed when the tool round ends, and the reply is exactly what the fake
// model answered to the request that carried the line, never the text
// written before it.
func TestReplyMidTurn(t *testing.T) {
	t.Parallel()
	before := "BEFORE-" + uuid.NewString()
	answer := "REPLY-" + uuid.NewString()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Reply{Text: before, ToolUse: &fakemodel.ToolUse{Name: "Bash", Input: map[string]any{"command": "sleep 4"}}},
		fakemodel.Text(answer)}})
	s := w.start(w.withDoorman(pargs("work, then answer", "--allowedTools", "Bash")...))
	first := s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))

	line := "question " + uuid.NewString()
	var size0 int64 // the transcript's size before the send; measured: -p writes none while its first tool runs
	if fi, err := os.Stat(w.transcriptPath(w.cwd, sid)); err == nil {
		size0 = fi.Size()
	}
	rc, r := w.send(sid, line, "--reply", "30")
	if r.code != 0 || str(rc, "class") != "delivered-steer" {
		s.fatalf("send --reply 30: want delivered-steer, exit 0\n%s", r)
	}
	carried := s.waitModel(30*time.Second, "with the line", func(q *fakemodel.Request) bool {
		return q.Seq > first.Seq && q.MessagesContain(line)
	})
	_ = carried
	rep := replyOf(t, rc)
	if rep == nil || rep["text"] != answer || rep["turn_ended"] != true || rep["stop_reason"] != "end_turn" {
		s.fatalf("reply %v, want exactly %q (the answer to the request that carried the line), turn ended\n%s", rc["reply"], answer, r)
	}
	if strings.Contains(r.stdout, before) {
		t.Errorf("the reply holds text written before the line: %s", r.stdout)
	}
	if secs, _ := rc["reply_s"].(float64); secs <= 0 || secs >= 30 || rc["seen"] != true {
		t.Errorf("reply_s %v seen %v", rc["reply_s"], rc["seen"])
	}
	// A program that reads the reply later starts where the wait did: the
	// receipt's transcript and transcript_offset (no earlier than where the
	// transcript ended before the send).
	off, ok := rc["transcript_offset"].(float64)
	if str(rc, "transcript") != w.transcriptPath(w.cwd, sid) || !ok || int64(off) < size0 {
		t.Errorf("receipt transcript %v at %v, want %s at %d or later", rc["transcript"], rc["transcript_offset"], w.transcriptPath(w.cwd, sid), size0)
	}
	if later, err := transcript.ReadReply(str(rc, "transcript"), str(rc, "msg_id"), transcript.ReplyOptions{From: int64(off)}); err != nil || later.Text != answer {
		t.Errorf("ReadReply from the receipt's transcript_offset: %+v, %v; want %q", later, err, answer)
	}
	// The human form prints the reply after the verdict line.
	s.mustSucceed(60 * time.Second)
}

// TestReplyStartsTurn: a line that reaches a -p session while its last
// model request runs (no tool round left to absorb it) is answered as the
// session's next turn, and `send --reply 30` prints exactly that turn's
// answer after the verdict line, not the first turn's.
func TestReplyStartsTurn(t *testing.T) {
	t.Parallel()
	answer := "SECOND-" + uuid.NewString()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 2"),
		fakemodel.Reply{Text: "first turn's answer", Delay: 5 * time.Second},
		fakemodel.Text(answer)}})
	s := w.start(w.withDoorman(pargs("work", "--allowedTools", "Bash")...))
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	last := s.waitModel(30*time.Second, "with the tool's result", func(q *fakemodel.Request) bool {
		return len(q.ToolResults()) > 0
	})
	line := "later question " + uuid.NewString()
	r := w.oo([]string{"send", sid, line, "--from", "e2e", "--reply", "30"})
	if r.code != 0 {
		s.fatalf("send --reply 30: exit %d\n%s", r.code, r)
	}
	out := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(out) != 2 || !strings.HasPrefix(out[0], "delivered-") || !strings.Contains(out[0], "replied after") || out[1] != answer {
		s.fatalf("stdout %q: want the verdict line, then exactly %q", r.stdout, answer)
	}
	s.waitModel(30*time.Second, "with the line as its own turn", func(q *fakemodel.Request) bool {
		return q.Seq > last.Seq && q.MessagesContain(line)
	})
	s.mustSucceed(60 * time.Second)
}

// watchProc is `oo-claude watch --json` running in the background.
type watchProc struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer
}

func (p *watchProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// events decodes what the watch printed so far.
func (p *watchProc) events(t *testing.T) []map[string]any {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(p.out.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("watch printed a line that is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// waitEvent waits until the watch printed an event matching match.
func (p *watchProc) waitEvent(t *testing.T, timeout time.Duration, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		for _, e := range p.events(t) {
			if match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("watch printed no %s within %v:\n%s", what, timeout, tail(p.out.String(), 4000))
		}
	}
}

func (w *world) watch() *watchProc {
	w.t.Helper()
	p := &watchProc{}
	p.cmd = exec.Command(ooClaude(w.t), "watch", "--json")
	p.cmd.Dir = w.cwd
	p.cmd.Env = w.env(w.knobEnv()...)
	p.cmd.Stdout = p
	if err := p.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	})
	return p
}

// TestWatchSteer: `oo-claude watch --json` running through a session's
// life shows, for one steered line, line-queued, line-delivered and
// line-seen with the receipt's msg_id, then turn-ended and session-ended,
// in that order; its cost events count its requests' tokens. Dollars come
// only from the cost-state row claude writes as it exits, after its
// registry row is gone: the watch has mostly ended the session by then, but
// it may read that row first, and then the last cost event is the row's
// figure, the result's total_cost_usd, with no tokens after it.
func TestWatchSteer(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 4"), fakemodel.Text("watched answer")}})
	wp := w.watch()
	time.Sleep(300 * time.Millisecond) // the watch is set up before the session starts
	s := w.start(w.withDoorman(pargs("wait for a steer", "--allowedTools", "Bash")...))
	s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	rc, r := w.send(sid, "watched "+uuid.NewString(), "--seen", "30")
	if r.code != 0 || rc["seen"] != true {
		s.fatalf("send --seen 30: %s", r)
	}
	msgID := str(rc, "msg_id")
	res := s.mustSucceed(60 * time.Second)
	wp.waitEvent(t, 15*time.Second, "session-ended", func(e map[string]any) bool {
		return e["event"] == "session-ended" && e["session"] == sid
	})
	var order []string
	var tokens float64
	var last map[string]any // the last cost event's cost
	for _, e := range wp.events(t) {
		if e["session"] != sid {
			continue
		}
		switch ev := e["event"].(string); ev {
		case "cost":
			last, _ = e["cost"].(map[string]any)
			if n, _ := last["tokens"].(float64); n > tokens {
				tokens = n
			}
		case "line-delivered", "line-seen":
			if e["msg_id"] != msgID {
				t.Errorf("%s with msg_id %v, want the receipt's %s", ev, e["msg_id"], msgID)
			}
			order = append(order, ev)
		case "line-queued", "turn-ended", "session-started", "session-ended":
			order = append(order, ev)
		}
	}
	want := "session-started line-queued line-delivered line-seen turn-ended session-ended"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("watch events of the session:\n got %s\nwant %s", got, want)
	}
	costOK := tokens > 0 && last != nil
	if costOK && last["usd"] != nil {
		costOK = last["usd"] == res["total_cost_usd"] && last["tokens"] == float64(0)
	}
	if !costOK {
		t.Errorf("the session's cost events: tokens up to %v, the last %v; want its requests' tokens, and no dollars or the result's total_cost_usd %v", tokens, last, res["total_cost_usd"])
	}
}

// TestWatchRider: a sub-agent run shows rider-started and rider-finished
// with the agent and the call's description, in order with the turns.
func TestWatchRider(t *testing.T) {
	t.Parallel()
	task := "watched rider task " + uuid.NewString()
	const desc = "e2e watched rider"
	handler := func(r *fakemodel.Request) fakemodel.Reply {
		sub := strings.Contains(firstUserText(r), task)
		done := len(r.ToolResults()) > 0
		switch {
		case sub && !done:
			return fakemodel.Bash("sleep 2")
		case sub:
			return fakemodel.Text("sub-agent done")
		case !done:
			name := "Agent"
			for _, n := range r.ToolNames() {
				if n == "Task" {
					name = n
				}
			}
			return fakemodel.Tool(name, map[string]any{"description": desc, "prompt": task, "subagent_type": "general-purpose"})
		default:
			return fakemodel.Text("all done")
		}
	}
	w := newWorld(t, fakemodel.Options{Handler: handler})
	wp := w.watch()
	time.Sleep(300 * time.Millisecond)
	s := w.start(pargs("use a sub-agent", "--allowedTools", "Bash"))
	sid := s.waitRow(30 * time.Second).SessionID
	started := wp.waitEvent(t, 40*time.Second, "rider-started", func(e map[string]any) bool {
		return e["event"] == "rider-started" && e["session"] == sid
	})
	finished := wp.waitEvent(t, 40*time.Second, "rider-finished", func(e map[string]any) bool {
		return e["event"] == "rider-finished" && e["session"] == sid
	})
	if started["agent"] == nil || started["agent"] != finished["agent"] || finished["description"] != desc {
		t.Errorf("rider-started %v, rider-finished %v: want the same agent, description %q", started, finished, desc)
	}
	s.mustSucceed(90 * time.Second)
	// A turn's rider events come before its turn-ended (issue 22: the main
	// answer can land before the rider's rows). Claude Code runs this agent
	// in the background: the turn that started it may end before it
	// finishes (its turn-ended then comes after rider-started), and the
	// turn that reads its result ends after rider-finished.
	wp.waitEvent(t, 15*time.Second, "session-ended", func(e map[string]any) bool {
		return e["event"] == "session-ended" && e["session"] == sid
	})
	var order []string
	for _, e := range wp.events(t) {
		if ev, _ := e["event"].(string); e["session"] == sid && (ev == "rider-started" || ev == "rider-finished" || ev == "turn-ended") {
			order = append(order, ev)
		}
	}
	got := strings.Join(order, " ")
	if got != "rider-started rider-finished turn-ended" && got != "rider-started turn-ended rider-finished turn-ended" {
		t.Errorf("watch events of the session: %s; want rider-started first and rider-finished before the last turn-ended", got)
	}
}
