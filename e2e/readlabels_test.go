package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// readTools returns the tools of the last exchange of a `read --json`
// document, and its prompt.
func readLast(t *testing.T, doc map[string]any) (prompt map[string]any, tools []any) {
	t.Helper()
	ex, _ := doc["exchanges"].([]any)
	if len(ex) == 0 {
		t.Fatalf("read --json has no exchanges: %v", doc)
	}
	last, _ := ex[len(ex)-1].(map[string]any)
	prompt, _ = last["prompt"].(map[string]any)
	tools, _ = last["tools"].([]any)
	return prompt, tools
}

// TestInteractiveReadLabels: in the real TUI a typed prompt is recorded
// with origin kind "human" and promptSource "typed", and a standalone
// `sleep 25` the model asks for is blocked by the CLI (a tool_result with
// is_error and "Blocked: standalone sleep"). `oo-claude read --json` calls
// the prompt the user's (kind user; it was "system") and marks the call
// blocked. The transcript is recorded as transcript/testdata/real's
// typed-and-blocked.jsonl (OO_CLAUDE_E2E_RECORD).
func TestInteractiveReadLabels(t *testing.T) {
	t.Parallel()
	const answer = "labels answer 7c2d"
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 25"), fakemodel.Text(answer)}})
	s := w.startInteractive(interactiveOpts{Args: []string{"--permission-mode", "default", "--allowedTools", "Bash"}, NoDoorman: true})
	prompt := "typed prompt " + uuid.NewString()[:8]
	s.typeLine(prompt)
	s.waitTranscript(60*time.Second, "the model's answer", func(row map[string]any) bool {
		return row["type"] == "assistant" && strings.Contains(fmt.Sprint(row["message"]), answer)
	})
	typed, _ := s.waitTranscript(time.Second, "the typed prompt's row", func(row map[string]any) bool {
		return row["type"] == "user" && strings.Contains(fmt.Sprint(row["message"]), prompt)
	})
	if o, _ := typed["origin"].(map[string]any); o["kind"] != "human" || typed["promptSource"] != "typed" {
		t.Errorf("the typed prompt's row has origin %v, promptSource %v; want kind human, typed (the facts file)", typed["origin"], typed["promptSource"])
	}
	s.waitTranscript(time.Second, "the blocked tool's result", func(row map[string]any) bool {
		m := fmt.Sprint(row["message"])
		return row["type"] == "user" && strings.Contains(m, "is_error:true") && strings.Contains(m, "Blocked")
	})
	w.record(s.Transcript, "typed-and-blocked")

	doc, r := w.ooJSON([]string{"read", s.SessionID})
	if r.code != 0 {
		t.Fatalf("read: %s", r)
	}
	p, tools := readLast(t, doc)
	if p["kind"] != "user" || !strings.Contains(fmt.Sprint(p["text"]), prompt) {
		t.Errorf("the typed prompt reads as %v; want kind user with its text\n%s", p, r.stdout)
	}
	if len(tools) != 1 {
		t.Fatalf("tools %v; want the one Bash call\n%s", tools, r.stdout)
	}
	if tool, _ := tools[0].(map[string]any); tool["blocked"] != true {
		t.Errorf("the blocked Bash call reads as %v; want blocked true\n%s", tool, r.stdout)
	}
	if h := w.oo([]string{"read", s.SessionID}); h.code != 0 || !strings.Contains(h.stdout, "blocked") {
		t.Errorf("read (human) does not say the call was blocked:\n%s", h)
	}
}

// TestHeadlessReadBlocked: `claude -p` in the default permission mode
// denies a Bash call it was not allowed (a tool_result with is_error:
// "Claude requested permissions to use Bash, but you haven't granted it
// yet."); read --json marks that call blocked and the prompt, which has no
// origin, stays the user's. Recorded as permission-denied.jsonl.
func TestHeadlessReadBlocked(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("touch denied-file"), fakemodel.Text("denied answer")}})
	s := w.start(pargs("run touch", "--permission-mode", "default"))
	res := s.mustSucceed(90 * time.Second)
	sid := str(res, "session_id")
	w.record(w.transcriptPath(w.cwd, sid), "permission-denied")
	doc, r := w.ooJSON([]string{"read", sid})
	if r.code != 0 {
		t.Fatalf("read: %s", r)
	}
	p, tools := readLast(t, doc)
	if p["kind"] != "user" {
		t.Errorf("prompt %v; want kind user", p)
	}
	if len(tools) != 1 {
		t.Fatalf("tools %v; want the one Bash call\n%s", tools, r.stdout)
	}
	if tool, _ := tools[0].(map[string]any); tool["blocked"] != true {
		t.Errorf("the denied Bash call reads as %v; want blocked true\n%s", tool, r.stdout)
	}
}
