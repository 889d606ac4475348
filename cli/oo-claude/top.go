package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/top"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// topNowKnob fixes the clock of top's view and of its event stream
// (RFC 3339), so a screen can be compared with a golden one. A test knob:
// it is not in the README's knobs.
const topNowKnob = "OO_CLAUDE_TOP_NOW"

func newTopCmd(e *env) *ffcli.Command {
	fs := flag.NewFlagSet("top", flag.ContinueOnError)
	from := fs.String("from", inbox.DefaultFrom, "sender `NAME` of the lines sent with s")
	return &ffcli.Command{
		Name:       "top",
		ShortUsage: "oo-claude top [--from NAME]",
		ShortHelp:  "a live view of the station's sessions, riders and events, to steer from (keys: ? in the view)",
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if pos, err := positional(fs, args); err != nil {
				return err
			} else if len(pos) > 0 {
				return usagef("top takes no arguments")
			}
			in, inOK := e.stdin.(*os.File)
			out, outOK := e.stdout.(*os.File)
			if !inOK || !outOK || !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
				return usagef("top needs a terminal (for a stream of events: oo-claude watch)")
			}
			cfg, err := e.config()
			if err != nil {
				return err
			}
			now := time.Now
			if v := e.getenv(topNowKnob); v != "" {
				t, err := time.Parse(time.RFC3339Nano, v)
				if err != nil {
					return usagef("%s=%q: not an RFC 3339 time", topNowKnob, v)
				}
				now = func() time.Time { return t }
			}
			st := station.New(cfg.Paths)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			ch, err := observatory.Watch(ctx, observatory.WatchOptions{Station: st, Now: now})
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			s := claudeinbox.NewSender(cfg)
			s.ClientVersion = version.Version
			host, _ := os.Hostname()
			err = top.Run(ctx, top.Options{
				Events: ch,
				Document: func(ctx context.Context, only string) (*observatory.Document, error) {
					return observatory.Build(ctx, observatory.Options{Station: st, RidingWindow: cfg.RidingWindow, Only: only,
						Now: now, Generator: "oo-claude " + version.Version, Hostname: func() (string, error) { return host, nil }})
				},
				Sender:  s,
				From:    *from,
				Witness: transcript.Witness{ProjectsDir: cfg.ProjectsDir},
				Exchanges: func(sid string) (string, error) {
					res, err := transcript.ReadSession(st, cfg.ProjectsDir, sid, transcript.DefaultExchanges)
					if err != nil {
						return "", readMessage(err, res.Session, cfg.ProjectsDir)
					}
					var b bytes.Buffer
					err = writeExchanges(&b, res)
					return b.String(), err
				},
				Now:     now,
				Station: host,
				Color:   e.getenv("NO_COLOR") == "" && e.getenv("TERM") != "dumb",
				UTF8:    utf8Locale(e.getenv),
			}, in, out)
			cancel()
			for range ch {
				// the watch ends with ctx: let it close
			}
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			return nil
		},
	}
}

// utf8Locale reports whether the locale's character set is UTF-8: the
// first of LC_ALL, LC_CTYPE and LANG that is set names it.
func utf8Locale(getenv func(string) string) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}
