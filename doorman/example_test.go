package doorman_test

import (
	"context"
	"os"
	"strings"

	"github.com/oo-family/oo-claude/doorman"
)

// The MCP server answers a server/discover probe of the 2026-07-28
// revision (what Claude Code sends first): the revisions it speaks, the
// one capability it serves and the caching hints the revision requires;
// notifications get no answer.
func ExampleServer() {
	in := strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n")
	s := &doorman.Server{In: in, Out: os.Stdout, Version: "0.2.0"}
	s.Serve(context.Background())
	// Output:
	// {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"oo-claude-doorman","version":"0.2.0"}},"ttlMs":0,"cacheScope":"private","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{}}}}
}

// A program is its own doorman: the first call in its main serves
// "<program> doorman --mcp" (what headless injects for its Self, and what
// `claude mcp add -- <program> doorman --mcp` registers) and exits;
// otherwise it returns and main goes on, and the program can start
// sessions with its own executable as headless's Self.
func ExampleServeIfInvoked() {
	doorman.ServeIfInvoked(context.Background())
	// ... the program: its own executable serves the sessions it starts.
	self, _ := os.Executable()
	_ = self // headless.StartRequest{Self: self, ...}
}
