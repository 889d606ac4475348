// Command send sends one line to a Claude Code session and branches on the
// verdict, as a dispatcher does: delivered, waiting in the inbox, throttled
// or refused. It exits with the verdict's exit code, as `oo-claude send`.
//
//	go run ./examples/send work-e9 "please also run the linter"
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/station"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: send TARGET LINE")
		os.Exit(2)
	}
	cfg, err := station.ConfigFromEnv(os.Getenv) // the OO_CLAUDE_* knobs
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := claudeinbox.NewSender(cfg).Send(ctx, claudeinbox.Request{
		Target: os.Args[1], Line: os.Args[2], From: "example-send",
	})
	switch {
	case errors.Is(err, station.ErrUnknownTarget):
		fmt.Printf("no session is called %q\n", os.Args[1])
	case errors.Is(err, claudeinbox.ErrRefused):
		fmt.Printf("refused (%s): %v\n", v.Reason, err)
	case err != nil:
		fmt.Printf("%s: %v\n", v.Class, err)
	case v.Class.Delivered():
		fmt.Printf("delivered to %s (msg_id %s, session %s)\n", v.SessionID, v.MsgID, v.PeerStatus)
	case v.Class == claudeinbox.Dropped:
		fmt.Printf("throttled: resend in %v\n", v.RetryAfter.Round(time.Second))
	case v.Class.Waiting(): // queued-no-doorman, queued-offline, timeout
		fmt.Printf("%s: the line waits in %s; do not resend it\n", v.Class, v.Inbox)
	}
	os.Exit(v.Class.ExitCode())
}
