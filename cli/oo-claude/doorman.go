package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"syscall"

	"github.com/oo-family/oo-claude/internal/doormanreq"
	"github.com/oo-family/oo-claude/internal/programs"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newDoormanCmd(e *env) *ffcli.Command {
	flags := flag.NewFlagSet("doorman", flag.ContinueOnError)
	mcp := flags.Bool("mcp", false, "speak MCP over stdio while the follow loop runs (the registration's way)")
	allow := flags.Bool("allow-foreground", false, "run the foreground loop: it delivers into the session this process descends from")
	session := flags.String("session", "", "the session id the owner must be (never trusted without its registry row)")
	once := flags.Bool("once", false, "foreground: replay the unread lines, then exit")
	asJSON := flags.Bool("json", false, "foreground: print the final status as one JSON line")
	return &ffcli.Command{
		Name:       "doorman",
		ShortUsage: "oo-claude doorman --mcp · oo-claude doorman --allow-foreground [--session ID] [--once] [--json]",
		ShortHelp:  "the receiver: carry the inbox's lines through the session's door",
		FlagSet:    flags,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("doorman takes no arguments")
			}
			req := doormanreq.Request{MCP: *mcp, Foreground: *allow, Session: *session, Once: *once, JSON: *asJSON}
			if err := req.Check(); err != nil {
				return usagef("%v", err)
			}
			return e.program(ctx, programs.Doorman, req.Argv())
		},
	}
}

// execProgram is how oo-claude runs a program of its own (the doorman's,
// top's): it replaces this process with the program name beside self
// (this binary), argv its arguments and environ its environment, so the
// program keeps this process's pid, stdio and parent (for the doorman, the
// session that started it). It returns only when the program cannot be
// run, or when ctx ended first: a SIGINT or SIGTERM this process took
// (Claude Code stopping its MCP servers) would be lost across the exec, so
// the process exits with it instead (130 / 143).
func execProgram(self func() (string, error), environ func() []string) func(context.Context, string, []string, io.Reader, io.Writer, io.Writer) error {
	return func(ctx context.Context, name string, argv []string, _ io.Reader, _, _ io.Writer) error {
		if err := ended(ctx); err != nil {
			return err
		}
		path, err := findProgram(self, name)
		if err != nil {
			return err
		}
		if err := ended(ctx); err != nil { // again, as close to the exec as can be
			return err
		}
		err = syscall.Exec(path, append([]string{path}, argv...), environ())
		return fmt.Errorf("%s: exec %s: %w", name, path, err)
	}
}

// ended is nil while ctx runs; then the exit of the signal that ended it,
// else ctx's error.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		if serr := signalExit(ctx); serr != nil {
			return serr
		}
		return err
	}
	return nil
}

// findProgram returns the path of the program name beside self, when it
// is one to run (programs.Beside); its error matches
// programs.ErrUnusable.
func findProgram(self func() (string, error), name string) (string, error) {
	exe, err := self()
	if err != nil {
		return "", fmt.Errorf("%s: %w: this binary's path: %w", name, programs.ErrUnusable, err)
	}
	path, err := programs.Beside(exe, name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return path, nil
}
