// Command oo-claude-top is oo-claude's live view (oo-claude top): the
// station's sessions, riders and events, to steer from. `oo-claude top`
// runs it: oo-claude checks the verb's flags, then execs this program
// beside it (same pid, stdio and terminal), so that oo-claude, which every
// send starts, does not link the Charm stack the view is drawn with.
//
// Install it with oo-claude (go install ./cli/...); it is not meant to be
// run by hand. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/oo-family/oo-claude/internal/topcmd"
)

func main() {
	// SIGINT and SIGTERM end the view as q does, its terminal restored.
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	os.Exit(topcmd.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, os.Environ()))
}
