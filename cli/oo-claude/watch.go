package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/oo-family/oo-claude/internal/hangup"

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
			noteMissingRegistry(e, cfg)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if f, ok := e.stdout.(*os.File); ok {
				// The reader gone (ssh's connection dropped, a pipe's
				// reader killed) ends the watch at once, also on an idle
				// station where no write would fail.
				go func() {
					if hangup.Await(ctx, f) == nil {
						cancel()
					}
				}()
			}
			ch, err := observatory.Watch(ctx, observatory.WatchOptions{Station: station.New(cfg.Paths), Only: only})
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			name := e.stationName(cfg)
			for ev := range ch {
				ev.Station = name
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
