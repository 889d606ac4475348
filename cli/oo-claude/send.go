package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/transcript"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newSendCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	from := fs.String("from", inboxv1.DefaultFrom, "sender `NAME` for the tag (1–80 characters, no brackets)")
	asJSON := fs.Bool("json", false, "print the receipt row as one JSON line")
	noTag := fs.Bool("no-tag", false, "send the line as it is, without a [NAME 📡] tag")
	expectStart := fs.Bool("expect-start", false, "queue the line for a full session id that no running session and no transcript here has yet: a session about to be started with that id (oo-claude start --session-id); without it such an id is refused as unknown-session, a mistyped id")
	priority := fs.String("priority", "", "when the session sees the line: `now` (at once: it aborts the running tool), next (the default: at the next tool round, or a new turn when idle) or later (a turn of its own after the running one)")
	var waitD, minIntervalD, seenD, replyD time.Duration
	wait, minInterval, seen, reply := secondsFlag{d: &waitD}, secondsFlag{d: &minIntervalD}, secondsFlag{d: &seenD}, secondsFlag{d: &replyD}
	fs.Var(&wait, "wait", "wait `S` seconds for the doorman's ack (default OO_CLAUDE_WAIT_S or 5)")
	fs.Var(&seen, "seen", "after a delivered-* verdict, wait up to `S` seconds for the session's transcript to show the line (the proof the model saw it; the exit code stays the class's)")
	fs.Var(&reply, "reply", "after a delivered-* verdict, wait up to `S` seconds for the model to take the line and answer it, and print the answer after the verdict line (implies --seen within the same S; the exit code stays the class's)")
	host := registerTargetHost(fs)
	fs.Var(&minInterval, "min-interval", "throttle: at most one line per `S` seconds per session and sender, 0 disables (default OO_CLAUDE_MIN_INTERVAL_S or 30)")
	return &ffcli.Command{
		Name:       "send",
		ShortUsage: `oo-claude send <sessionId|name|pid> "<line>"|- [--from NAME] [--json] [--wait S] [--seen S] [--reply S] [--priority now|next|later] [--min-interval S] [--no-tag] [--expect-start] [--host DEST]`,
		ShortHelp:  "append a line to a session's inbox and report the doorman's verdict",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 2 {
				return usagef(`send needs a target and one line: oo-claude send <sessionId|name|pid> "<line>" (got %d arguments)`, len(pos))
			}
			if err := inboxv1.CheckPriority(*priority); err != nil {
				return usagef("--priority %q: the priority is now, next or later", *priority)
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			if len(host.dests) > 0 {
				e.armed()
				line, err := sendLine(e, pos[1])
				if err != nil {
					return err
				}
				dest, target, err := hostTarget(host.dests, pos[0], "send")
				if err != nil {
					return err
				}
				req := fleet.SendRequest{Target: target, Line: line, From: *from, NoTag: *noTag, Priority: *priority, ExpectStart: *expectStart}
				if wait.set {
					req.Wait = waitD
				}
				if seen.set {
					req.Seen = seenD
				}
				if reply.set {
					req.Reply = replyD
				}
				if minInterval.set {
					req.MinInterval = &minIntervalD
				}
				return sendRemote(ctx, e, dest, req, *asJSON)
			}
			s := claudeinbox.NewSender(cfg)
			s.ClientVersion = version.Version
			s.StationName = e.stationName(cfg)
			if wait.set {
				s.Wait = waitD
			}
			if minInterval.set {
				s.MinInterval = minIntervalD
			}
			if seen.set {
				s.SeenWait = seenD
			}
			if reply.set {
				s.ReplyWait = replyD
			}
			if *asJSON {
				// The ack row first, as soon as the ack is known: a
				// caller whose connection drops during the wait keeps
				// the delivery (the last row is the verdict). A write
				// that fails is kept by e.out: verdictUnprinted below.
				s.OnAck = func(v claudeinbox.Verdict) { printJSONLine(e, v.Row()) }
			}
			// The signal handler is armed just before the send's first
			// write: the sender's making, stdin and the send's steps up to
			// it only read, beside the handler's own start (see run). A
			// signal before it ends the process with nothing written.
			s.BeforeWrite = e.armed
			line, err := sendLine(e, pos[1])
			if err != nil {
				return err
			}
			var st *status
			if seen.set || reply.set {
				st = e.statusLine("send", "delivering the line", *asJSON)
				if st != nil {
					w := &statusWitness{Witness: transcript.Witness{ProjectsDir: cfg.ProjectsDir}, st: st}
					s.Witness = w
					s.OnAck = func(v claudeinbox.Verdict) { w.class = string(v.Class); st.set(w.class) }
				}
			}
			v, sendErr := s.Send(ctx, claudeinbox.Request{Target: pos[0], Line: line, From: *from, NoTag: *noTag, Priority: *priority, ExpectStart: *expectStart})
			st.end()
			if *asJSON {
				printJSONLine(e, v.Row())
			} else {
				writeVerdict(e.human(), v)
			}
			e.verdictUnprinted(v.MsgID, "")
			printSendNotes(e, v)
			if v.InterruptedBy != "" {
				if err := signalExit(ctx); err != nil {
					return err // the verdict and its note said it all
				}
			}
			if sendErr != nil && !quietRefusal(sendErr) {
				return &exitError{code: v.Class.ExitCode(), err: sendErr}
			}
			return exitWith(v.Class.ExitCode())
		},
	}
}

// statusWitness is the transcript witness of send --seen/--reply on a
// terminal: it names the wait it is in on the status line, then waits as
// the real one does (the same reader decides the verdict). While it waits
// for the reply, the line also follows the transcript from the same mark
// to show the receiver's turn, the tool running and the tokens (display
// only: nothing it reads goes into the verdict or the receipt).
type statusWitness struct {
	transcript.Witness
	st        *status
	class     string // the ack's class, set by OnAck before the waits
	following bool
}

func (w *statusWitness) WaitSeen(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (bool, error) {
	w.st.set(w.class + " · waiting for the model to take the line")
	return w.Witness.WaitSeen(ctx, path, from, msgID, wait)
}

func (w *statusWitness) WaitReply(ctx context.Context, path string, from int64, msgID string, wait time.Duration) (*receipt.Reply, error) {
	w.st.set(w.class + " · seen · waiting for the reply")
	if !w.following && path != "" {
		w.following = true
		w.st.follow(path, from)
	}
	return w.Witness.WaitReply(ctx, path, from, msgID, wait)
}

// quietRefusal reports whether err says only what the verdict and its note
// already said: a refusal of the line or the target, not a file that failed.
func quietRefusal(err error) bool {
	var re *claudeinbox.RefusedError
	var pe *fs.PathError // the send's own, Op "send …": a file that failed
	return errors.As(err, &re) && !(errors.As(err, &pe) && strings.HasPrefix(pe.Op, "send ")) && !errors.Is(err, claudeinbox.ErrBadOption) && !errors.Is(err, claudeinbox.ErrNoStation)
}

// sendLine is send's line argument: arg itself, or stdin's line for "-".
func sendLine(e *env, arg string) (string, error) {
	if arg == "-" {
		return lineFromStdin(e)
	}
	return arg, nil
}

// lineFromStdin is send's "-": the line read from stdin, one trailing
// newline removed, so a line needs no quoting for any shell (ssh's remote
// one included). The read is bounded: a longer input is refused, never cut.
func lineFromStdin(e *env) (string, error) {
	return readStdin(e, "send", "line", inboxv1.MaxLineBytes, true)
}

// textFromStdin is a verb's "-" (start's prompt): what stdin holds, one
// trailing newline removed, at most max bytes (a longer input is a usage
// error, never cut).
func textFromStdin(e *env, verb, what string, max int) (string, error) {
	return readStdin(e, verb, what, max, false)
}

// readStdin reads stdin for textFromStdin and the lines of send and
// resume, at most max bytes past one trailing newline. A longer input is
// a usage error, or with refuse (a line) its first max+1 bytes, returned
// so the library refuses the line as too long, with the verdict, receipt
// and exit code (1) of the same line given as an argument.
func readStdin(e *env, verb, what string, max int, refuse bool) (string, error) {
	b, err := io.ReadAll(io.LimitReader(e.stdin, int64(max)+2))
	if err != nil {
		return "", &exitError{code: exitFail, err: fmt.Errorf("%s: reading the %s from stdin: %w", verb, what, err)}
	}
	if len(b) > max+1 {
		if refuse {
			return string(b[:max+1]), nil
		}
		return "", usagef("%s: the %s on stdin is longer than %d bytes", verb, what, max)
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// sendRemote is send --host: the line goes on ssh's stdin to the station's
// `send TARGET - --json`; the rows come back as they were printed there
// (the ack row first with --seen/--reply), the exit code is the class's.
// ssh's own failure is exit 255, never a class; after an ack row, the
// line was delivered and `receipt MSG_ID --host` gives its final row;
// after the verdict row, the verdict stands with its class's code.
func sendRemote(ctx context.Context, e *env, dest string, req fleet.SendRequest, asJSON bool) error {
	hosts, done, err := fleetHosts(e, []string{dest})
	if err != nil {
		return err
	}
	defer done()
	onAck := func(r receipt.SendRow) {
		if asJSON {
			printJSONLine(e, r) // a failed write: verdictUnprinted below
		}
	}
	res, err := hosts[0].Send(ctx, req, onAck)
	if errors.Is(err, fleet.ErrBadOutput) {
		return remoteNoVerdict(err, res.Exit)
	}
	if err != nil && res.Verdict.Class != "" {
		// The verdict row came, then the connection went: the station's
		// exit code is lost, the verdict is not. Reporting "nothing is
		// known" would have the caller resend a line that was sent.
		writeRemoteVerdict(e, res.Verdict, asJSON)
		fmt.Fprintf(e.stderr, "oo-claude: note: the connection to %s dropped after the station's verdict (%v); the exit code is its class's\n", dest, err)
		e.verdictUnprinted(deref(res.Verdict.MsgID), dest)
		return exitWith(claudeinbox.Class(res.Verdict.Class).ExitCode())
	}
	if err != nil {
		return remoteSendLost(ctx, e, dest, res.Ack, err)
	}
	writeRemoteVerdict(e, res.Verdict, asJSON)
	e.verdictUnprinted(deref(res.Verdict.MsgID), dest)
	return exitWith(res.Exit)
}

// remoteSendLost is a send --host that ended with no verdict row: a
// signal (exit 128 + its number, as the local send's interrupted), else
// ssh's own failure (255). Either way what became of the line is the
// station's to tell: after an ack row, its receipt; before one, the line
// may or may not have been written there.
func remoteSendLost(ctx context.Context, e *env, dest string, ack *receipt.SendRow, err error) error {
	delivered := ack != nil && ack.MsgID != nil
	serr := signalExit(ctx)
	switch {
	case serr != nil && delivered:
		fmt.Fprintf(e.stderr, "oo-claude: interrupted (%v) after the station acked the line (msg_id %s): it was delivered; oo-claude receipt %s --host %s gives its verdict\n", context.Cause(ctx), *ack.MsgID, *ack.MsgID, dest)
	case serr != nil:
		fmt.Fprintf(e.stderr, "oo-claude: interrupted (%v) before the station's verdict: whether the line was written is known only on %s (its receipts, oo-claude sessions --host %s); resending may double it\n", context.Cause(ctx), dest, dest)
	case delivered:
		fmt.Fprintf(e.stderr, "oo-claude: the line was delivered (msg_id %s) before the connection dropped: oo-claude receipt %s --host %s gives its verdict\n", *ack.MsgID, *ack.MsgID, dest)
	}
	if serr != nil {
		return serr
	}
	return sshFailure(err)
}

// writeRemoteVerdict prints a station's verdict row: as it came (--json),
// else its class, session, reply and note.
func writeRemoteVerdict(e *env, v receipt.SendRow, asJSON bool) {
	if asJSON {
		printJSONLine(e, v) // a failed write: verdictUnprinted
		return
	}
	fmt.Fprintf(e.human(), "%s %s\n", v.Class, deref(v.SessionID))
	if v.Reply != nil {
		fmt.Fprintln(e.human(), v.Reply.Text)
	}
	if v.Note != nil {
		fmt.Fprintf(e.stderr, "oo-claude: note: %s\n", *v.Note)
	}
}

// remoteNoVerdict is a station's send that ran (ssh did not fail) but
// printed no verdict row: exit 255 would say the station was not reached,
// and a class's code would say what the line became, neither of which
// holds. A usage error there (an older oo-claude that lacks a flag) stays
// 2: nothing was written. Anything else is 1, and the line's fate is the
// station's to tell.
func remoteNoVerdict(err error, exit int) error {
	switch exit {
	case exitUsage:
		return &exitError{code: exitUsage, err: fmt.Errorf("%w (the station's oo-claude refused the command line: nothing was sent; is it an older version?)", err)}
	case 126, 127: // sh: the command is not executable, not found
		return &exitError{code: exitFail, err: fmt.Errorf("%w (the station has no oo-claude at the remote command: nothing was sent; set OO_CLAUDE_REMOTE_BIN)", err)}
	}
	return &exitError{code: exitFail, err: fmt.Errorf("%w (the station's send ran but printed no verdict row: whether the line was written is known only there, in its receipts and `oo-claude sessions --host`; resending may double it)", err)}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
