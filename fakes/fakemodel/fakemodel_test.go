package fakemodel_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// post sends a Messages request and returns the response.
func post(t *testing.T, c *http.Client, url, body string) *http.Response {
	t.Helper()
	resp, err := c.Post(url+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func client(t *testing.T) *http.Client {
	c := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// sseEvent is one server-sent event.
type sseEvent struct {
	Name string
	Data map[string]any
}

// readSSE parses an event stream the way the Anthropic SDK does: "event:"
// and "data:" lines, an empty line ends an event.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name != "" {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data); err != nil {
				t.Fatalf("data line %q: %v", line, err)
			}
			if cur.Data["type"] != cur.Name {
				t.Errorf("event %q carries data type %v", cur.Name, cur.Data["type"])
			}
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return evs
}

// assembled is a streamed message put back together.
type assembled struct {
	Names      []string
	Text       string
	ToolName   string
	ToolInput  map[string]any
	StopReason string
}

func assemble(t *testing.T, evs []sseEvent) assembled {
	t.Helper()
	var a assembled
	var partial strings.Builder
	for _, ev := range evs {
		a.Names = append(a.Names, ev.Name)
		switch ev.Name {
		case "content_block_start":
			if b := ev.Data["content_block"].(map[string]any); b["type"] == "tool_use" {
				a.ToolName, _ = b["name"].(string)
			}
		case "content_block_delta":
			d := ev.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				a.Text += d["text"].(string)
			case "input_json_delta":
				partial.WriteString(d["partial_json"].(string))
			}
		case "message_delta":
			a.StopReason, _ = ev.Data["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	if partial.Len() > 0 {
		if err := json.Unmarshal([]byte(partial.String()), &a.ToolInput); err != nil {
			t.Fatalf("tool input %q: %v", partial.String(), err)
		}
	}
	return a
}

const toolsBody = `"tools":[{"name":"Bash","input_schema":{"type":"object"}}]`

func TestStreamingRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		reply fakemodel.Reply
		want  assembled
	}{
		{
			name:  "text",
			reply: fakemodel.Text("héllo, wörld — a longer text in chunks"),
			want: assembled{
				Names: []string{"message_start", "ping", "content_block_start", "content_block_delta",
					"content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
				Text: "héllo, wörld — a longer text in chunks", StopReason: "end_turn",
			},
		},
		{
			name:  "bash tool call",
			reply: fakemodel.Bash("sleep 2"),
			want: assembled{
				Names: []string{"message_start", "ping", "content_block_start", "content_block_delta",
					"content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
				ToolName: "Bash", ToolInput: map[string]any{"command": "sleep 2"}, StopReason: "tool_use",
			},
		},
		{
			name:  "text and tool, stop reason overridden",
			reply: fakemodel.Reply{Text: "ok", ToolUse: &fakemodel.ToolUse{Name: "Read", Input: map[string]string{"file_path": "/x"}}, StopReason: "max_tokens"},
			want: assembled{
				Names: []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
					"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
					"message_delta", "message_stop"},
				Text: "ok", ToolName: "Read", ToolInput: map[string]any{"file_path": "/x"}, StopReason: "max_tokens",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.NewServer(fakemodel.Options{Replies: []fakemodel.Reply{tt.reply}})
			defer srv.Close()
			resp := post(t, client(t), srv.URL, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}],`+toolsBody+`}`)
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type = %q", ct)
			}
			got := assemble(t, readSSE(t, resp.Body))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNonStreaming(t *testing.T) {
	srv := fakemodel.NewServer(fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("ls")}})
	defer srv.Close()
	resp := post(t, client(t), srv.URL, `{"model":"m","messages":[{"role":"user","content":"hi"}],`+toolsBody+`}`)
	var msg struct {
		Type       string `json:"type"`
		Role       string `json:"role"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string         `json:"type"`
			ID    string         `json:"id"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"content"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.Role != "assistant" || msg.Model != "m" || msg.StopReason != "tool_use" ||
		len(msg.Content) != 1 || msg.Content[0].Name != "Bash" || msg.Content[0].Input["command"] != "ls" ||
		!strings.HasPrefix(msg.Content[0].ID, "toolu_") {
		t.Errorf("message = %+v", msg)
	}
}

func TestErrorReply(t *testing.T) {
	tests := []struct {
		name     string
		reply    fakemodel.Reply
		wantType string
		wantMsg  string
	}{
		{"overloaded", fakemodel.Error(529, "busy"), "overloaded_error", "busy"},
		{"rate limit", fakemodel.Error(http.StatusTooManyRequests, ""), "rate_limit_error", "Too Many Requests"},
		{"bad request", fakemodel.Error(http.StatusBadRequest, "nope"), "invalid_request_error", "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.NewServer(fakemodel.Options{Replies: []fakemodel.Reply{tt.reply}})
			defer srv.Close()
			resp := post(t, client(t), srv.URL, `{"model":"m","stream":true,"messages":[],`+toolsBody+`}`)
			if resp.StatusCode != tt.reply.Status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.reply.Status)
			}
			var body struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if body.Type != "error" || body.Error.Type != tt.wantType || body.Error.Message != tt.wantMsg {
				t.Errorf("error body = %+v, want type %s message %q", body, tt.wantType, tt.wantMsg)
			}
		})
	}
}

func TestRoutingAndRecording(t *testing.T) {
	srv := fakemodel.NewServer(fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Text("one"), fakemodel.Text("two")}, Handler: func(r *fakemodel.Request) fakemodel.Reply {
		if r.Contains("magic") {
			return fakemodel.Text("handled")
		}
		return fakemodel.Reply{} // on to the queue
	}, SideReply: func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Text("side") }, DefaultReply: fakemodel.Text("default")})
	defer srv.Close()
	c := client(t)
	send := func(body string) string {
		t.Helper()
		resp := post(t, c, srv.URL, body)
		var msg struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
			t.Fatal(err)
		}
		return msg.Content[0].Text
	}
	main := func(text string) string {
		return `{"model":"m","system":"sys prompt","messages":[{"role":"user","content":[{"type":"text","text":"` + text + `"}]},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"tool said"}]}]},` +
			`{"role":"system","content":"peer said"}],` + toolsBody + `}`
	}
	var got []string
	got = append(got, send(`{"model":"small","messages":[{"role":"user","content":"title this"}]}`)) // no tools: side
	got = append(got, send(main("first")))
	got = append(got, send(main("magic word")))
	got = append(got, send(main("second")))
	got = append(got, send(main("third")))
	if diff := cmp.Diff([]string{"side", "one", "handled", "two", "default"}, got); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}

	reqs := srv.Requests()
	if len(reqs) != 5 || !reqs[0].Side || reqs[1].Side || reqs[0].Model != "small" {
		t.Fatalf("requests = %v", reqs)
	}
	r := reqs[1]
	for _, s := range []string{"sys prompt", "first", `"command":"echo"`, "tool said", "peer said"} {
		if !r.Contains(s) {
			t.Errorf("Contains(%q) = false", s)
		}
	}
	if r.MessagesContain("sys prompt") {
		t.Errorf("MessagesContain found the system prompt")
	}
	if diff := cmp.Diff([]string{"Bash"}, r.ToolNames()); diff != "" {
		t.Errorf("ToolNames (-want +got):\n%s", diff)
	}
	if tr := r.ToolResults(); len(tr) != 1 || tr[0].ToolUseID != "t1" {
		t.Errorf("ToolResults = %+v", tr)
	}
	if r.Seq != 2 || r.Path != "/v1/messages" || r.Query != "beta=true" || len(r.Raw) == 0 || r.Time.IsZero() {
		t.Errorf("request metadata = seq %d path %q query %q raw %d time %v", r.Seq, r.Path, r.Query, len(r.Raw), r.Time)
	}
}

func TestOtherEndpoints(t *testing.T) {
	srv := fakemodel.NewServer(fakemodel.Options{})
	defer srv.Close()
	c := client(t)
	resp, err := c.Post(srv.URL+"/v1/messages/count_tokens", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	var ct map[string]int
	err = json.NewDecoder(resp.Body).Decode(&ct)
	resp.Body.Close()
	if err != nil || ct["input_tokens"] < 1 {
		t.Errorf("count_tokens = %v, %v", ct, err)
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		req, _ := http.NewRequest(method, srv.URL+"/api/hello", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s /api/hello = %d", method, resp.StatusCode)
		}
	}
	var got []string
	for _, call := range srv.Calls() {
		got = append(got, call.Method+" "+call.Path)
	}
	want := []string{"POST /v1/messages/count_tokens", "GET /api/hello", "HEAD /api/hello"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if srv.Len() != 0 {
		t.Errorf("non-messages calls were recorded as requests")
	}
}

func TestWaitRequest(t *testing.T) {
	srv := fakemodel.NewServer(fakemodel.Options{})
	c := client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	found := make(chan *fakemodel.Request, 1)
	go func() {
		r, err := srv.WaitRequest(ctx, func(r *fakemodel.Request) bool { return r.Contains("second") })
		if err != nil {
			t.Error(err)
		}
		found <- r
	}()
	post(t, c, srv.URL, `{"model":"m","messages":[{"role":"user","content":"first"}],`+toolsBody+`}`)
	post(t, c, srv.URL, `{"model":"m","messages":[{"role":"user","content":"second"}],`+toolsBody+`}`)
	if r := <-found; r == nil || r.Seq != 2 {
		t.Errorf("WaitRequest returned %v, want request #2", r)
	}
	// A past request matches at once.
	if r, err := srv.WaitRequest(ctx, nil); err != nil || r.Seq != 1 {
		t.Errorf("WaitRequest(nil) = %v, %v; want request #1", r, err)
	}
	// A deadline ends the wait with the context's error.
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	if _, err := srv.WaitRequest(short, func(r *fakemodel.Request) bool { return r.Seq > 5 }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitRequest past its deadline: %v, want DeadlineExceeded", err)
	}
	// Close ends a wait with ErrClosed.
	waitErr := make(chan error, 1)
	go func() {
		_, err := srv.WaitRequest(ctx, func(r *fakemodel.Request) bool { return false })
		waitErr <- err
	}()
	srv.Close()
	if err := <-waitErr; !errors.Is(err, fakemodel.ErrClosed) {
		t.Errorf("WaitRequest after Close: %v, want ErrClosed", err)
	}
}

func TestCloseCutsDelay(t *testing.T) {
	srv := fakemodel.NewServer(fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Reply{Text: "late", Delay: time.Minute}}})
	c := client(t)
	errc := make(chan error, 1)
	go func() {
		resp, err := c.Post(srv.URL+"/v1/messages", "application/json",
			strings.NewReader(`{"model":"m","messages":[],`+toolsBody+`}`))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := srv.WaitRequest(ctx, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	srv.Close()
	// Milliseconds; the bound only tells Close from the minute's delay
	// and is generous for a loaded machine.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Close took %v with a one-minute delay in flight", d)
	}
	<-errc // the client sees the connection closed
}

func TestBadBody(t *testing.T) {
	srv := fakemodel.NewServer(fakemodel.Options{})
	defer srv.Close()
	resp := post(t, client(t), srv.URL, `{not json`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status = %d, want 400", resp.StatusCode)
	}
	var pe *fakemodel.ParseError
	if r := srv.Requests(); len(r) != 1 || !errors.As(r[0].ParseErr, &pe) {
		t.Errorf("recorded %v, want one request with a ParseError", r)
	}
}

func TestBlocksUnmarshal(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want fakemodel.Blocks
	}{
		{"string", `"hi"`, fakemodel.Blocks{{Type: "text", Text: "hi"}}},
		{"null", `null`, nil},
		{"array", `[{"type":"text","text":"a"},{"type":"tool_result","tool_use_id":"x","content":"b"}]`,
			fakemodel.Blocks{{Type: "text", Text: "a"}, {Type: "tool_result", ToolUseID: "x", Content: fakemodel.Blocks{{Type: "text", Text: "b"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got fakemodel.Blocks
			if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Blocks never panic on any JSON, and what they read they write in a form
// that reads back the same.
func FuzzBlocksUnmarshal(f *testing.F) {
	for _, s := range []string{`"x"`, `null`, `[{"type":"text","text":"a"}]`, `[{"type":"tool_result","content":[{"type":"text","text":"b"}]}]`, `{}`, `[{"type":"tool_use","input":  {"a" : "<&>"},"content":[]}]`, `[{"content":" s "}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b fakemodel.Blocks
		if json.Unmarshal(data, &b) != nil {
			return
		}
		r := fakemodel.Request{Messages: []fakemodel.Message{{Role: "user", Content: b}}}
		_ = r.Text()
		// What was read is written in a form that reads back the same.
		once, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", b, err)
		}
		var back fakemodel.Blocks
		if err := json.Unmarshal(once, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", once, err)
		}
		twice, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("round trip of %q: %s, then %s", data, once, twice)
		}
	})
}

// TestServerNotStarted: a Server not made by NewServer (the zero
// value) is a closed one: Close does nothing, WaitRequest returns
// ErrClosed at once (the zero value's Close closed a nil channel).
func TestServerNotStarted(t *testing.T) {
	for name, s := range map[string]*fakemodel.Server{"zero": {}} {
		t.Run(name, func(t *testing.T) {
			s.Close()
			if _, err := s.WaitRequest(context.Background(), nil); !errors.Is(err, fakemodel.ErrClosed) {
				t.Errorf("WaitRequest: %v, want ErrClosed", err)
			}
			if s.Len() != 0 || s.Pending() != 0 || len(s.Requests()) != 0 || len(s.Calls()) != 0 {
				t.Errorf("Len %d, Pending %d, Requests %v, Calls %v; want none", s.Len(), s.Pending(), s.Requests(), s.Calls())
			}
		})
	}
}
