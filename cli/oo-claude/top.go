package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/inboxv1"
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
	from := fs.String("from", inboxv1.DefaultFrom, "sender `NAME` of the lines sent with s")
	hosts := registerHost(fs, true)
	return &ffcli.Command{
		Name:       "top",
		ShortUsage: "oo-claude top [--from NAME] [--host DEST]...",
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
			color, utf := e.getenv("NO_COLOR") == "" && e.getenv("TERM") != "dumb", utf8Locale(e.getenv)
			if len(hosts.dests) > 0 {
				return topHosts(ctx, e, hosts.dests, top.Options{From: *from, Now: now, Color: color, UTF8: utf, Environ: e.environ()}, in, out)
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
				Document: func(ctx context.Context, _, only string) (*observatory.Document, error) {
					return observatory.Build(ctx, observatory.Options{Station: st, RidingWindow: cfg.RidingWindow, Only: only,
						Now: now, Generator: "oo-claude " + version.Version, Hostname: func() (string, error) { return host, nil }})
				},
				Sender:  s,
				From:    *from,
				Witness: transcript.Witness{ProjectsDir: cfg.ProjectsDir},
				Exchanges: func(_, sid string) (string, error) {
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
				Color:   color,
				UTF8:    utf,
				Environ: e.environ(),
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

// topHosts is top --host: the view of the named stations, grouped, on
// fleet.Watch and fleet.MergeSessions; a line goes through fleet's Send to
// its session's station, enter reads with the station's read.
func topHosts(ctx context.Context, e *env, dests []string, o top.Options, in, out *os.File) error {
	hosts, done, err := fleetHosts(e, dests)
	if err != nil {
		return err
	}
	defer done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	byName := map[string]fleet.Host{}
	o.Senders = map[string]top.Sender{}
	for _, h := range hosts {
		o.Stations = append(o.Stations, h.Name())
		byName[h.Name()] = h
		o.Senders[h.Name()] = hostSender{h}
	}
	ch := fleet.Watch(ctx, hosts, fleet.WatchOptions{Now: o.Now})
	o.Events = ch
	o.Station = strings.Join(o.Stations, ",")
	o.Document = func(ctx context.Context, name, only string) (*observatory.Document, error) {
		some := hosts
		if h, ok := byName[name]; ok {
			some = []fleet.Host{h}
		}
		doc, err := fleet.MergeSessions(ctx, some, false)
		if doc != nil && only != "" {
			doc.Sessions = slices.DeleteFunc(doc.Sessions, func(s observatory.Session) bool { return s.Session != only })
		}
		return doc, err
	}
	o.Exchanges = func(name, sid string) (string, error) {
		h, ok := byName[name]
		if !ok {
			return "", fmt.Errorf("no station %q in this view", name)
		}
		res, err := h.Run(ctx, []string{"read", "--", sid}, nil)
		if err != nil {
			return "", err
		}
		if res.Exit != 0 {
			return "", fmt.Errorf("%s: oo-claude read exit %d: %s", name, res.Exit, strings.TrimSpace(string(res.Stderr)))
		}
		return string(res.Stdout), nil
	}
	err = top.Run(ctx, o, in, out)
	cancel()
	for range ch {
		// the watch ends with ctx: let it close
	}
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	return nil
}

// hostSender sends a line of the view to its station (fleet's Send; no
// wait for seen or reply: the view shows line-seen from the stream) and
// gives its verdict row as a verdict.
type hostSender struct{ h fleet.Host }

func (s hostSender) Send(ctx context.Context, req claudeinbox.Request) (claudeinbox.Verdict, error) {
	res, err := s.h.Send(ctx, fleet.SendRequest{Target: req.Target, Line: req.Line, From: req.From}, nil)
	if err != nil {
		return claudeinbox.Verdict{}, err
	}
	r := res.Verdict
	v := claudeinbox.Verdict{Class: claudeinbox.Class(r.Class), Target: r.Target, SessionID: deref(r.SessionID),
		MsgID: deref(r.MsgID), PeerStatus: deref(r.PeerStatus), Reason: inboxv1.Reason(deref(r.Reason)), Note: deref(r.Note)}
	if r.LineOffset != nil {
		v.Written, v.LineOffset = true, *r.LineOffset
	}
	var ack struct {
		Confirm string `json:"confirm"`
	}
	if len(r.Ack) > 0 && json.Unmarshal(r.Ack, &ack) == nil {
		v.Confirm = ack.Confirm
	}
	return v, nil
}
