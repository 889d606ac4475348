package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/headless"
)

// hostsFlag is --host DEST, repeatable where the verb merges stations.
type hostsFlag struct {
	dests  []string
	repeat bool
}

func (h *hostsFlag) String() string { return strings.Join(h.dests, ",") }

func (h *hostsFlag) Set(v string) error {
	if !isDest(v) {
		return fmt.Errorf("%q is not an ssh destination ([user@]host, ssh://[user@]host[:port] or a Host alias)", v)
	}
	if len(h.dests) > 0 && !h.repeat {
		return errors.New("this verb takes one --host")
	}
	h.dests = append(h.dests, v)
	return nil
}

// isDest reports whether v has the shape of an ssh destination: [user@]host
// or ssh://[user@]host[:port] (host a name, or an IPv6 address in
// brackets; port 1–65535), no part empty, nothing after the host, no
// space or control character, no leading "-" (ssh would take it for an
// option). ssh judges the rest; a destination it cannot parse would reach
// it and come back as its usage text, exit 255.
func isDest(v string) bool {
	if v == "" || strings.HasPrefix(v, "-") || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return false
	}
	rest, url := strings.CutPrefix(v, "ssh://")
	if user, host, ok := strings.Cut(rest, "@"); ok {
		if user == "" || strings.Contains(host, "@") {
			return false
		}
		rest = host
	}
	if !url {
		return rest != "" && !strings.HasPrefix(rest, "-") && !strings.Contains(rest, "/")
	}
	host, port := rest, ""
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 2 {
			return false
		}
		host, port = rest[1:end], rest[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return false
		}
		port = strings.TrimPrefix(port, ":")
	} else if h, p, ok := strings.Cut(rest, ":"); ok {
		host, port = h, p
		if port == "" {
			return false
		}
	}
	if host == "" || strings.HasPrefix(host, "-") || strings.ContainsAny(host, "/[]") {
		return false
	}
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == port
}

// registerHost adds --host to fs.
func registerHost(fs *flag.FlagSet, repeat bool) *hostsFlag {
	h := &hostsFlag{repeat: repeat}
	what := "run the verb on the station at ssh destination `DEST` ([user@]host, ssh://[user@]host[:port] or a Host alias of ~/.ssh/config)"
	if repeat {
		what += "; repeat it to merge stations"
	}
	fs.Var(h, "host", what)
	return h
}

// registerTargetHost adds --host to a verb on one session: repeatable,
// the target then STATION/SESSION (see hostTarget).
func registerTargetHost(fs *flag.FlagSet) *hostsFlag {
	h := &hostsFlag{repeat: true}
	fs.Var(h, "host", "run the verb on the station at ssh destination `DEST` ([user@]host, ssh://[user@]host[:port] or a Host alias of ~/.ssh/config); repeated, the target is STATION/SESSION, STATION one of them")
	return h
}

// fleetHosts are the hosts of dests with the knobs' ssh command line and
// remote binary, sharing one connection per destination within this
// invocation (ControlMaster); done ends the masters and removes their
// directory.
func fleetHosts(e *env, dests []string) (hosts []fleet.Host, done func(), err error) {
	cfg, err := e.config()
	if err != nil {
		return nil, nil, err
	}
	hosts, done, err = fleet.NewHosts(dests, cfg.SSH, cfg.RemoteBin)
	if err != nil {
		return nil, nil, &exitError{code: exitFail, err: err}
	}
	return hosts, done, nil
}

// remoteArgs rebuilds a verb's command line for the remote station: the
// flags that were set (but --host), then "--" and the positionals.
func remoteArgs(verb []string, fs *flag.FlagSet, pos []string) []string {
	args := append([]string(nil), verb...)
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "host" {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return append(append(args, "--"), pos...)
}

// remoteVerb runs a verb on one station and passes its stdout, stderr and
// exit code through; ssh's own failure is exit 255 with its message.
func remoteVerb(ctx context.Context, e *env, dest string, args []string) error {
	hosts, done, err := fleetHosts(e, []string{dest})
	if err != nil {
		return err
	}
	defer done()
	res, err := hosts[0].Run(ctx, args, nil)
	e.stdout.Write(res.Stdout)
	e.stderr.Write(res.Stderr)
	if err != nil {
		return sshFailure(err)
	}
	return exitWith(res.Exit)
}

// sshFailure is ssh's own failure as the CLI reports it: exit 255, a
// message that says the verb's outcome is unknown.
func sshFailure(err error) error {
	return &exitError{code: fleet.ExitSSH, err: fmt.Errorf("%w (ssh-failed: the station was not reached or the connection dropped; nothing is known of the verb's outcome)", err)}
}

// resumeRemote is resume --host: the line goes on ssh's stdin to the
// station's `resume --json … SESSION -`; its receipt row comes back as the
// station wrote it, the exit code is the class's.
func resumeRemote(ctx context.Context, e *env, dest string, req headless.ResumeRequest, asJSON bool) error {
	hosts, done, err := fleetHosts(e, []string{dest})
	if err != nil {
		return err
	}
	defer done()
	res, err := hosts[0].Resume(ctx, req)
	if err != nil {
		return remoteFailure(err, res.Exit)
	}
	r := res.Row
	if asJSON {
		printJSONLine(e, r) // a failed write: verdictUnprinted
	} else {
		if r.Result != nil && r.Class == string(headless.DeliveredResume) {
			fmt.Fprintln(e.human(), strings.TrimRight(*r.Result, "\n"))
		}
		fmt.Fprintf(e.stderr, "oo-claude: %s: %s%s\n", r.Class, deref(r.SessionID), reasonOf(r.Reason))
		if r.Note != nil {
			fmt.Fprintf(e.stderr, "oo-claude: note: %s\n", *r.Note)
		}
	}
	e.verdictUnprinted(deref(r.MsgID), dest)
	return exitWith(res.Exit)
}

// startRemote is start --host: the prompt goes on ssh's stdin to the
// station's `start --json … -`; the result file (or, detached, what the
// station returned at once) comes back as the station wrote it.
func startRemote(ctx context.Context, e *env, dest string, req headless.StartRequest, asJSON bool) error {
	hosts, done, err := fleetHosts(e, []string{dest})
	if err != nil {
		return err
	}
	defer done()
	res, err := hosts[0].Start(ctx, req)
	if err != nil {
		return remoteFailure(err, res.Exit)
	}
	switch {
	case asJSON && res.Detached != nil:
		printJSONLine(e, res.Detached) // a failed write: verdictUnprinted
	case asJSON:
		printJSONLine(e, res.File)
	case res.Detached != nil:
		fmt.Fprintf(e.stdout, "started %s on %s as unit %s; result file %s (the station's)\n", res.Detached.SessionID, dest, res.Detached.Unit, res.Detached.ResultFile)
	default:
		f := res.File
		if f.Result != nil && f.State == headless.Completed {
			fmt.Fprintln(e.human(), strings.TrimRight(*f.Result, "\n"))
		}
		fmt.Fprintf(e.stderr, "oo-claude: %s: %s on %s%s; result file %s (the station's)\n", f.State, f.SessionID, dest, reasonOf(f.Reason), f.ResultFile)
	}
	e.verdictUnprinted("", dest)
	return exitWith(res.Exit)
}

// lineageRemote is lineage show --host: the station's links.
func lineageRemote(ctx context.Context, e *env, dest string, asJSON bool) error {
	hosts, done, err := fleetHosts(e, []string{dest})
	if err != nil {
		return err
	}
	defer done()
	links, err := hosts[0].Lineage(ctx)
	if err != nil {
		return remoteFailure(err, exitFail)
	}
	if asJSON {
		return printJSONLine(e, links)
	}
	return writeLinks(e.human(), links, "the lineage ledger of "+dest)
}

// remoteFailure is ssh's own failure (exit 255), else the remote verb's
// failure with its exit code (a usage error there is one here).
func remoteFailure(err error, code int) error {
	if errors.Is(err, fleet.ErrSSH) {
		return sshFailure(err)
	}
	if code == 0 {
		code = exitFail
	}
	return &exitError{code: code, err: err}
}

func reasonOf(r *string) string {
	if r == nil || *r == "" {
		return ""
	}
	return ": " + *r
}

// hostTarget is the station and session of a verb on one session with
// --host: STATION/SESSION (STATION one of the --host destinations, as the
// merged views name it) is SESSION on that station; with one --host a
// target without that prefix is passed as given; with several, the target
// must name its station.
func hostTarget(dests []string, target, verb string) (dest, session string, err error) {
	if d, s, ok := fleet.SplitTarget(dests, target); ok {
		return d, s, nil
	}
	if len(dests) == 1 {
		return dests[0], target, nil
	}
	return "", "", usagef("%s with several --host takes STATION/SESSION, STATION one of %s (got %q)", verb, strings.Join(dests, ", "), target)
}
