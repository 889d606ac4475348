package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestRider: a session whose model calls the sub-agent tool shows a rider:
// while the sub-agent works (its own requests also go to the fake model,
// told apart by its prompt), `oo-claude riders --json` and `oo-claude
// sessions --json` list it under its session as riding, with the
// description and agent type of the call.
func TestRider(t *testing.T) {
	t.Parallel()
	task := "rider task " + uuid.NewString()
	const desc = "e2e rider"
	var mu sync.Mutex
	var agentTool string // the sub-agent tool's name, as offered
	tool := func() string {
		mu.Lock()
		defer mu.Unlock()
		return agentTool
	}
	handler := func(r *fakemodel.Request) fakemodel.Reply {
		sub := strings.Contains(firstUserText(r), task)
		done := len(r.ToolResults()) > 0
		switch {
		case sub && !done:
			return fakemodel.Bash("sleep 4")
		case sub:
			return fakemodel.Text("sub-agent done")
		case !done:
			mu.Lock()
			for _, n := range r.ToolNames() {
				if n == "Agent" || n == "Task" {
					agentTool = n
				}
			}
			mu.Unlock()
			return fakemodel.Tool(tool(), map[string]any{
				"description": desc, "prompt": task, "subagent_type": "general-purpose",
			})
		default:
			return fakemodel.Text("all done")
		}
	}
	w := newWorld(t, fakemodel.Options{Handler: handler})
	s := w.start(pargs("use a sub-agent", "--allowedTools", "Bash"))
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitModel(30*time.Second, "by the sub-agent", func(q *fakemodel.Request) bool {
		return strings.Contains(firstUserText(q), task)
	})

	var rider map[string]any
	deadline := time.Now().Add(20 * time.Second)
	for rider == nil {
		doc, r := w.ooJSON([]string{"riders"})
		if r.code != 0 {
			s.fatalf("riders: %s", r)
		}
		if sess := findSession(doc, sid); sess != nil {
			list, _ := sess["riders"].([]any)
			for _, x := range list {
				if m, _ := x.(map[string]any); str(m, "state") == "riding" {
					rider = m
				}
			}
		}
		if rider == nil && time.Now().After(deadline) {
			s.fatalf("riders --json never showed a riding rider of %s (tool %q):\n%s", sid, tool(), r.stdout)
		}
		if rider == nil {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if str(rider, "description") != desc || str(rider, "agent_type") != "general-purpose" {
		t.Errorf("rider description %q, agent_type %q; want %q, general-purpose", rider["description"], rider["agent_type"], desc)
	}
	doc, r := w.ooJSON([]string{"sessions"})
	sess := findSession(doc, sid)
	if sess == nil {
		s.fatalf("sessions --json lacks %s:\n%s", sid, r.stdout)
	}
	if n, _ := sess["riders_total"].(float64); n < 1 {
		t.Errorf("sessions --json riders_total %v, want at least 1\n%s", sess["riders_total"], r.stdout)
	}
	res := s.mustSucceed(60 * time.Second)
	if res["result"] != "all done" {
		t.Errorf("result %v, want all done", res["result"])
	}
	t.Logf("sub-agent tool: %s", tool())
	w.record(w.transcriptPath(w.cwd, sid), "subagent-session")
}

// firstUserText is the text of a request's first message.
func firstUserText(r *fakemodel.Request) string {
	if len(r.Messages) == 0 {
		return ""
	}
	var sb strings.Builder
	for _, b := range r.Messages[0].Content {
		sb.WriteString(b.Text)
	}
	return sb.String()
}
