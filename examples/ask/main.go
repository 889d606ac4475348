// Command ask asks a Claude Code session a question and prints its answer:
// the line is delivered, then the session's transcript is followed until
// the model has answered it (what `oo-claude send --reply` does).
//
//	go run ./examples/ask work-e9 "what is the build status?"
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/station"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ask TARGET QUESTION")
		os.Exit(2)
	}
	cfg, err := station.ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sender := claudeinbox.NewSender(cfg)
	sender.ReplyWait = 5 * time.Minute // the budget for the model's answer (NewSender set the witness)

	v, err := sender.Send(context.Background(), claudeinbox.Request{
		Target: os.Args[1], Line: os.Args[2], From: "example-ask",
	})
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "ask: %s: %v\n", v.Class, err)
		os.Exit(v.Class.ExitCode())
	case !v.Class.Delivered():
		fmt.Fprintf(os.Stderr, "ask: %s (%s)\n", v.Class, v.Note)
		os.Exit(v.Class.ExitCode())
	case v.Reply == nil:
		fmt.Fprintf(os.Stderr, "ask: delivered, but no answer within %v\n", v.ReplyWait)
		os.Exit(5)
	}
	fmt.Println(v.Reply.Text)
}
