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
