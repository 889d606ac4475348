// Command oo-claude-doorman is oo-claude's doorman: a session's MCP server
// and the follow loop that carries its inbox's lines through the session's
// door. `oo-claude doorman` runs it: oo-claude checks the verb's flags,
// then execs this program beside it (same pid, stdio and parent), so that
// oo-claude, which every send starts, does not link the MCP SDK.
//
// Install it with oo-claude (go install ./cli/...); it is not meant to be
// run by hand. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/oo-family/oo-claude/internal/doormancmd"
)

func main() {
	// SIGINT and SIGTERM end the doorman (Claude Code stops its MCP
	// servers so); the process exits with it, so the notification is
	// never stopped.
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	os.Exit(doormancmd.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
