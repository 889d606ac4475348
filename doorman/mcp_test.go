package doorman_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/inboxv1"
)

const toolJSON = `{"name":"claude_inbox_status","title":"Claude inbox status","description":"Read-only: this session's inbox file, how many lines its doorman delivered, refused and has pending, the doorman's heartbeat and whether its follow loop runs.","inputSchema":{"type":"object","properties":{},"additionalProperties":false},"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}`

const toolsList = `{"jsonrpc":"2.0","id":3,"result":{"tools":[` + toolJSON + `],"ttlMs":0,"cacheScope":"private"}}`

// initLine is an initialize of 2025-11-25 with id 0: a session's first
// line (the SDK refuses other requests than ping before it).
const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// modern is a 2026-07-28 request: params (members with a trailing comma)
// plus the revision's _meta.
func modern(id int, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, id, method, params)
}

// lines is a test's input: plain lines, or a session's (after initialize).
type lines interface{ lines() []string }

type plain []string

func (l plain) lines() []string { return l }

type session []string

func (l session) lines() []string { return l }

// canonFrames is out's frames, each re-encoded (members sorted, ids as
// sent), sorted: answers may come in any order (JSON-RPC matches them by
// id), a batch is one frame.
func canonFrames(t *testing.T, out string) []string {
	t.Helper()
	var frames []string
	for _, l := range strings.Split(out, "\n") {
		if l == "" {
			continue
		}
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		b, _ := json.Marshal(v)
		frames = append(frames, string(b))
	}
	slices.Sort(frames)
	return frames
}

func TestMCPGolden(t *testing.T) {
	initWith := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.332"}}}`
	}
	initResult := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + v + `","capabilities":{"tools":{}},"serverInfo":{"name":"oo-claude-doorman","version":"9.9.9"}}}`
	}
	tests := []struct {
		name string
		in   lines
		out  []string
	}{
		{"initialize 2025-11-25", plain{initWith("2025-11-25")}, []string{initResult("2025-11-25")}},
		{"initialize 2025-06-18", plain{initWith("2025-06-18")}, []string{initResult("2025-06-18")}},
		{"initialize 2025-03-26", plain{initWith("2025-03-26")}, []string{initResult("2025-03-26")}},
		{"initialize 2024-11-05", plain{initWith("2024-11-05")}, []string{initResult("2024-11-05")}},
		{"initialize unknown version", plain{initWith("2026-07-28")}, []string{initResult("2025-11-25")}},
		// issue 21: a malformed initialize was accepted.
		{"initialize malformed", plain{
			`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
			`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c"}}}`,
			`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":7,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: initialize needs params: protocolVersion, capabilities and clientInfo"}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params: initialize needs a protocolVersion (a string)"}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: initialize needs capabilities (an object)"}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid params: initialize needs clientInfo with a name and a version (strings)"}}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"invalid params: initialize needs params: protocolVersion, capabilities and clientInfo"}}`,
		}},
		// issue 21: a bogus cursor was ignored.
		{"tools/list with a cursor", session{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"bogus"}}`, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":7}}`},
			[]string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params"}}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"handling 'tools/list': invalid params: unmarshaling \"{\\\"cursor\\\":7}\" into a *mcp.ListToolsParams: json: cannot unmarshal \"7}\" into Go struct field mcp.ListToolsParams.cursor of type string"}}`}},
		// issue 21: an error answered "id":null where the id was readable.
		{"invalid request with a readable id", plain{`{"jsonrpc":2,"id":7,"method":"ping"}`, `{"jsonrpc":["2.0"],"id":"x","method":"ping"}`},
			[]string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request"}}`, `{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"invalid request"}}`}},
		{"notifications are never answered", plain{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`}, nil},
		{"ping", plain{`{"jsonrpc":"2.0","id":"p-1","method":"ping"}`}, []string{`{"jsonrpc":"2.0","id":"p-1","result":{}}`}},
		{"tools/list", session{`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`}, []string{toolsList}},
		{"tools/call", session{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":{}}}`},
			[]string{`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"inbox\":\"/i/s.inbox\",\"session_id\":\"s\",\"state\":\"following\",\"delivered\":2,\"refused\":0,\"pending\":1,\"pending_bytes\":9,\"heartbeat\":null,\"thread_alive\":true}"}],"structuredContent":{"inbox":"/i/s.inbox","session_id":"s","state":"following","delivered":2,"refused":0,"pending":1,"pending_bytes":9,"heartbeat":null,"thread_alive":true}}}`}},
		{"tools/call unknown tool", session{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rm_rf"}}`},
			[]string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"unknown tool \"rm_rf\""}}`}},
		{"server/discover", plain{`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"protocolVersion":"2026-07-28"}}}`},
			[]string{`{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"method not found: \"server/discover\""}}`}},
		{"resources/list", session{`{"jsonrpc":"2.0","id":6,"method":"resources/list"}`},
			[]string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"method not found: \"resources/list\""}}`}},
		{"parse error", plain{`{not json`}, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`}},
		{"invalid request", plain{`{"jsonrpc":"1.0","id":7,"method":"ping"}`}, []string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request"}}`}},
		// Found by FuzzServer: an invalid message without an id got no
		// answer at all, as if it were a notification.
		{"invalid request without id", plain{`{}`, `{"jsonrpc":"2.0"}`, `null`, `{"method":"ping"}`}, []string{
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
		}},
		// The deviations the official clients found (see the package doc).
		{"tools/call with an argument the schema forbids", session{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":{"verbose":true}}}`},
			[]string{`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"validating \"arguments\": validating root: unexpected additional properties [\"verbose\"]"}],"isError":true}}`}},
		{"tools/call with arguments not an object", session{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":[1]}}`},
			[]string{`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"validating \"arguments\": unmarshaling arguments: json: cannot unmarshal \"[1]\" into Go value of type map[string]interface {}"}],"isError":true}}`}},
		{"tools/call with null arguments", session{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":null}}`},
			[]string{`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"{\"inbox\":\"/i/s.inbox\",\"session_id\":\"s\",\"state\":\"following\",\"delivered\":2,\"refused\":0,\"pending\":1,\"pending_bytes\":9,\"heartbeat\":null,\"thread_alive\":true}"}],"structuredContent":{"inbox":"/i/s.inbox","session_id":"s","state":"following","delivered":2,"refused":0,"pending":1,"pending_bytes":9,"heartbeat":null,"thread_alive":true}}}`}},
		{"ids MCP does not allow", plain{
			`{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, `{"jsonrpc":"2.0","id":true,"method":"ping"}`,
			"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"ping\"}",
		}, []string{
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
		}},
		{"ids MCP allows", plain{`{"jsonrpc":"2.0","id":-7,"method":"ping"}`, `{"jsonrpc":"2.0","id":"é\u00e9","method":"ping"}`, `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`},
			[]string{`{"jsonrpc":"2.0","id":-7,"result":{}}`, `{"jsonrpc":"2.0","id":"é\u00e9","result":{}}`, `{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`}},
		{"valid JSON that is not a request", plain{`[]`, `42`, `"ping"`, `{"jsonrpc":"2.0","id":6,"method":5}`, `{"jsonrpc":"2.0","id":6,"method":null}`},
			[]string{
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}}`,
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
				`{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"invalid request"}}`,
				`{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"invalid request"}}`,
			}},
		{"responses are not answered", plain{`{"jsonrpc":"2.0","id":7,"result":{}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, `{"jsonrpc":"2.0","id":8,"method":"ping"}`},
			[]string{`{"jsonrpc":"2.0","id":8,"result":{}}`}},
		{"a batch in 2025-03-26", plain{initWith("2025-03-26"),
			`[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},42,{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x"}}]`,
			`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`},
			[]string{initResult("2025-03-26"),
				`[{"jsonrpc":"2.0","id":8,"result":{}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}},{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"unknown tool \"x\""}}]`}},
		{"a batch in 2025-06-18", plain{initWith("2025-06-18"), `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`},
			[]string{initResult("2025-06-18"), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported in protocol version 2025-06-18"}}`}},
		{"a batch before initialize", plain{`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`},
			[]string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported in protocol version (none negotiated)"}}`}},
		// 2026-07-28: no initialize; every request names the revision in
		// its _meta, and server/discover lists the revisions.
		{"2026-07-28 server/discover", plain{modern(0, "server/discover", ``)},
			[]string{`{"jsonrpc":"2.0","id":0,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"oo-claude-doorman","version":"9.9.9"}},"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private"}}`}},
		{"2026-07-28 tools/list", plain{modern(3, "tools/list", ``)},
			[]string{`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"oo-claude-doorman","version":"9.9.9"}},"tools":[` + toolJSON + `],"ttlMs":0,"cacheScope":"private"}}`}},
		{"2026-07-28 tools/call with a forbidden argument", plain{modern(4, "tools/call", `"name":"claude_inbox_status","arguments":{"x":1},`)},
			[]string{`{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"oo-claude-doorman","version":"9.9.9"}},"content":[{"type":"text","text":"validating \"arguments\": validating root: unexpected additional properties [\"x\"]"}],"isError":true}}`}},
		{"2026-07-28 has no initialize or ping", plain{modern(1, "initialize", ``), modern(2, "ping", ``)},
			[]string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: \"initialize\""}}`,
				`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: \"ping\""}}`}},
		{"a later revision", plain{`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`},
			[]string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"unsupported protocol version","data":{"requested":"2027-01-01","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}}}`}},
		// issue 21: an older revision named in _meta was served as legacy.
		{"an unknown older revision", plain{`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`},
			[]string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"unsupported protocol version","data":{"requested":"1900-01-01","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}}}`}},
		{"2026-07-28 without client capabilities", plain{`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
			[]string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"missing or invalid _meta field \"io.modelcontextprotocol/clientCapabilities\""}}`}},
		{"blank lines skipped", plain{``, `  `, `{"jsonrpc":"2.0","id":8,"method":"ping"}`}, []string{`{"jsonrpc":"2.0","id":8,"result":{}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			in, want := tt.in.lines(), tt.out
			if _, ok := tt.in.(session); ok {
				// A request other than ping before initialize is refused:
				// these run in a session of 2025-11-25.
				in = append([]string{initWith("2025-11-25")}, in...)
				want = append([]string{initResult("2025-11-25")}, want...)
			}
			s := &doorman.Server{
				In: strings.NewReader(strings.Join(in, "\n") + "\n"), Out: &out, Version: "9.9.9",
				Report: func() doorman.Report {
					return doorman.Report{Inbox: "/i/s.inbox", SessionID: "s", State: "following", Delivered: 2, Pending: 1, PendingBytes: 9, ThreadAlive: true}
				},
			}
			if err := s.Serve(context.Background()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canonFrames(t, strings.Join(want, "\n")), canonFrames(t, out.String())); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMCPInternalError: a failing message answers -32603 and the server
// goes on; a request right before EOF is still answered.
func TestMCPInternalError(t *testing.T) {
	var out, log bytes.Buffer
	calls := 0
	s := &doorman.Server{
		In: strings.NewReader(initLine + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"claude_inbox_status"}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"ping"}`), // no newline: EOF right after
		Out: &out, Log: &log,
		Report: func() doorman.Report {
			calls++
			panic("boom")
		},
	}
	if err := s.Serve(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"oo-claude-doorman","version":""}}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}`
	if diff := cmp.Diff(canonFrames(t, want), canonFrames(t, out.String())); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if !strings.Contains(log.String(), "boom") {
		t.Errorf("log %q", log.String())
	}
}

// TestMCPStdoutCleanWhileLoopLogs: the doorman's loop logs (an identity
// failure, retried) while the server answers; stdout holds frames only.
func TestMCPStdoutCleanWhileLoopLogs(t *testing.T) {
	w := newWorld(t)
	w.tree.add(600, 1, "bash", "/bin/bash", "8")
	w.self, w.ppid = selfPID, 600
	w.tree.add(selfPID, 600, "oo-claude", "/x/oo-claude", "9")
	var log lockedBuffer
	log.b = &bytes.Buffer{}
	dm := doorman.New(doorman.Options{Host: w.host(nil), Config: w.config(), Mode: doorman.ModeMCP, Log: &log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dm.Run(ctx) }()
	pr, pw := io.Pipe()
	var out bytes.Buffer
	s := &doorman.Server{In: pr, Out: &out, Log: &log, Report: dm.Report}
	sdone := make(chan error, 1)
	go func() { sdone <- s.Serve(context.Background()) }()
	waitState(t, dm, inboxv1.StateNotDescendant)
	io.WriteString(pw, initLine+"\n"+`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"claude_inbox_status"}}`+"\n")
	pw.Close()
	if err := <-sdone; err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], `{"jsonrpc":"2.0","id":1,"result":`) || !strings.Contains(lines[1], `\"state\":\"not-descendant\"`) {
		t.Errorf("stdout %q", out.String())
	}
	if !strings.Contains(log.b.String(), "not-descendant") {
		t.Errorf("log %q", log.b.String())
	}
}
