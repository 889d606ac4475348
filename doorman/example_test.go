package doorman_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/doorman"
)

// The MCP server answers a ping and the tool list; notifications get no
// answer.
func ExampleServer() {
	in := strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"server/discover"}` + "\n")
	s := &doorman.Server{In: in, Out: os.Stdout, Version: "0.2.0"}
	s.Serve(context.Background())
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: server/discover"}}
}

// FuzzServer: whatever arrives, stdout carries only JSON-RPC frames, one
// per line.
func FuzzServer(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	f.Add(`{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"name":7}}`)
	f.Add(`[{"jsonrpc":"2.0"}]`)
	f.Fuzz(func(t *testing.T, msg string) {
		var out strings.Builder
		s := &doorman.Server{In: strings.NewReader(msg + "\n"), Out: &out, Report: func() doorman.Report { return doorman.Report{} }}
		if err := s.Serve(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			var v struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal([]byte(l), &v); err != nil || v.JSONRPC != "2.0" {
				t.Fatalf("not a frame: %q", l)
			}
		}
	})
}
