package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"

	"github.com/oo-family/oo-claude/internal/version"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newVersionCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	return &ffcli.Command{
		Name:       "version",
		ShortUsage: "oo-claude version [--json]",
		ShortHelp:  "print the version",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("version takes no arguments")
			}
			if *asJSON {
				return printJSONLine(e, map[string]string{
					"name": "oo-claude", "version": version.Version, "go": runtime.Version(),
					"proven_against_claude_code": version.ProvenAgainst,
				})
			}
			_, err := fmt.Fprintln(e.stdout, versionLine())
			return err
		},
	}
}
