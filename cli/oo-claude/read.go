package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// readResult is what `read --json` prints: the session, its transcript and
// its last exchanges (oldest first).
type readResult struct {
	Session    string                `json:"session"`
	Name       string                `json:"name"`
	PID        int                   `json:"pid"`
	Running    bool                  `json:"running"`
	Status     string                `json:"status"`
	Transcript string                `json:"transcript"`
	Turns      int                   `json:"turns"`
	Exchanges  []transcript.Exchange `json:"exchanges"`
}

func newReadCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("read", flag.ContinueOnError)
	turns := fs.Int("turns", transcript.DefaultExchanges, "how many exchanges to show, the newest last")
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
			if *turns < 1 {
				return usagef("--turns must be at least 1")
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			st := station.New(cfg.Paths)
			t, err := st.Resolve(pos[0])
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			res := readResult{Session: t.SessionID, Running: t.Running, Status: "offline", Turns: *turns}
			cwd := ""
			if t.Session != nil {
				res.Name, res.PID, res.Status, cwd = t.Session.Name, t.Session.PID, t.Session.Status, t.Session.CWD
			}
			path, err := transcript.Locate(cfg.ProjectsDir, t.SessionID, cwd)
			if err != nil {
				if errors.Is(err, transcript.ErrNotFound) {
					err = fmt.Errorf("no transcript for session %s under %s", t.SessionID, cfg.ProjectsDir)
				}
				return &exitError{code: exitFail, err: err}
			}
			res.Transcript = path
			res.Exchanges, err = transcript.Exchanges(path, *turns)
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			if res.Exchanges == nil {
				res.Exchanges = []transcript.Exchange{}
			}
			if *asJSON {
				return printJSONLine(e, res)
			}
			return writeExchanges(e.stdout, res)
		},
	}
}

// writeExchanges prints the human form of read: a header, then each
// exchange with its prompt, the tools called, the peer lines absorbed
// (marked with from and msg_id) and the assistant's text.
func writeExchanges(w io.Writer, r readResult) error {
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
