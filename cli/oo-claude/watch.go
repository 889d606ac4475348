package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/internal/hangup"

	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newWatchCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per event and line")
	hosts := registerHost(fs, true)
	return &ffcli.Command{
		Name:       "watch",
		ShortUsage: "oo-claude watch [SESSION] [--json] [--host DEST]...",
		ShortHelp:  "stream the station's events (sessions, doormen, lines, turns, riders) until interrupted",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			if len(hosts.dests) > 0 {
				if len(pos) > 1 {
					return usagef("watch takes at most one session")
				}
				return watchHosts(ctx, e, hosts.dests, pos, *asJSON)
			}
			only, err := resolveOptional(e, pos, "watch")
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
			if f, ok := e.rawStdout.(*os.File); ok {
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
				if _, err := fmt.Fprintln(e.human(), humanEvent(ev)); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// watchHosts is watch --host: the stations' streams merged, each event
// with its station; a dropped connection is station-lost, then
// station-back once it answers again.
//
// watch --host a --host b a/SESSION (STATION/SESSION) is that station's
// stream of that session alone; a SESSION without a station is followed
// on every station.
func watchHosts(ctx context.Context, e *env, dests, pos []string, asJSON bool) error {
	only := ""
	if len(pos) == 1 {
		only = pos[0]
		if d, s, ok := fleet.SplitTarget(dests, only); ok {
			dests, only = []string{d}, s
		}
	}
	hosts, done, err := fleetHosts(e, dests)
	if err != nil {
		return err
	}
	defer done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if f, ok := e.rawStdout.(*os.File); ok {
		go func() {
			if hangup.Await(ctx, f) == nil {
				cancel()
			}
		}()
	}
	o := fleet.WatchOptions{Only: only}
	for ev := range fleet.Watch(ctx, hosts, o) {
		if asJSON {
			if err := printJSONLine(e, ev); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintln(e.human(), ev.Station+" "+humanEvent(ev)); err != nil {
			return err
		}
	}
	return nil
}
