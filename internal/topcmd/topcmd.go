// Package topcmd is the top program, oo-claude-top: what `oo-claude top`
// runs once it has checked its flags. oo-claude execs the program (see
// internal/topreq), so the Charm stack the view links is started only by
// the view, never by a send.
package topcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/termsafe"
	"github.com/oo-family/oo-claude/internal/top"
	"github.com/oo-family/oo-claude/internal/topreq"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// nowKnob fixes the clock of the view and of its event stream (RFC 3339),
// so a screen can be compared with a golden one. A test knob: it is not in
// the README's knobs.
const nowKnob = "OO_CLAUDE_TOP_NOW"

// The top program's exit codes, as `oo-claude top`'s: 0 when the view
// ended (q, Ctrl-C, SIGINT, SIGTERM), 1 when it could not run, 2 for a
// command line, a knob or a stdio it cannot run with.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// maxRead bounds what the view keeps of one read verb's output.
const maxRead = 4 << 20

// Main runs the view that args (the program's arguments after its path, as
// topreq.Request.Argv writes them) ask for, on the terminal of stdin and
// stdout, with the knobs from getenv over the station file; environ is the
// environment of the read verb it runs and what the view is told of the
// terminal. It returns the exit code. What goes wrong is printed on
// stderr, escaped, as oo-claude prints it.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, environ []string) int {
	stderr = termsafe.NewWriter(stderr)
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "oo-claude: %v\n", err)
		return code
	}
	req, err := topreq.Parse(args)
	if err != nil {
		return fail(exitUsage, fmt.Errorf("%w (this program is run by `oo-claude top`: see oo-claude help top)", err))
	}
	in, inOK := stdin.(*os.File)
	out, outOK := stdout.(*os.File)
	if !inOK || !outOK || !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
		return fail(exitUsage, errors.New("top needs a terminal (for a stream of events: oo-claude watch)"))
	}
	knobs, err := station.LoadEnviron(getenv)
	if err != nil {
		return fail(exitUsage, err)
	}
	getenv = knobs.Getenv
	cfg, err := station.ConfigFromEnv(getenv)
	if err != nil {
		return fail(exitUsage, err)
	}
	now := time.Now
	if v := getenv(nowKnob); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return fail(exitUsage, fmt.Errorf("%s=%q: not an RFC 3339 time", nowKnob, v))
		}
		now = func() time.Time { return t }
	}
	o := top.Options{From: req.From, Now: now, Environ: environ,
		Color: getenv("NO_COLOR") == "" && getenv("TERM") != "dumb", UTF8: termsafe.UTF8Locale(getenv)}
	if len(req.Hosts) > 0 {
		err = runHosts(ctx, req.Hosts, cfg, o, in, out)
	} else {
		err = runLocal(ctx, req.OOClaude, cfg, o, in, out)
	}
	if err != nil {
		return fail(exitFail, err)
	}
	return exitOK
}

// runLocal is the view of this station: observatory's Watch and Build,
// claudeinbox's Sender; enter shows what the read verb of oo (this
// station's oo-claude) says.
func runLocal(ctx context.Context, oo string, cfg station.Config, o top.Options, in, out *os.File) error {
	st := station.New(cfg.Paths)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := observatory.Watch(ctx, observatory.WatchOptions{Station: st, Now: o.Now})
	if err != nil {
		return err
	}
	s := claudeinbox.NewSender(cfg)
	s.ClientVersion = version.Version
	host, _ := os.Hostname()
	o.Events = ch
	o.Document = func(ctx context.Context, _, only string) (*observatory.Document, error) {
		return observatory.Build(ctx, observatory.Options{Station: st, RidingWindow: cfg.RidingWindow, Only: only,
			Now: o.Now, Generator: "oo-claude " + version.Version, Hostname: func() (string, error) { return host, nil }})
	}
	o.Sender = s
	o.Witness = transcript.Witness{ProjectsDir: cfg.ProjectsDir}
	o.Exchanges = func(_, sid string) (string, error) { return readVerb(ctx, oo, o.Environ, sid) }
	o.Station = host
	err = top.Run(ctx, o, in, out)
	cancel()
	for range ch {
		// the watch ends with ctx: let it close
	}
	return err
}

// readVerb is what `oo read -- sid` prints, or its complaint.
func readVerb(ctx context.Context, oo string, environ []string, sid string) (string, error) {
	var stdout, stderr limited
	cmd := exec.CommandContext(ctx, oo, "read", "--", sid)
	cmd.Env, cmd.Stdout, cmd.Stderr = environ, &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		msg := strings.TrimSpace(stderr.String())
		return "", errors.New(strings.TrimPrefix(msg, "oo-claude: "))
	case err != nil:
		return "", fmt.Errorf("oo-claude read: %w", err)
	}
	return stdout.String(), nil
}

// limited keeps the first maxRead bytes written to it.
type limited struct{ bytes.Buffer }

func (l *limited) Write(p []byte) (int, error) {
	if room := maxRead - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// runHosts is top --host: the view of the named stations, grouped, on
// fleet.Watch and fleet.MergeSessions; a line goes through fleet's Send to
// its session's station, enter reads with the station's read.
func runHosts(ctx context.Context, dests []string, cfg station.Config, o top.Options, in, out *os.File) error {
	hosts, done, err := fleet.NewHosts(dests, cfg.SSH, cfg.RemoteBin)
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
	return err
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

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
