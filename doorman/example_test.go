package doorman_test

import (
	"context"
	"os"
	"strings"

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
