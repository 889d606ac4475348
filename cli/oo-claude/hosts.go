package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/oo-family/oo-claude/fleet"
)

// hostsFlag is --host DEST, repeatable where the verb merges stations.
type hostsFlag struct {
	dests  []string
	repeat bool
}

func (h *hostsFlag) String() string { return strings.Join(h.dests, ",") }

func (h *hostsFlag) Set(v string) error {
	if v == "" || strings.HasPrefix(v, "-") {
		return fmt.Errorf("%q is not an ssh destination", v)
	}
	if len(h.dests) > 0 && !h.repeat {
		return errors.New("this verb takes one --host")
	}
	h.dests = append(h.dests, v)
	return nil
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

// fleetHosts are the hosts of dests with the knobs' ssh command line and
// remote binary, sharing one connection per destination within this
// invocation (ControlMaster); done ends the masters and removes their
// directory.
func fleetHosts(e *env, dests []string) (hosts []fleet.Host, done func(), err error) {
	cfg, err := e.config()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "oo-claude-ssh-")
	if err != nil {
		return nil, nil, &exitError{code: exitFail, err: fmt.Errorf("ssh control directory: %w", err)}
	}
	// A command line that shares connections itself (OO_CLAUDE_SSH with
	// -o ControlPath=…) keeps its own: this invocation neither overrides
	// nor ends that master.
	own := filepath.Join(dir, "%C")
	for _, a := range cfg.SSH {
		if strings.Contains(strings.ToLower(a), "control") {
			own = ""
		}
	}
	for _, d := range dests {
		hosts = append(hosts, fleet.Host{Dest: d, SSH: cfg.SSH, RemoteBin: cfg.RemoteBin, ControlPath: own})
	}
	return hosts, func() {
		for _, h := range hosts {
			h.Close()
		}
		os.RemoveAll(dir)
	}, nil
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
