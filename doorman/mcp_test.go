package doorman_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/internal/inbox"
)

const toolJSON = `{"name":"claude_inbox_status","title":"Claude inbox status","description":"Read-only: this session's inbox file, how many lines its doorman delivered, refused and has pending, the doorman's heartbeat and whether its follow loop runs.","inputSchema":{"type":"object","properties":{},"additionalProperties":false},"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}`

const toolsList = `{"jsonrpc":"2.0","id":3,"result":{"tools":[` + toolJSON + `]}}`

// modern is a 2026-07-28 request: params (members with a trailing comma)
// plus the revision's _meta.
func modern(id int, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, id, method, params)
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
		in   []string
		out  []string
	}{
		{"initialize 2025-11-25", []string{initWith("2025-11-25")}, []string{initResult("2025-11-25")}},
		{"initialize 2025-06-18", []string{initWith("2025-06-18")}, []string{initResult("2025-06-18")}},
		{"initialize 2025-03-26", []string{initWith("2025-03-26")}, []string{initResult("2025-03-26")}},
		{"initialize 2024-11-05", []string{initWith("2024-11-05")}, []string{initResult("2024-11-05")}},
		{"initialize unknown version", []string{initWith("2026-07-28")}, []string{initResult("2025-11-25")}},
		{"initialize without params", []string{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`}, []string{initResult("2025-11-25")}},
		{"notifications are never answered", []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`}, nil},
		{"ping", []string{`{"jsonrpc":"2.0","id":"p-1","method":"ping"}`}, []string{`{"jsonrpc":"2.0","id":"p-1","result":{}}`}},
		{"tools/list", []string{`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`}, []string{toolsList}},
		{"tools/call", []string{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":{}}}`},
			[]string{`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"inbox\":\"/i/s.inbox\",\"session_id\":\"s\",\"state\":\"following\",\"delivered\":2,\"refused\":0,\"pending\":1,\"pending_bytes\":9,\"heartbeat\":null,\"thread_alive\":true}"}],"structuredContent":{"inbox":"/i/s.inbox","session_id":"s","state":"following","delivered":2,"refused":0,"pending":1,"pending_bytes":9,"heartbeat":null,"thread_alive":true},"isError":false}}`}},
		{"tools/call unknown tool", []string{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rm_rf"}}`},
			[]string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"unknown tool \"rm_rf\""}}`}},
		{"server/discover", []string{`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"protocolVersion":"2026-07-28"}}}`},
			[]string{`{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"method not found: server/discover"}}`}},
		{"resources/list", []string{`{"jsonrpc":"2.0","id":6,"method":"resources/list"}`},
			[]string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"method not found: resources/list"}}`}},
		{"parse error", []string{`{not json`}, []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`}},
		{"invalid request", []string{`{"jsonrpc":"1.0","id":7,"method":"ping"}`}, []string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request"}}`}},
		// Found by FuzzServer: an invalid message without an id got no
		// answer at all, as if it were a notification.
		{"invalid request without id", []string{`{}`, `{"jsonrpc":"2.0"}`, `null`, `{"method":"ping"}`}, []string{
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
		}},
		// The deviations the official clients found (see the package doc).
		{"tools/call with an argument the schema forbids", []string{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":{"verbose":true}}}`},
			[]string{`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"invalid arguments: the inputSchema allows no properties, got [\"verbose\"]"}],"isError":true}}`}},
		{"tools/call with arguments not an object", []string{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":[1]}}`},
			[]string{`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"invalid arguments: want an object, as the inputSchema says"}],"isError":true}}`}},
		{"tools/call with null arguments", []string{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":null}}`},
			[]string{`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"{\"inbox\":\"/i/s.inbox\",\"session_id\":\"s\",\"state\":\"following\",\"delivered\":2,\"refused\":0,\"pending\":1,\"pending_bytes\":9,\"heartbeat\":null,\"thread_alive\":true}"}],"structuredContent":{"inbox":"/i/s.inbox","session_id":"s","state":"following","delivered":2,"refused":0,"pending":1,"pending_bytes":9,"heartbeat":null,"thread_alive":true},"isError":false}}`}},
		{"ids MCP does not allow", []string{
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
		{"ids MCP allows", []string{`{"jsonrpc":"2.0","id":-7,"method":"ping"}`, `{"jsonrpc":"2.0","id":"é\u00e9","method":"ping"}`, `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`},
			[]string{`{"jsonrpc":"2.0","id":-7,"result":{}}`, `{"jsonrpc":"2.0","id":"é\u00e9","result":{}}`, `{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`}},
		{"valid JSON that is not a request", []string{`[]`, `42`, `"ping"`, `{"jsonrpc":"2.0","id":6,"method":5}`, `{"jsonrpc":"2.0","id":6,"method":null}`},
			[]string{
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}}`,
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
				`{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"invalid request"}}`,
				`{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"invalid request"}}`,
			}},
		{"responses are not answered", []string{`{"jsonrpc":"2.0","id":7,"result":{}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, `{"jsonrpc":"2.0","id":8,"method":"ping"}`},
			[]string{`{"jsonrpc":"2.0","id":8,"result":{}}`}},
		{"a batch in 2025-03-26", []string{initWith("2025-03-26"),
			`[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},42,{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x"}}]`,
			`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`},
			[]string{initResult("2025-03-26"),
				`[{"jsonrpc":"2.0","id":8,"result":{}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}},{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"unknown tool \"x\""}}]`}},
		{"a batch in 2025-06-18", []string{initWith("2025-06-18"), `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`},
			[]string{initResult("2025-06-18"), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported in protocol version 2025-06-18"}}`}},
		{"a batch before initialize", []string{`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`},
			[]string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported in protocol version (none negotiated)"}}`}},
		// 2026-07-28: no initialize; every request names the revision in
		// its _meta, and server/discover lists the revisions.
		{"2026-07-28 server/discover", []string{modern(0, "server/discover", ``)},
			[]string{`{"jsonrpc":"2.0","id":0,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"oo-claude-doorman","version":"9.9.9"}},"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{}}}}`}},
		{"2026-07-28 tools/list", []string{modern(3, "tools/list", ``)},
			[]string{`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"oo-claude-doorman","version":"9.9.9"}},"tools":[` + toolJSON + `]}}`}},
		{"2026-07-28 tools/call with a forbidden argument", []string{modern(4, "tools/call", `"name":"claude_inbox_status","arguments":{"x":1},`)},
			[]string{`{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"oo-claude-doorman","version":"9.9.9"}},"content":[{"type":"text","text":"invalid arguments: the inputSchema allows no properties, got [\"x\"]"}],"isError":true}}`}},
		{"2026-07-28 has no initialize or ping", []string{modern(1, "initialize", ``), modern(2, "ping", ``)},
			[]string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method \"initialize\" is not part of protocol version 2026-07-28"}}`,
				`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method \"ping\" is not part of protocol version 2026-07-28"}}`}},
		{"a later revision", []string{`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`},
			[]string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"unsupported protocol version","data":{"requested":"2027-01-01","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}}}`}},
		{"2026-07-28 without client capabilities", []string{`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
			[]string{`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"missing or invalid _meta field \"io.modelcontextprotocol/clientCapabilities\""}}`}},
		{"blank lines skipped", []string{``, `  `, `{"jsonrpc":"2.0","id":8,"method":"ping"}`}, []string{`{"jsonrpc":"2.0","id":8,"result":{}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s := &doorman.Server{
				In: strings.NewReader(strings.Join(tt.in, "\n") + "\n"), Out: &out, Version: "9.9.9",
				Report: func() doorman.Report {
					return doorman.Report{Inbox: "/i/s.inbox", SessionID: "s", State: "following", Delivered: 2, Pending: 1, PendingBytes: 9, ThreadAlive: true}
				},
			}
			if err := s.Serve(context.Background()); err != nil {
				t.Fatal(err)
			}
			var got []string
			if out.Len() > 0 {
				got = strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			}
			if diff := cmp.Diff(tt.out, got); diff != "" {
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
		In: strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"claude_inbox_status"}}` + "\n" +
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
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
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
	waitState(t, dm, inbox.StateNotDescendant)
	io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"claude_inbox_status"}}`+"\n")
	pw.Close()
	if err := <-sdone; err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":1,"result":`) || !strings.Contains(lines[0], `\"state\":\"not-descendant\"`) {
		t.Errorf("stdout %q", out.String())
	}
	if !strings.Contains(log.b.String(), "not-descendant") {
		t.Errorf("log %q", log.b.String())
	}
}
