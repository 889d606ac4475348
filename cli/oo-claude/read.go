package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
	"github.com/peterbourgon/ff/v3/ffcli"
)

func newReadCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("read", flag.ContinueOnError)
	turns := transcript.DefaultExchanges
	fs.Var(countFlag{&turns}, "turns", "how many exchanges to show, the newest last")
	asJSON := fs.Bool("json", false, "print one JSON object")
	return &ffcli.Command{
		Name:       "read",
		ShortUsage: "oo-claude read <sessionId|name|pid> [--turns N] [--json]",
		ShortHelp:  "show the last exchanges of a session's transcript",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := positional(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 1 {
				return usagef("read takes one session (id, name or pid)")
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			res, err := transcript.ReadSession(station.New(cfg.Paths), cfg.ProjectsDir, pos[0], turns)
			if err != nil {
				return &exitError{code: exitFail, err: readMessage(err, res.Session, cfg.ProjectsDir)}
			}
			if *asJSON {
				return printJSONLine(e, res)
			}
			return writeExchanges(e.human(), res)
		},
	}
}

// writeExchanges prints the human form of read: a header, then each
// exchange with its prompt, the tools called, the peer lines absorbed
// (marked with from and msg_id) and the assistant's text.
func writeExchanges(w io.Writer, r transcript.Reading) error {
	state := "offline"
	if r.Running {
		state = fmt.Sprintf("running, pid %d, %s", r.PID, r.Status)
	}
	name := ""
	if r.Name != "" {
		name = " " + r.Name
	}
	fmt.Fprintf(w, "session %s%s (%s)\ntranscript %s\n", r.Session, name, state, r.Transcript)
	if len(r.Exchanges) == 0 {
		_, err := fmt.Fprintln(w, "\n(no exchanges yet)")
		return err
	}
	for _, x := range r.Exchanges {
		who := string(x.Prompt.Kind)
		if p := x.Prompt.Peer; p != nil {
			who = peerMark(*p)
		}
		fmt.Fprintf(w, "\n── %s  %s\n", stamp(x.Start), who)
		fmt.Fprintf(w, "%s\n", indent(x.Prompt.Text, "> "))
		for _, tc := range x.Tools {
			fmt.Fprintf(w, "  tool %s: %s\n", tc.Name, tc.Input)
		}
		for _, p := range x.Peers {
			fmt.Fprintf(w, "  %s at %s:\n%s\n", peerMark(p), stamp(p.Timestamp), indent(p.Text, "  | "))
		}
		if x.Assistant != "" {
			fmt.Fprintf(w, "%s\n", indent(x.Assistant, "  "))
		}
		stop := x.StopReason
		if stop == "" {
			stop = "running"
		}
		fmt.Fprintf(w, "  [%s]\n", stop)
	}
	return nil
}

// peerMark names a peer line by its from and msg_id (the msg_id of a send
// receipt matches it).
func peerMark(p transcript.PeerLine) string {
	s := "peer " + p.From
	if p.MsgID != "" {
		s += " msg_id=" + p.MsgID
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
