package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newWatchCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per event and line")
	return &ffcli.Command{
		Name:       "watch",
		ShortUsage: "oo-claude watch [SESSION] [--json]",
		ShortHelp:  "stream the station's events (sessions, doormen, lines, turns, riders) until interrupted",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			only, err := optionalSession(e, fs, args, "watch")
			if err != nil {
				return err
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			ch, err := observatory.Watch(ctx, observatory.WatchOptions{Station: station.New(cfg.Paths), Only: only})
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			for ev := range ch {
				if *asJSON {
					if err := printJSONLine(e, ev); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintln(e.human(), humanEvent(ev))
			}
			return nil
		},
	}
}
