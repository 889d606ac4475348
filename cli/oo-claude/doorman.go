package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// Exit codes of the foreground doorman.
const (
	exitNotHere        = 3 // not deliverable here (an identity state)
	exitDeliveryFailed = 4 // a delivery failed and the line waits
)

func newDoormanCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("doorman", flag.ContinueOnError)
	mcp := fs.Bool("mcp", false, "speak MCP over stdio while the follow loop runs (the registration's way)")
	allow := fs.Bool("allow-foreground", false, "run the foreground loop: it delivers into the session this process descends from")
	session := fs.String("session", "", "the session id the owner must be (never trusted without its registry row)")
	once := fs.Bool("once", false, "foreground: replay the unread lines, then exit")
	asJSON := fs.Bool("json", false, "foreground: print the final status as one JSON line")
	return &ffcli.Command{
		Name:       "doorman",
		ShortUsage: "oo-claude doorman --mcp · oo-claude doorman --allow-foreground [--session ID] [--once] [--json]",
		ShortHelp:  "the receiver: carry the inbox's lines through the session's door",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			switch {
			case len(args) > 0:
				return usagef("doorman takes no arguments")
			case *mcp && (*allow || *once || *session != "" || *asJSON):
				return usagef("--mcp takes no other flag")
			case !*mcp && !*allow:
				return usagef("doorman refuses to run without --allow-foreground (or --mcp): a doorman delivers into the session it descends from")
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			oneProc(e.getenv)
			mode := doorman.ModeCLI
			if *mcp {
				mode = doorman.ModeMCP
			}
			dm := doorman.New(doorman.Options{
				Host:   doorman.ThisProcess(cfg, e.getenv),
				Config: cfg, Mode: mode, Session: *session, Once: *once,
				Log: e.stderr, Version: version.Version,
			})
			if *mcp {
				// stdin's EOF or a signal stops it; its answers and
				// the loop's fate are the MCP tool's, not an exit code.
				dm.ServeMCP(ctx, &doorman.Server{In: e.stdin, Out: e.stdout})
				return nil
			}
			err = dm.Run(ctx)
			if *asJSON {
				// The status is a --json caller's account of the run: one
				// that cannot be encoded or written is an error of its
				// own, beside the run's.
				if perr := printJSONLine(e, dm.Status()); perr != nil {
					perr = fmt.Errorf("doorman --json: the final status: %w", perr)
					if err == nil {
						return perr // exit 1: the run went well, its account did not
					}
					err = errors.Join(err, perr)
				}
			}
			return doormanExit(err)
		},
	}
}

// oneProc runs the doorman's process on one P (GOMAXPROCS 1) unless the
// environment sets GOMAXPROCS. A doorman is I/O-bound: its goroutines
// (the follow loop, the heartbeat, the MCP server, the file and exit
// waits) wait for events and run a little Go code each; one blocked in a
// system call hands the P on, so none waits out another's disk write.
// With a second P, each goroutine woken also woke an idle thread to spin
// for work, and the runtime re-read the cgroup's CPU limit each second it
// was awake (a GOMAXPROCS set by hand ends that): an idle doorman woke 81
// times a minute on two Ps, 36 on one.
func oneProc(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// doormanExit maps the foreground doorman's result to its documented exit
// codes: 0, 3 (not deliverable here) and 4 (a delivery failed, or an ack,
// offset or inbox could not be read or written: the line waits). A --json
// status that cannot be printed after a good run is exit 1.
func doormanExit(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, doorman.ErrNotDeliverable):
		return &exitError{code: exitNotHere, err: err}
	}
	return &exitError{code: exitDeliveryFailed, err: err}
}
