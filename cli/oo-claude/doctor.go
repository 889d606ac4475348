package main

import (
	"context"
	"flag"

	"github.com/oo-family/oo-claude/doctor"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newDoctorCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	host := registerHost(fs, false)
	return &ffcli.Command{
		Name:       "doctor",
		ShortUsage: "oo-claude doctor [--json] [--host DEST]",
		ShortHelp:  "check that this station is ready (exit 1 when there are findings)",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("doctor takes no arguments")
			}
			if len(host.dests) > 0 {
				return remoteVerb(ctx, e, host.dests[0], remoteArgs([]string{"doctor"}, fs, nil))
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			self, err := e.self()
			if err != nil {
				self = ""
			}
			knobs, _ := e.knobs() // e.config read it without error
			rep := doctor.Run(ctx, doctor.Options{
				Environ: knobs,
				Station: e.stationName(cfg),
				Config:  cfg,
				Self:    self,
				Program: func(name string) error {
					_, err := e.lookProgram(name)
					return err
				},
				PID:       e.pid,
				SessionID: e.getenv("CLAUDE_CODE_SESSION_ID"),
				// The library takes the version it reports from its caller.
				ProvenAgainst: version.ProvenAgainst,
			})
			if *asJSON {
				if err := printJSONLine(e, rep); err != nil {
					return err
				}
			} else if err := writeDoctor(e, rep); err != nil {
				return err
			}
			if !rep.OK() {
				return exitWith(exitFail)
			}
			return nil
		},
	}
}
