package main

import (
	"context"
	"flag"

	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newReadCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("read", flag.ContinueOnError)
	turns := transcript.DefaultExchanges
	fs.Var(countFlag{&turns}, "turns", "how many exchanges to show, the newest last")
	asJSON := fs.Bool("json", false, "print one JSON object")
	host := registerTargetHost(fs)
	return &ffcli.Command{
		Name:       "read",
		ShortUsage: "oo-claude read <sessionId|name|pid> [--turns N] [--json] [--host DEST]",
		ShortHelp:  "show the last exchanges of a session's transcript",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 1 {
				return usagef("read takes one session (id, name or pid)")
			}
			if len(host.dests) > 0 {
				dest, target, err := hostTarget(host.dests, pos[0], "read")
				if err != nil {
					return err
				}
				return remoteVerb(ctx, e, dest, remoteArgs([]string{"read"}, fs, []string{target}))
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			res, err := transcript.ReadSession(station.New(cfg.Paths), cfg.ProjectsDir, pos[0], turns)
			if err != nil {
				return &exitError{code: exitFail, err: readMessage(err, res.Session, cfg.ProjectsDir)}
			}
			if *asJSON {
				return printJSONLine(e, res)
			}
			return writeExchanges(e.human(), res)
		},
	}
}
