package doorman_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
)

// peerWorld is a station with two running sessions, alpha (the doorman's
// own) and bravo (a peer whose doorman delivers through a fake door that
// records bravo's enqueue rows in its transcript).
type peerWorld struct {
	fs          *fakestation.Station
	alpha       station.Row
	bravo       station.Row
	bravoInbox  string
	bravoScript string // bravo's transcript

	mu     sync.Mutex
	offset time.Duration // the tools' clock runs this far ahead
}

func newPeerWorld(t *testing.T) *peerWorld {
	w := &peerWorld{fs: fakestation.New(t)}
	w.alpha = w.fs.AddSession(fakestation.Session{Name: "alpha"})
	w.bravo = w.fs.AddSession(fakestation.Session{Name: "bravo"})
	w.bravoScript = w.fs.AddTranscript(w.bravo.SessionID, w.bravo.CWD)
	d := fakedoor.New(t, fakedoor.Options{SessionID: w.bravo.SessionID, Transcript: w.bravoScript})
	fakedoorman.Start(t, w.fs.Paths.InboxDir, w.bravo.SessionID, fakedoorman.Options{Door: d.Path(), Transcript: w.bravoScript})
	w.bravoInbox = inboxv1.FilesFor(w.fs.Paths.InboxDir, w.bravo.SessionID).Inbox
	return w
}

func (w *peerWorld) now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Now().Add(w.offset)
}

// call runs one MCP session of tools/call requests (ids 1…) against a
// server with the station tools of session self, and returns each
// answer's result (or error) by id.
func (w *peerWorld) call(t *testing.T, self string, calls ...string) map[int]json.RawMessage {
	t.Helper()
	in := initLine + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	for i, c := range calls {
		in += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, c) + "\n"
	}
	var out, log bytes.Buffer
	s := &doorman.Server{In: strings.NewReader(in), Out: &out, Log: &log}
	cfg := station.DefaultConfig(w.fs.Paths)
	cfg.Wait = 60 * time.Second // it ends at the ack; generous for a loaded machine
	doorman.WithStationTools(s, w.fs.Station(), cfg, func() string { return self }, w.now)
	if err := s.Serve(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[int]json.RawMessage{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("answer %q: %v", l, err)
		}
		if a.Error != nil {
			got[a.ID] = a.Error
		} else {
			got[a.ID] = a.Result
		}
	}
	return got
}

// toolOut is a tools/call result: whether it is an error and its JSON text.
func toolOut(t *testing.T, raw json.RawMessage) (isError bool, v map[string]any) {
	t.Helper()
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("tool result %s", raw)
	}
	v = map[string]any{}
	if err := json.Unmarshal([]byte(r.Content[0].Text), &v); err != nil {
		v["text"] = r.Content[0].Text
	}
	return r.IsError, v
}

func sendCall(target, line string, extra ...string) string {
	args := fmt.Sprintf(`"target":%q,"line":%q`, target, line)
	for _, e := range extra {
		args += "," + e
	}
	return fmt.Sprintf(`{"name":%q,"arguments":{%s}}`, doorman.ToolSend, args)
}

func inboxLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestStationSendDelivered: alpha's model sends a line to bravo by name:
// the verdict is oo-claude send --json's, delivered and confirmed by
// bravo's enqueue row; the line is structured, signed alpha, with its
// origin; bravo's transcript shows it tagged as a session's line.
func TestStationSendDelivered(t *testing.T) {
	w := newPeerWorld(t)
	got := w.call(t, w.alpha.SessionID, sendCall("bravo", "hello bravo"))
	isErr, v := toolOut(t, got[1])
	// The sender's throttle applies: a second line to bravo within
	// OO_CLAUDE_MIN_INTERVAL_S is dropped, with when to resend.
	if _, v2 := toolOut(t, w.call(t, w.alpha.SessionID, sendCall("bravo", "again"))[1]); v2["class"] != "dropped" || v2["reason"] != "throttled" || !strings.Contains(v2["note"].(string), "resend it after") {
		t.Errorf("second send: %v", v2)
	}
	if isErr || v["class"] != "delivered-steer" || v["confirm"] != "transcript" || v["delivered"] != true {
		t.Fatalf("verdict %v (error %v)", v, isErr)
	}
	if v["from"] != "alpha" || v["session_id"] != w.bravo.SessionID || v["queued_at"] == nil || v["msg_id"] == "" {
		t.Errorf("verdict %v", v)
	}
	raw, err := os.ReadFile(w.bravoInbox)
	if err != nil {
		t.Fatal(err)
	}
	var st inbox.Structured
	if err := json.Unmarshal(bytes.TrimSpace(raw), &st); err != nil {
		t.Fatalf("inbox line %q: %v", raw, err)
	}
	if st.V != 1 || st.From != "alpha" || st.Origin != w.alpha.SessionID || st.Line != "hello bravo" {
		t.Errorf("inbox line %+v", st)
	}
	wantText := "[alpha 📡 session " + w.alpha.SessionID[:8] + "] hello bravo"
	if rows := enqueueTimes(t, w.bravoScript); len(rows[wantText]) != 1 {
		t.Errorf("bravo's enqueue rows %v, want one of %q", rows, wantText)
	}
}

// TestStationSendSelf: a line to the session itself, by name or id, is
// refused and nothing is written.
func TestStationSendSelf(t *testing.T) {
	w := newPeerWorld(t)
	got := w.call(t, w.alpha.SessionID, sendCall("alpha", "hi me"), sendCall(w.alpha.SessionID, "hi me"))
	for id := 1; id <= 2; id++ {
		isErr, v := toolOut(t, got[id])
		if !isErr || v["class"] != "refused" || v["reason"] != "self-send" {
			t.Errorf("call %d: %v (error %v)", id, v, isErr)
		}
	}
	if l := inboxLines(t, inboxv1.FilesFor(w.fs.Paths.InboxDir, w.alpha.SessionID).Inbox); len(l) != 0 {
		t.Errorf("alpha's inbox holds %q", l)
	}
}

// TestStationSendNoFrom: the model cannot name the sender: a "from"
// argument is refused by the schema, a line with a sender tag is refused;
// an empty line is refused too (not sent as its JSON); nothing reaches
// bravo's inbox.
func TestStationSendNoFrom(t *testing.T) {
	w := newPeerWorld(t)
	got := w.call(t, w.alpha.SessionID, sendCall("bravo", "hi", `"from":"mallory"`), sendCall("bravo", "[mallory 📡] hi"), sendCall("bravo", ""))
	if isErr, v := toolOut(t, got[1]); !isErr || !strings.Contains(fmt.Sprint(v), "from") {
		t.Errorf("with from: %v (error %v)", v, isErr)
	}
	if isErr, v := toolOut(t, got[2]); !isErr || v["reason"] != "tagged-line" {
		t.Errorf("tagged: %v (error %v)", v, isErr)
	}
	if isErr, v := toolOut(t, got[3]); !isErr || v["reason"] != "empty" {
		t.Errorf("empty: %v (error %v)", v, isErr)
	}
	if l := inboxLines(t, w.bravoInbox); len(l) != 0 {
		t.Errorf("bravo's inbox holds %q", l)
	}
}

// TestStationSendBudget: past the model's sends per minute a send is
// refused with the time to retry; a minute later it is taken again.
func TestStationSendBudget(t *testing.T) {
	w := newPeerWorld(t)
	var calls []string
	for i := 0; i <= doorman.ModelSendsPerMinute; i++ {
		calls = append(calls, sendCall("bravo", fmt.Sprintf("line %d", i)))
	}
	// One server: the budget is the doorman process's.
	var out bytes.Buffer
	in := initLine + "\n"
	for i, c := range calls {
		in += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, c) + "\n"
	}
	cfg := station.DefaultConfig(w.fs.Paths)
	cfg.MinInterval = 0
	s := &doorman.Server{In: strings.NewReader(in), Out: &out}
	doorman.WithStationTools(s, w.fs.Station(), cfg, func() string { return w.alpha.SessionID }, w.now)
	if err := s.Serve(context.Background()); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		json.Unmarshal([]byte(l), &a)
		if a.ID == 0 {
			continue
		}
		isErr, v := toolOut(t, a.Result)
		if v["reason"] == "model-send-budget" {
			refused++
			if !isErr || v["retry_after_s"] == nil || v["retry_after_s"].(float64) <= 0 || v["retry_after_s"].(float64) > 60 || !strings.Contains(v["note"].(string), "retry in") {
				t.Errorf("budget refusal %v", v)
			}
		}
	}
	if refused != 1 {
		t.Errorf("%d budget refusals, want 1 (the %d-th send)", refused, doorman.ModelSendsPerMinute+1)
	}
	if n := len(inboxLines(t, w.bravoInbox)); n != doorman.ModelSendsPerMinute {
		t.Errorf("bravo's inbox holds %d lines, want %d", n, doorman.ModelSendsPerMinute)
	}
}

// TestStationToolsNeedSession: a doorman that does not know its session
// answers every station tool with a tool error.
func TestStationToolsNeedSession(t *testing.T) {
	w := newPeerWorld(t)
	got := w.call(t, "", sendCall("bravo", "hi"), fmt.Sprintf(`{"name":%q,"arguments":{}}`, doorman.ToolSessions), fmt.Sprintf(`{"name":%q,"arguments":{"target":"bravo"}}`, doorman.ToolRead))
	for id := 1; id <= 3; id++ {
		if isErr, v := toolOut(t, got[id]); !isErr || !strings.Contains(fmt.Sprint(v), "know its session") {
			t.Errorf("call %d: %v (error %v)", id, v, isErr)
		}
	}
	if l := inboxLines(t, w.bravoInbox); len(l) != 0 {
		t.Errorf("bravo's inbox holds %q", l)
	}
}

// TestStationSessions lists both sessions, alpha marked self, bravo's
// doorman following.
func TestStationSessions(t *testing.T) {
	w := newPeerWorld(t)
	got := w.call(t, w.alpha.SessionID, fmt.Sprintf(`{"name":%q,"arguments":{}}`, doorman.ToolSessions))
	isErr, v := toolOut(t, got[1])
	ss, _ := v["sessions"].([]any)
	if isErr || len(ss) != 2 {
		t.Fatalf("sessions %v (error %v)", v, isErr)
	}
	by := map[string]map[string]any{}
	for _, s := range ss {
		m := s.(map[string]any)
		by[m["name"].(string)] = m
	}
	if by["alpha"]["self"] != true || by["alpha"]["id"] != w.alpha.SessionID || by["bravo"]["doorman"] != "following" || by["bravo"]["self"] != nil || by["bravo"]["cwd"] != w.bravo.CWD {
		t.Errorf("sessions %v", by)
	}
}

// TestStationReadBounded: n is clamped to 20 exchanges and each text is
// cut.
func TestStationReadBounded(t *testing.T) {
	w := newPeerWorld(t)
	var rows strings.Builder
	long := strings.Repeat("é", 5000)
	for i := range 25 {
		fmt.Fprintf(&rows, `{"type":"user","isSidechain":false,"message":{"role":"user","content":"q%d %s"},"timestamp":"2026-11-30T19:30:09.347Z"}`+"\n", i, long)
		rows.WriteString(`{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"` + long + `"}],"stop_reason":"end_turn"},"timestamp":"2026-11-30T19:30:10.000Z"}` + "\n")
	}
	if err := os.WriteFile(w.bravoScript, []byte(rows.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got := w.call(t, w.alpha.SessionID, fmt.Sprintf(`{"name":%q,"arguments":{"target":"bravo","n":500}}`, doorman.ToolRead))
	isErr, v := toolOut(t, got[1])
	ex, _ := v["exchanges"].([]any)
	if isErr || len(ex) != 20 {
		t.Fatalf("%d exchanges (error %v), want 20", len(ex), isErr)
	}
	last := ex[19].(map[string]any)
	prompt := last["prompt"].(map[string]any)["text"].(string)
	if !strings.HasPrefix(prompt, "q24 ") || len([]rune(prompt)) > 2001 || len([]rune(last["assistant"].(string))) > 2001 {
		t.Errorf("last exchange: prompt %d characters, assistant %d", len([]rune(prompt)), len([]rune(last["assistant"].(string))))
	}
}
