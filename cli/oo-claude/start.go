package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/internal/ids"
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
	fs.BoolVar(&req.Detach, "detach", false, "return once the session is steerable, printing its id; the run goes on under a supervisor of its own (with --systemd, the unit)")
	fs.Var(&secondsFlag{d: &req.Timeout, positive: true}, "timeout", "seconds (default OO_CLAUDE_START_TIMEOUT_S, 900)")
	asJSON := fs.Bool("json", false, "print the result file (--systemd: {state, unit, resultFile, session_id}; --detach: the result file so far)")
	noDoorman := fs.Bool("no-doorman", false, "no MCP server at all")
	userMCP := fs.Bool("user-mcp", false, "the user-scope MCP servers instead of the injected doorman")
	fs.BoolVar(&req.NoLineage, "no-lineage", false, "do not record the calling session as the parent")
	fs.StringVar(&req.Parent, "parent", "", "the session id to record as the parent, instead of the calling session")
	unit := fs.String("foreground-unit", "", "(internal) run the detached start whose result file this is")
	host := registerHost(fs, false)
	return &ffcli.Command{
		Name: "start",
		ShortUsage: `oo-claude start "<prompt>"|- [--cwd DIR] [--model M] [--max-turns N] [--budget USD] [--tools T] [--allowed-tools "…"] ` +
			`[--session-id UUID] [--name NAME] [--out FILE] [--systemd] [--detach] [--timeout S] [--json] [--no-doorman | --user-mcp] [--no-lineage | --parent UUID] [--host DEST]`,
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
				return finishStart(ctx, e, res, rerr, *asJSON, false)
			}
			if len(pos) != 1 {
				return usagef(`start takes one "<prompt>"`)
			}
			if err := completeStart(e, &req, pos[0], *noDoorman, *userMCP); err != nil {
				return err
			}
			if len(host.dests) > 0 {
				if req.Detach || req.Parent != "" {
					return usagef("--detach and --parent do not go with --host yet")
				}
				// --cwd and --out are the station's paths, passed as
				// given: no path of this machine goes to the station.
				return startRemote(ctx, e, host.dests[0], req, *asJSON)
			}
			if err := localStart(e, &req); err != nil {
				return err
			}
			phase := "the session runs (claude -p)"
			switch {
			case req.Detach:
				phase = "starting the session until it is steerable"
			case req.Systemd:
				phase = "starting the unit"
			}
			st := e.statusLine("start", phase, *asJSON)
			if st != nil && !req.Systemd {
				// The line follows the new session's transcript: its id
				// is chosen here so the path is known before claude runs.
				if req.SessionID == "" {
					req.SessionID = ids.New()
				}
				st.followSession(r.Config.ProjectsDir, req.SessionID, req.CWD)
			}
			res, rerr := r.Start(ctx, req)
			st.end()
			return finishStart(ctx, e, res, rerr, *asJSON, req.Detach)
		},
	}
}

// maxStdinPrompt bounds start's "-" read; the prompt's own rule
// (headless, on the station that runs it) refuses a longer one than it
// takes, with its reason.
const maxStdinPrompt = 1 << 20

// completeStart fills in what the flags leave to the CLI on any station:
// the prompt (read from stdin for "-") and the doorman mode.
func completeStart(e *env, req *headless.StartRequest, prompt string, noDoorman, userMCP bool) error {
	if noDoorman && userMCP {
		return usagef("--no-doorman and --user-mcp exclude each other")
	}
	if req.NoLineage && req.Parent != "" {
		// The synopsis's other [a | b]: a usage error too (the
		// library refuses the pair, bad-parent, for its callers).
		return usagef("--no-lineage and --parent exclude each other")
	}
	req.Prompt = prompt
	if req.Prompt == "-" {
		var err error
		if req.Prompt, err = textFromStdin(e, "start", "prompt", maxStdinPrompt); err != nil {
			return err
		}
	}
	switch {
	case noDoorman:
		req.Doorman = headless.DoormanNone
	case userMCP:
		req.Doorman = headless.DoormanUserScope
	}
	return nil
}

// localStart fills in this machine's paths: the absolute cwd and result
// file, the binary's own path.
func localStart(e *env, req *headless.StartRequest) error {
	var err error
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
	return nil
}

func finishStart(ctx context.Context, e *env, res headless.StartResult, err error, asJSON, detach bool) error {
	printReceiptError(e, res.ReceiptWriteError)
	// A failed write is kept by e.out: verdictUnprinted below.
	switch {
	case detach && res.Class == headless.Started:
		printSteerable(e, res, asJSON)
	case asJSON && res.Class == headless.Started:
		printJSONLine(e, res.Detached())
	case asJSON:
		printJSONLine(e, res.File)
		if res.Class == headless.Failed || res.Class == headless.Timeout {
			printWhy(e, res.Class, res.Reason)
		}
	default:
		printStart(e, res, err)
	}
	e.verdictUnprinted("", "")
	if detach && err != nil && res.Class != headless.Refused {
		// It ended (or the wait was interrupted) before it was steerable.
		fmt.Fprintf(e.stderr, "oo-claude: %v\n", err)
	}
	if res.Class != headless.Completed && res.Class != headless.Started {
		if err := signalExit(ctx); err != nil {
			return err // interrupted: the process group was stopped
		}
	}
	return exitWith(res.Class.ExitCode())
}

// printSteerable is the answer of start --detach once the session is
// steerable: its id (--json: the result file so far).
func printSteerable(e *env, res headless.StartResult, asJSON bool) {
	if asJSON {
		printJSONLine(e, res.File)
		return
	}
	fmt.Fprintln(e.stdout, res.File.SessionID)
	fmt.Fprintf(e.stderr, "oo-claude: started: %s is steerable; result file %s\n", res.File.SessionID, res.File.ResultFile)
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
