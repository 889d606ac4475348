package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/oo-family/oo-claude/station"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// env is what every verb is given: stdio, the environment and the knobs.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// config is read lazily: `version` and usage errors must work even
	// when a knob is bad.
	config func() (station.Config, error)
	// self is the absolute path of this binary (for the doorman command
	// that start injects and doctor checks).
	self func() (string, error)
}

func newEnv(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *env {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	e.config = func() (station.Config, error) {
		c, err := station.ConfigFromEnv(getenv)
		if err != nil {
			return c, usagef("%v", err)
		}
		return c, nil
	}
	e.self = os.Executable
	return e
}

// verbs lists every subcommand constructor. Each lives in its own file.
var verbs = []func(*env) *ffcli.Command{
	newSendCmd,
	newDoormanCmd,
	newResumeCmd,
	newStartCmd,
	newReadCmd,
	newSessionsCmd,
	newRidersCmd,
	newLineageCmd,
	newDoctorCmd,
	newVersionCmd,
}

// run is the whole program: main only adds the process's stdio, signals and
// exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	e := newEnv(stdin, stdout, stderr, getenv)
	root := &ffcli.Command{
		Name:       "oo-claude",
		ShortUsage: "oo-claude <verb> [flags] [args]",
		ShortHelp:  "reach the Claude Code sessions of this machine",
		FlagSet:    flag.NewFlagSet("oo-claude", flag.ContinueOnError),
		Exec: func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("unknown verb %q (oo-claude -h lists them)", args[0])
			}
			return flag.ErrHelp
		},
	}
	root.FlagSet.SetOutput(stderr)
	for _, v := range verbs {
		c := v(e)
		c.FlagSet.SetOutput(stderr)
		root.Subcommands = append(root.Subcommands, c)
	}
	root.UsageFunc = func(c *ffcli.Command) string {
		var b strings.Builder
		fmt.Fprintf(&b, "USAGE\n  %s\n\nVERBS\n", c.ShortUsage)
		for _, s := range c.Subcommands {
			fmt.Fprintf(&b, "  %-10s %s\n", s.Name, s.ShortHelp)
		}
		return b.String()
	}
	// Parse and Run are separate so that every parse failure, and only
	// those, is a usage error (exit 2) without matching error strings.
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &usageError{msg: err.Error()}
	}
	err := root.Run(ctx)
	if errors.Is(err, flag.ErrHelp) {
		// The root alone was called: ff printed the verbs; exit 2.
		return exitWith(exitUsage)
	}
	return err
}
