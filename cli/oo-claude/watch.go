package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

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
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			if len(pos) > 1 {
				return usagef("watch takes at most one session")
			}
			only, err := onlySession(e, pos)
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
					b, err := json.Marshal(ev)
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "%s\n", b)
					continue
				}
				fmt.Fprintln(e.human(), humanEvent(ev))
			}
			return nil
		},
	}
}

// humanEvent is one readable line per event, e.g.
// "2026-12-01T08:40:00.123Z line-delivered 017c3f59… msg_id=… class=delivered-steer".
func humanEvent(ev observatory.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", ev.TS, ev.Event, shortID(ev.Session))
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", k, v)
		}
	}
	kv("name", ev.Name)
	if ev.PID > 0 {
		kv("pid", fmt.Sprint(ev.PID))
	}
	kv("status", ev.Status)
	kv("doorman", ev.Doorman)
	kv("reason", ev.Reason)
	kv("msg_id", ev.MsgID)
	kv("class", ev.Class)
	kv("agent", ev.Agent)
	if ev.LineOffset != nil {
		kv("line_offset", fmt.Sprint(*ev.LineOffset))
	}
	if ev.Dropped > 0 {
		kv("dropped", fmt.Sprint(ev.Dropped))
	}
	for _, x := range []struct{ k, v string }{{"description", ev.Description}, {"line", ev.Line}, {"text", ev.Text}} {
		if x.v != "" {
			fmt.Fprintf(&b, " %s=%q", x.k, x.v)
		}
	}
	if ev.Initial {
		b.WriteString(" (already so)")
	}
	return b.String()
}
