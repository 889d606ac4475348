package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// observatoryFlags are the flags sessions and riders share.
type observatoryFlags struct {
	asJSON bool
	all    bool
	write  string
	hosts  *hostsFlag
}

func (f *observatoryFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.asJSON, "json", false, "print the oo-claude/sessions/v0 document")
	fs.BoolVar(&f.all, "all", false, "also list riders that are quiet or finished")
	fs.StringVar(&f.write, "write", "", "also write the oo-claude/sessions/v0 document to `PATH` (atomically: temp file + rename)")
	f.hosts = registerHost(fs, true)
}

// showDocument reads the station with the knobs (only: one session id, or
// "" for all running sessions), writes the document to --write's path,
// then prints it as JSON or in its human form.
func showDocument(ctx context.Context, e *env, f *observatoryFlags, only string, human func(io.Writer, *observatory.Document) error) (err error) {
	doc, partial, err := buildDocument(ctx, e, f, only)
	if err != nil {
		return err
	}
	if partial != 0 {
		// Printed in full, stations that did not answer included: the
		// exit says the view is incomplete.
		defer func() {
			if err == nil {
				err = exitWith(partial)
			}
		}()
	}
	if f.write != "" {
		b, err := encodeJSON(doc, true)
		if err != nil {
			return err
		}
		if err := fsx.WriteFileAtomic(f.write, b); err != nil {
			return &exitError{code: exitFail, err: fmt.Errorf("--write: %w", err)}
		}
	}
	if f.asJSON {
		// printJSONLine's line, json.Marshal's bytes, from the document's
		// own encoder: no reflection over thousands of riders.
		b, err := doc.AppendJSON(nil)
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(append(b, '\n'))
		return err
	}
	return human(e.human(), doc)
}

func newSessionsCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	var f observatoryFlags
	f.register(fs)
	return &ffcli.Command{
		Name:       "sessions",
		ShortUsage: "oo-claude sessions [--json] [--all] [--write PATH] [--host DEST]...",
		ShortHelp:  "list running sessions with riders, doorman, pending lines and lineage",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usagef("sessions takes no arguments")
			}
			return showDocument(ctx, e, &f, "", writeTree)
		},
	}
}

func newRidersCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("riders", flag.ContinueOnError)
	var f observatoryFlags
	f.register(fs)
	return &ffcli.Command{
		Name:       "riders",
		ShortUsage: "oo-claude riders [SESSION] [--all] [--json] [--write PATH] [--host DEST]...",
		ShortHelp:  "list the sub-agents riding inside sessions",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			if len(pos) == 1 && len(f.hosts.dests) > 0 {
				dest, target, err := hostTarget(f.hosts.dests, pos[0], "riders SESSION")
				if err != nil {
					return err
				}
				return remoteVerb(ctx, e, dest, remoteArgs([]string{"riders"}, fs, []string{target}))
			}
			only, err := resolveOptional(e, pos, "riders")
			if err != nil {
				return err
			}
			return showDocument(ctx, e, &f, only, writeRiders)
		},
	}
}

// resolveOptional takes the positional arguments of riders and watch: at
// most one SESSION, resolved to its session id ("" when there is none).
func resolveOptional(e *env, pos []string, verb string) (string, error) {
	switch {
	case len(pos) > 1:
		return "", usagef("%s takes at most one session", verb)
	case len(pos) == 0:
		return "", nil
	}
	cfg, err := e.config()
	if err != nil {
		return "", err
	}
	t, err := station.New(cfg.Paths).Resolve(pos[0])
	if err != nil {
		return "", &exitError{code: exitFail, err: readMessage(err, "", "")}
	}
	return t.SessionID, nil
}

// noteMissingRegistry says on stderr when the registry directory does not
// exist: "no running sessions" from a station whose knobs name the wrong
// directories would otherwise look like an idle station.
func noteMissingRegistry(e *env, cfg station.Config) {
	if _, err := os.Stat(cfg.SessionsDir); errors.Is(err, fs.ErrNotExist) {
		file := "(none)"
		if k, _ := e.knobs(); k != nil && k.File != "" {
			file = k.File
		}
		fmt.Fprintf(e.stderr, "oo-claude: the registry directory %s does not exist: no Claude Code session ran with this config dir (CLAUDE_CONFIG_DIR, OO_CLAUDE_SESSIONS_DIR; the station file is %s)\n", cfg.SessionsDir, file)
	}
}

// buildDocument is the station's document, or with --host the merged
// document of the stations named (a station that does not answer is in its
// stations list with its error, and said on stderr). partial is the exit
// code of a merge some station failed: fleet.ExitSSH when ssh itself
// failed for one of them, else exitFail; 0 when all answered.
func buildDocument(ctx context.Context, e *env, f *observatoryFlags, only string) (doc *observatory.Document, partial int, err error) {
	if len(f.hosts.dests) > 0 {
		hosts, done, err := fleetHosts(e, f.hosts.dests)
		if err != nil {
			return nil, 0, err
		}
		defer done()
		doc, err := fleet.MergeSessions(ctx, hosts, f.all)
		switch {
		case err == nil:
			return doc, 0, nil
		case errors.Is(err, fleet.ErrSSH):
			partial = fleet.ExitSSH
		default:
			partial = exitFail
		}
		fmt.Fprintf(e.stderr, "oo-claude: %v\n", err)
		return doc, partial, nil
	}
	cfg, err := e.config()
	if err != nil {
		return nil, 0, err
	}
	noteMissingRegistry(e, cfg)
	name := e.stationName(cfg)
	doc, err = observatory.Build(ctx, observatory.Options{
		Station:         station.New(cfg.Paths),
		Hostname:        func() (string, error) { return name, nil },
		RidingWindow:    cfg.RidingWindow,
		IncludeFinished: f.all,
		Only:            only,
		Generator:       "oo-claude " + version.Version,
	})
	if err != nil {
		return nil, 0, &exitError{code: exitFail, err: err}
	}
	return doc, 0, nil
}
