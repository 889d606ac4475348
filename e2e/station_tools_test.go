package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestStationSendTool: session A's model calls its doorman's station_send
// for session B, both real Claude Code sessions with the real doorman. The
// fake model scripts the tool_use directly, with tool search on (Claude
// Code 2.1.332 defers MCP tools behind ToolSearch: the first request does
// not list them); the test logs whether the tool was offered. B's
// transcript has the enqueue row of the line, tagged with A's origin; A's
// tool result (in its next request) is the verdict, delivered-* with
// confirm "transcript" and, with the reply wait, B's answer.
func TestStationSendTool(t *testing.T) {
	t.Parallel()
	const tool = "mcp__claude-inbox__station_send"
	const promptA, promptB = "station send to the peer", "wait for the peer"
	line := "hello from A " + uuid.NewString()
	var mu sync.Mutex
	bSID := ""
	w := newWorld(t, fakemodel.Options{Handler: func(q *fakemodel.Request) fakemodel.Reply {
		mu.Lock()
		target := bSID
		mu.Unlock()
		switch {
		case q.MessagesContain(promptB) && q.MessagesContain(line):
			return fakemodel.Text("B's answer")
		case q.MessagesContain(promptB) && len(q.ToolResults()) == 0:
			return fakemodel.Bash("python3 -c 'import time; time.sleep(20)'")
		case q.MessagesContain(promptA) && len(q.ToolResults()) == 0:
			return fakemodel.Tool(tool, map[string]any{"target": target, "line": line, "reply_s": 60})
		}
		return fakemodel.Text("done")
	}})
	b := w.start(w.withDoorman(pargs(promptB, "--allowedTools", "Bash")...))
	b.waitModel(30*time.Second, "B's first time", func(q *fakemodel.Request) bool { return q.MessagesContain(promptB) })
	row := b.waitRow(30 * time.Second)
	mu.Lock()
	bSID = row.SessionID
	mu.Unlock()
	b.waitHeartbeat(row.SessionID, 15*time.Second, "B's following doorman", following(row.SessionID))

	a := w.start(w.withDoorman(pargs(promptA, "--allowedTools", tool)...))
	first := a.waitModel(30*time.Second, "A's first time", func(q *fakemodel.Request) bool { return q.MessagesContain(promptA) })
	aRow := a.waitRow(30 * time.Second)
	offered := false
	for _, n := range first.ToolNames() {
		offered = offered || n == tool
	}
	t.Logf("tool search on: %s offered in A's first request: %v (tools: %d)", tool, offered, len(first.ToolNames()))
	a.mustSucceed(90 * time.Second)

	var result *fakemodel.Block
	for _, q := range w.model.Requests() {
		if !q.MessagesContain(promptA) {
			continue
		}
		if r := q.ToolResults(); len(r) > 0 {
			result = &r[0]
		}
	}
	if result == nil {
		t.Fatal("A's model got no tool result")
	}
	text := result.Text
	for _, c := range result.Content {
		text += c.Text
	}
	t.Logf("A's tool result (is_error %v): %.400s", result.IsError, text)
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("A's tool result is not the verdict: %q", text)
	}
	if cl, _ := v["class"].(string); result.IsError || !strings.HasPrefix(cl, "delivered-") || v["confirm"] != "transcript" || v["queued_at"] == nil {
		t.Errorf("verdict class %v confirm %v queued_at %v; want delivered-* confirmed by the transcript", v["class"], v["confirm"], v["queued_at"])
	}
	if r, _ := v["reply"].(map[string]any); r == nil || r["text"] != "B's answer" {
		t.Errorf("verdict reply %v, want B's answer", v["reply"])
	}
	b.mustSucceed(90 * time.Second)
	raw, err := os.ReadFile(w.transcriptPath(row.Cwd, row.SessionID))
	if err != nil {
		t.Fatal(err)
	}
	from, _ := v["from"].(string)
	want := "[" + from + " 📡 session " + aRow.SessionID[:8] + "] " + line
	enqueued := false
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.Contains(l, `"enqueue"`) && strings.Contains(l, line) {
			enqueued = true
			if !strings.Contains(l, want) {
				t.Errorf("B's enqueue row lacks A's origin tag: %s", l)
			}
		}
	}
	if !enqueued {
		t.Errorf("B's transcript has no enqueue row of %q", line)
	}
}
