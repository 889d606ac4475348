package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// ageFlag is a duration above 0: Go's form (36h, 90m) or whole days (7d).
// 0 is a usage error, never the default: the quiet time is what keeps gc
// off the inbox of a session that is starting, and the library reads a
// zero OlderThan as DefaultGCAge, so an explicit 0 silently meant 7 days.
type ageFlag struct{ d *time.Duration }

func (a ageFlag) String() string {
	if a.d == nil {
		return ""
	}
	return a.d.String()
}

func (a ageFlag) Set(v string) error {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.ParseUint(n, 10, 16)
		if err != nil || days == 0 {
			return fmt.Errorf("want a duration above 0 such as 7d or 36h, got %q", v)
		}
		*a.d = time.Duration(days) * 24 * time.Hour
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a duration above 0 such as 7d or 36h, got %q", v)
	}
	*a.d = d
	return nil
}

func newGCCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("gc", flag.ContinueOnError)
	opts := observatory.GCOptions{OlderThan: observatory.DefaultGCAge}
	fs.BoolVar(&opts.DryRun, "dry-run", false, "list what would be removed, remove nothing")
	fs.Var(ageFlag{&opts.OlderThan}, "older-than", "quiet time an inbox needs (default 7d)")
	asJSON := fs.Bool("json", false, "print every inbox's verdict as one JSON array")
	return &ffcli.Command{
		Name:       "gc",
		ShortUsage: "oo-claude gc [--dry-run] [--older-than D] [--json]",
		ShortHelp:  "remove the inbox files of sessions that are gone",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 0 {
				return usagef("gc takes no arguments")
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			opts.Station = station.New(cfg.Paths)
			items, err := observatory.GC(ctx, opts)
			if err != nil {
				return err
			}
			failed := false
			if *asJSON {
				if items == nil {
					items = []observatory.GCItem{}
				}
				if err := printJSONLine(e, items); err != nil {
					return err
				}
				for _, it := range items {
					failed = failed || it.Why == observatory.GCRmFailed || it.Why == observatory.GCUnread
				}
				if failed {
					return exitWith(exitFail)
				}
				return nil
			}
			if printGC(e, items) {
				return exitWith(exitFail)
			}
			return nil
		},
	}
}
