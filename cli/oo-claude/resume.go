package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// headlessRunner builds the runner resume and start share: the knobs, the
// process environment (the child's is scrubbed from it), receipts.
func headlessRunner(e *env) (*headless.Runner, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	return &headless.Runner{
		Config:        cfg,
		Environ:       e.environ,
		PID:           e.pid,
		Receipts:      &receipt.Writer{Path: cfg.ReceiptsFile()},
		ClientVersion: version.Version,
	}, nil
}

func newResumeCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("resume", flag.ContinueOnError)
	var req headless.ResumeRequest
	fs.StringVar(&req.Model, "model", "", "model (default OO_CLAUDE_RESUME_MODEL, claude-haiku-5-5)")
	fs.Var(countFlag{&req.MaxTurns}, "max-turns", fmt.Sprintf("turns (default %d)", headless.DefaultResumeMaxTurns))
	fs.Var(usdFlag{&req.Budget}, "budget", "budget in USD (default 0.25)")
	fs.StringVar(&req.Tools, "tools", "", `tools the turn may use (default "": none)`)
	fs.StringVar(&req.CWD, "cwd", "", "the session's project directory (must encode to the transcript's directory)")
	fs.Var(&secondsFlag{d: &req.Timeout, positive: true}, "timeout", "seconds (default OO_CLAUDE_RESUME_TIMEOUT_S, 300)")
	asJSON := fs.Bool("json", false, "print the receipt row as one JSON line")
	host := registerTargetHost(fs)
	return &ffcli.Command{
		Name:       "resume",
		ShortUsage: `oo-claude resume <sessionId> ["<line>"|-] [--model M] [--max-turns N] [--budget USD] [--tools T] [--cwd DIR] [--timeout S] [--json] [--host DEST]`,
		ShortHelp:  "one headless turn into a session that is not running",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 1 && len(pos) != 2 {
				return usagef(`resume takes <sessionId> ["<line>"]`)
			}
			req.SessionID = pos[0]
			if len(pos) == 2 {
				req.Line = pos[1]
			}
			if req.Line == "-" {
				if req.Line, err = readStdin(e, "resume", "line", inboxv1.MaxLineBytes, true); err != nil {
					return err
				}
			}
			if len(host.dests) > 0 {
				// --cwd is the station's path, passed as given.
				dest, target, err := hostTarget(host.dests, req.SessionID, "resume")
				if err != nil {
					return err
				}
				req.SessionID = target
				return resumeRemote(ctx, e, dest, req, *asJSON)
			}
			r, err := headlessRunner(e)
			if err != nil {
				return err
			}
			if req.Self, err = e.self(); err != nil {
				return fmt.Errorf("the oo-claude binary's path: %w", err)
			}
			st := e.statusLine("resume", "the turn runs (claude -p --resume)", *asJSON)
			if st != nil {
				cwd := req.CWD
				if cwd != "" {
					cwd, _ = filepath.Abs(cwd)
				}
				st.followSession(r.Config.ProjectsDir, req.SessionID, cwd)
			}
			res, rerr := r.Resume(ctx, req)
			st.end()
			row := res.Row(version.Version)
			printReceiptError(e, res.ReceiptWriteError)
			if *asJSON {
				printJSONLine(e, row) // a failed write: verdictUnprinted
				if res.Class == headless.Errored || res.Class == headless.Timeout {
					printWhy(e, res.Class, res.Reason)
				}
			} else {
				printResume(e, res, rerr)
			}
			e.verdictUnprinted(deref(row.MsgID), "")
			if res.Class != headless.DeliveredResume {
				if err := signalExit(ctx); err != nil {
					return err // interrupted: the process group was stopped
				}
			}
			return exitWith(res.Class.ExitCode())
		},
	}
}
