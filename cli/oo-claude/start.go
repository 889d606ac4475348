package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/internal/seconds"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newStartCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	var req headless.StartRequest
	fs.StringVar(&req.CWD, "cwd", "", "where the session runs (default: the current directory)")
	fs.StringVar(&req.Model, "model", "", "model (default OO_CLAUDE_START_MODEL, claude-haiku-5-5)")
	fs.Var(countFlag{&req.MaxTurns}, "max-turns", fmt.Sprintf("turns (default %d)", headless.DefaultStartMaxTurns))
	fs.Var(usdFlag{&req.Budget}, "budget", "budget in USD (default 0.25)")
	fs.StringVar(&req.Tools, "tools", "", `tools the session may use (default "": none)`)
	fs.StringVar(&req.AllowedTools, "allowed-tools", "", `permission rules, e.g. "Bash(git status *) Read"`)
	fs.StringVar(&req.SessionID, "session-id", "", "the new session's id (default: a new UUID)")
	fs.StringVar(&req.Name, "name", "", "a name, recorded in the result file only")
	fs.StringVar(&req.Out, "out", "", "the result file (default <state dir>/start/<uuid>.json)")
	fs.BoolVar(&req.Systemd, "systemd", false, "detach as a systemd user unit and return at once")
	fs.Var(&secondsFlag{d: &req.Timeout, positive: true}, "timeout", "seconds (default OO_CLAUDE_START_TIMEOUT_S, 900)")
	asJSON := fs.Bool("json", false, "print the result file (--systemd: {state, unit, resultFile, session_id})")
	noDoorman := fs.Bool("no-doorman", false, "no MCP server at all")
	userMCP := fs.Bool("user-mcp", false, "the user-scope MCP servers instead of the injected doorman")
	fs.BoolVar(&req.NoLineage, "no-lineage", false, "do not record the calling session as the parent")
	unit := fs.String("foreground-unit", "", "(internal) run the detached start whose result file this is")
	host := registerHost(fs, false)
	return &ffcli.Command{
		Name: "start",
		ShortUsage: `oo-claude start "<prompt>"|- [--cwd DIR] [--model M] [--max-turns N] [--budget USD] [--tools T] [--allowed-tools "…"] ` +
			`[--session-id UUID] [--name NAME] [--out FILE] [--systemd] [--timeout S] [--json] [--no-doorman | --user-mcp] [--no-lineage] [--host DEST]`,
		ShortHelp: "start a new headless session the family can steer",
		FlagSet:   fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			r, err := headlessRunner(e)
			if err != nil {
				return err
			}
			if *unit != "" {
				if len(pos) != 0 || len(host.dests) > 0 {
					return usagef("--foreground-unit takes no prompt")
				}
				res, rerr := r.RunUnit(ctx, *unit)
				return finishStart(ctx, e, res, rerr, *asJSON)
			}
			if len(pos) != 1 {
				return usagef(`start takes one "<prompt>"`)
			}
			if *noDoorman && *userMCP {
				return usagef("--no-doorman and --user-mcp exclude each other")
			}
			req.Prompt = pos[0]
			if req.Prompt == "-" {
				if req.Prompt, err = textFromStdin(e, "start", "prompt", maxStdinPrompt); err != nil {
					return err
				}
			}
			switch {
			case *noDoorman:
				req.Doorman = headless.DoormanNone
			case *userMCP:
				req.Doorman = headless.DoormanUserScope
			}
			if len(host.dests) > 0 {
				// --cwd and --out are the station's paths, passed as
				// given: no path of this machine goes to the station.
				return startRemote(ctx, e, host.dests[0], req, *asJSON)
			}
			if req.CWD == "" {
				if req.CWD, err = e.getwd(); err != nil {
					return err
				}
			} else if req.CWD, err = filepath.Abs(req.CWD); err != nil {
				return err
			}
			if req.Out != "" {
				if req.Out, err = filepath.Abs(req.Out); err != nil {
					return err
				}
			}
			if req.Self, err = e.self(); err != nil {
				return fmt.Errorf("the oo-claude binary's path: %w", err)
			}
			phase := "the session runs (claude -p)"
			if req.Systemd {
				phase = "starting the unit"
			}
			st := e.statusLine("start", phase, *asJSON)
			if st != nil && !req.Systemd {
				// The line follows the new session's transcript: its id
				// is chosen here so the path is known before claude runs.
				if req.SessionID == "" {
					req.SessionID = uuid.NewString()
				}
				st.followSession(r.Config.ProjectsDir, req.SessionID, req.CWD)
			}
			res, rerr := r.Start(ctx, req)
			st.end()
			return finishStart(ctx, e, res, rerr, *asJSON)
		},
	}
}

// maxStdinPrompt bounds start's "-" read; the prompt's own rule
// (headless, on the station that runs it) refuses a longer one than it
// takes, with its reason.
const maxStdinPrompt = 1 << 20

func finishStart(ctx context.Context, e *env, res headless.StartResult, err error, asJSON bool) error {
	printReceiptError(e, res.ReceiptWriteError)
	switch {
	case asJSON && res.Class == headless.Started:
		if err := printJSONLine(e, res.Detached()); err != nil {
			return err
		}
	case asJSON:
		if err := printJSONLine(e, res.File); err != nil {
			return err
		}
		if res.Class == headless.Failed || res.Class == headless.Timeout {
			printWhy(e, res.Class, res.Reason)
		}
	default:
		printStart(e, res, err)
	}
	if res.Class != headless.Completed && res.Class != headless.Started {
		if err := signalExit(ctx); err != nil {
			return err // interrupted: the process group was stopped
		}
	}
	return exitWith(res.Class.ExitCode())
}

// usdFlag is a budget in USD: a plain decimal number above 0, the rule of
// every number a flag takes (seconds.Decimal): NaN, the infinities, a hex
// float ("0x1p1" was a budget of 2) and underscores ("1_0" was 10) are
// usage errors, as a flag that does not parse.
type usdFlag struct{ v *float64 }

func (u usdFlag) String() string {
	if u.v == nil || *u.v == 0 {
		return ""
	}
	return strconv.FormatFloat(*u.v, 'f', -1, 64)
}

func (u usdFlag) Set(s string) error {
	f, ok := seconds.Decimal(s)
	if !ok || f <= 0 {
		return fmt.Errorf("want a decimal number of USD > 0, got %q", s)
	}
	*u.v = f
	return nil
}
