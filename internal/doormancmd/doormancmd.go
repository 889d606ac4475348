// Package doormancmd is the doorman program, oo-claude-doorman: what
// `oo-claude doorman` runs once it has checked its flags. oo-claude execs
// the program (see internal/doormanreq), so the MCP SDK the doorman links
// is started only by the doorman, never by a send.
package doormancmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/internal/doormanreq"
	"github.com/oo-family/oo-claude/internal/termsafe"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/oo-family/oo-claude/station"
)

// The doorman's exit codes (v0.1's): 0, 1 when a --json status could not
// be printed after a good run, 2 for a command line or a knob it cannot
// run with, 3 and 4 as below. ExitDeliveryFailed is exported for the
// tests of oo-claude's doorman verb.
const (
	exitOK             = 0
	exitFail           = 1
	exitUsage          = 2
	exitNotHere        = 3 // not deliverable here (an identity state)
	ExitDeliveryFailed = 4 // a delivery failed and the line waits
)

// Main runs the doorman that args (the program's arguments after its path,
// as doormanreq.Request.Argv writes them) ask for, with the knobs from
// getenv over the station file, and returns the exit code. What goes
// wrong is printed on stderr, escaped, as oo-claude prints it.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	stderr = termsafe.NewWriter(stderr)
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "oo-claude: %v\n", err)
		return code
	}
	req, err := doormanreq.Parse(args)
	if err != nil {
		return fail(exitUsage, fmt.Errorf("%w (this program is run by `oo-claude doorman`: see oo-claude help doorman)", err))
	}
	knobs, err := station.LoadEnviron(getenv)
	if err != nil {
		return fail(exitUsage, err)
	}
	cfg, err := station.ConfigFromEnv(knobs.Getenv)
	if err != nil {
		return fail(exitUsage, err)
	}
	oneProc(knobs.Getenv)
	mode := doorman.ModeCLI
	if req.MCP {
		mode = doorman.ModeMCP
	}
	dm := doorman.New(doorman.Options{
		Host:   doorman.ThisProcess(cfg, knobs.Getenv),
		Config: cfg, Mode: mode, Session: req.Session, Once: req.Once,
		Log: stderr, Version: version.Version,
	})
	if req.MCP {
		// stdin's EOF or a signal stops it; its answers and the loop's
		// fate are the MCP tool's, not an exit code.
		dm.ServeMCP(ctx, &doorman.Server{In: stdin, Out: stdout})
		return exitOK
	}
	err = dm.Run(ctx)
	if req.JSON {
		// The status is a --json caller's account of the run: one that
		// cannot be encoded or written is an error of its own, beside
		// the run's.
		if perr := printJSONLine(stdout, dm.Status()); perr != nil {
			perr = fmt.Errorf("doorman --json: the final status: %w", perr)
			if err == nil {
				return fail(exitFail, perr) // the run went well, its account did not
			}
			err = errors.Join(err, perr)
		}
	}
	if err == nil {
		return exitOK
	}
	return fail(ExitCode(err), err)
}

// ExitCode maps the foreground doorman's error to its documented exit
// code: 0 for nil, 3 (not deliverable here) and 4 (a delivery failed, or
// an ack, offset or inbox could not be read or written: the line waits).
func ExitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, doorman.ErrNotDeliverable):
		return exitNotHere
	}
	return ExitDeliveryFailed
}

// printJSONLine writes v as one line of JSON in one write.
func printJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
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
