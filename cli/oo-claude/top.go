package main

import (
	"context"
	"flag"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/programs"
	"github.com/oo-family/oo-claude/internal/topreq"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newTopCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("top", flag.ContinueOnError)
	from := fs.String("from", inboxv1.DefaultFrom, "sender `NAME` of the lines sent with s")
	hosts := registerHost(fs, true)
	return &ffcli.Command{
		Name:       "top",
		ShortUsage: "oo-claude top [--from NAME] [--host DEST]...",
		ShortHelp:  "a live view of the station's sessions, riders and events, to steer from (keys: ? in the view)",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if pos, err := positional(fs, args); err != nil {
				return err
			} else if len(pos) > 0 {
				return usagef("top takes no arguments")
			}
			in, inOK := e.stdin.(*os.File)
			out, outOK := e.rawStdout.(*os.File)
			if !inOK || !outOK || !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
				return usagef("top needs a terminal (for a stream of events: oo-claude watch)")
			}
			// A bad knob is this verb's usage error, as for every verb,
			// before the view's program runs.
			if _, err := e.config(); err != nil {
				return err
			}
			self, err := e.self()
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			// The view is its own program (internal/topreq says why).
			return e.program(ctx, programs.Top, topreq.Request{OOClaude: self, From: *from, Hosts: hosts.dests}.Argv())
		},
	}
}
