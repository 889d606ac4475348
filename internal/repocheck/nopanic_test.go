package repocheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/doctor"
	"github.com/oo-family/oo-claude/door"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/fakes/fakeowner"
	"github.com/oo-family/oo-claude/fakes/fakesession"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/inboxv1"
	badin "github.com/oo-family/oo-claude/internal/hostile"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// hostile holds the bad inputs every case feeds its functions: strings a
// caller may pass (empty, short ids, NUL bytes, invalid UTF-8, traversal,
// 64 KiB), paths (empty, NUL, relative, missing, a directory, a FIFO,
// /dev/null, a symlink to a file), numbers at their bounds, and a station
// on an empty temporary tree.
type hostile struct {
	t      *testing.T
	strs   []string
	paths  []string
	ints   []int
	durs   []time.Duration
	floats []float64
	bytes  [][]byte
	dir    string            // an empty directory
	st     *station.Station  // a station whose directories are empty
	cfg    station.Config    // its config: every knob at its default
	claude *fakeclaude.Fakes // a fake claude and systemd-run
}

// hang bounds one call: a call that does not return within it is a hang,
// reported as a failure (generous, for -race on loaded machines).
const hang = 30 * time.Second

// callTimeout bounds the context every call with one gets: long enough to
// reach the code that checks the input, short enough for a hundred calls.
const callTimeout = 20 * time.Millisecond

func newHostile(t *testing.T) *hostile {
	in := badin.NewInputs(t)
	empty := in.Dir
	paths := station.Paths{
		ConfigDir: filepath.Join(empty, "cfg"), SessionsDir: filepath.Join(empty, "sessions"),
		ProjectsDir: filepath.Join(empty, "projects"), InboxDir: filepath.Join(empty, "inbox"),
		StateDir: filepath.Join(empty, "state"), ObservatoryDir: filepath.Join(empty, "obs"),
	}
	return &hostile{
		t:      t,
		strs:   in.Strs,
		paths:  in.Paths,
		ints:   in.Ints,
		durs:   in.Durs,
		floats: in.Floats,
		bytes:  in.Bytes,
		dir:    empty,
		st:     station.New(paths),
		cfg:    station.DefaultConfig(paths),
		claude: fakeclaude.Install(t),
	}
}

// ctx is a context that ends soon, so a call that waits returns.
func (h *hostile) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	h.t.Cleanup(cancel)
	return ctx
}

// call runs f, reporting a panic (with its stack) or a hang as a failure
// of desc. f runs on a goroutine of its own, so a fake's Fatalf (which
// ends the goroutine) ends only the call.
func (h *hostile) call(desc string, f func()) {
	h.t.Helper()
	callBounded(h.t, desc, hang, f)
}

// callBounded is the hostile package's Call: f on a goroutine of its own, a panic or a
// call that does not return within bound a failure of desc.
func callBounded(t *testing.T, desc string, bound time.Duration, f func()) {
	t.Helper()
	badin.Call(t, desc, bound, f)
}

// tb is a fakes.TB whose Fatalf (a fake's set-up failing, on bad input)
// logs and ends the calling goroutine: a refusal, not a panic.
type tb struct{ t *testing.T }

func (b tb) Helper()          {}
func (b tb) Cleanup(f func()) { b.t.Cleanup(f) }
func (b tb) TempDir() string  { return b.t.TempDir() }
func (b tb) Fatalf(format string, args ...any) {
	b.t.Logf("fake refused: "+format, args...)
	runtime.Goexit()
}

var _ fakes.TB = tb{}

// q shortens a hostile value for a failure message.
func q(v any) string {
	s := fmt.Sprintf("%q", v)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// A noPanicCase calls the functions it names (funcName spelling:
// "pkg.F", "pkg.T.M") with zero and hostile values.
type noPanicCase struct {
	names []string
	run   func(h *hostile)
}

// noPanicCases calls the exported functions of the public packages and
// the exported methods that take a context.
var noPanicCases = []noPanicCase{
	// station
	{names: []string{"station.New", "station.DefaultConfig"}, run: func(h *hostile) {
		for _, s := range h.strs {
			p := station.Paths{ConfigDir: s, SessionsDir: s, ProjectsDir: s, InboxDir: s, StateDir: s, ObservatoryDir: s}
			h.call("station.New("+q(s)+")", func() {
				st := station.New(p)
				st.Live()
				st.CallingSession(-1, s)
				st.LiveByPID(-1)
				st.LiveBySessionID(s)
				st.Resolve(s)
				st.KeyFile(station.Row{PID: -1, SessionID: s})
				st.PeerToken(station.Row{SessionID: s})
				_ = station.DefaultConfig(p)
			})
		}
		h.call("station.New(zero)", func() { station.New(station.Paths{}).Resolve("") })
	}},
	{names: []string{"station.Proc.WaitGone"}, run: func(h *hostile) {
		for i, s := range h.strs {
			pid := h.ints[i%len(h.ints)]
			h.call("Proc.WaitGone("+q(s)+")", func() {
				station.Proc{Root: s}.WaitGone(h.ctx(), pid, s)
				station.Proc{}.WaitGone(h.ctx(), pid, s)
			})
		}
	}},
	{names: []string{"station.PathsFromEnv", "station.ConfigFromEnv"}, run: func(h *hostile) {
		for _, s := range h.strs {
			getenv := func(string) string { return s }
			h.call("station.PathsFromEnv("+q(s)+")", func() { station.PathsFromEnv(getenv) })
			h.call("station.ConfigFromEnv("+q(s)+")", func() { station.ConfigFromEnv(getenv) })
		}
	}},
	{names: []string{"station.LoadEnviron", "station.StationFilePath", "station.Knobs"}, run: func(h *hostile) {
		for _, s := range h.strs {
			getenv := func(string) string { return s }
			h.call("station.LoadEnviron("+q(s)+")", func() {
				e, _ := station.LoadEnviron(getenv)
				e.Getenv(s)
				e.Origin(s)
				station.StationFilePath(getenv)
			})
		}
		for _, p := range h.paths {
			getenv := func(k string) string { return map[string]string{"XDG_CONFIG_HOME": p, "HOME": p}[k] }
			h.call("station.LoadEnviron(XDG_CONFIG_HOME="+q(p)+")", func() { station.LoadEnviron(getenv) })
		}
		h.call("station.LoadEnviron(nil)", func() { station.LoadEnviron(nil) })
		h.call("station.Knobs()", func() { station.Knobs() })
		var e station.Environ
		h.call("zero Environ", func() { e.Getenv("HOME"); e.Origin("HOME") })
	}},
	{names: []string{"station.IsSessionID"}, run: func(h *hostile) {
		for _, s := range h.strs {
			h.call("station.IsSessionID("+q(s)+")", func() { _ = station.IsSessionID(s) })
		}
	}},
	{names: []string{"station.ReadRow"}, run: func(h *hostile) {
		for _, p := range h.paths {
			h.call("station.ReadRow("+q(p)+")", func() { station.ReadRow(p) })
		}
	}},

	// claudeinbox
	{names: []string{"claudeinbox.NewSender", "claudeinbox.Sender.Send"}, run: func(h *hostile) {
		h.call("Sender{}.Send(zero)", func() { (&claudeinbox.Sender{}).Send(h.ctx(), claudeinbox.Request{}) })
		h.call("NewSender(zero config)", func() { claudeinbox.NewSender(station.Config{}).Send(h.ctx(), claudeinbox.Request{}) })
		for _, s := range h.strs {
			req := claudeinbox.Request{Target: s, Line: s, From: s, Priority: s}
			h.call("Sender.Send("+q(s)+")", func() {
				claudeinbox.NewSender(h.cfg).Send(h.ctx(), req)
				(&claudeinbox.Sender{Station: h.st, InboxDir: s, StateDir: s, Wait: -1, MinInterval: -1}).Send(h.ctx(), req)
			})
		}
	}},
	{names: []string{"claudeinbox.Sender.SendRetry"}, run: func(h *hostile) {
		h.call("Sender{}.SendRetry(zero)", func() { (&claudeinbox.Sender{}).SendRetry(h.ctx(), claudeinbox.Request{}) })
		for _, s := range h.strs {
			req := claudeinbox.Request{Target: s, Line: s, From: s, Priority: s, Waits: &claudeinbox.Waits{Ack: -1, Seen: 1, Reply: 1}}
			h.call("Sender.SendRetry("+q(s)+")", func() { claudeinbox.NewSender(h.cfg).SendRetry(h.ctx(), req) })
		}
	}},
	{names: []string{"claudeinbox.Classes", "headless.ResumeClasses", "headless.StartClasses"}, run: func(h *hostile) {
		h.call("the class lists", func() { claudeinbox.Classes(); headless.ResumeClasses(); headless.StartClasses() })
	}},
	{names: []string{"claudeinbox.FollowedInbox"}, run: func(h *hostile) {
		h.call("FollowedInbox(zero)", func() { claudeinbox.FollowedInbox(station.Proc{}, station.Session{}, "") })
		for i, s := range h.strs {
			sess := station.Session{Row: station.Row{PID: h.ints[i%len(h.ints)], SessionID: s}}
			h.call("FollowedInbox("+q(s)+")", func() {
				claudeinbox.FollowedInbox(station.Proc{Root: s}, sess, s)
				claudeinbox.FollowedInbox(station.Proc{}, station.Session{Row: station.Row{PID: 1, SessionID: "00000000-0000-4000-8000-000000000000"}}, s)
			})
		}
	}},
	// The inbox file layer (internal/inbox) holds its own no-panic test.

	// door
	{names: []string{"door.Dial", "door.Dialer.Dial", "door.Dialer.Deliver", "door.Conn.Deliver"}, run: func(h *hostile) {
		for _, p := range h.paths {
			h.call("door.Dial("+q(p)+")", func() {
				door.Dial(h.ctx(), p)
				(&door.Dialer{}).Dial(h.ctx(), p)
				(&door.Dialer{ExpectPID: -1, Timeout: -1, Settle: -1}).Deliver(h.ctx(), p, door.Message{})
			})
		}
		d := fakedoor.New(tb{h.t}, fakedoor.Options{})
		for _, s := range h.strs {
			m := door.Message{SessionID: s, From: s, MsgID: s, Priority: door.Priority(s), Text: s, Token: station.Token(s)}
			h.call("door.Conn.Deliver("+q(s)+")", func() {
				if c, err := (&door.Dialer{ExpectPID: os.Getpid()}).Dial(h.ctx(), d.Path()); err == nil {
					c.Deliver(h.ctx(), m)
					c.Close()
				}
				(&door.Dialer{}).Deliver(h.ctx(), d.Path(), m)
			})
		}
	}},

	// transcript
	{names: []string{"transcript.Follow", "transcript.Follower.Next"}, run: func(h *hostile) {
		for _, p := range h.paths {
			for _, o := range []transcript.FollowOptions{{}, {Poll: -1}} {
				h.call("transcript.Follow("+q(p)+")", func() {
					f := transcript.Follow(h.ctx(), p, -1, o)
					f.Next(h.ctx())
					f.Offset()
					f.Close()
					transcript.Follow(h.ctx(), p, math.MaxInt64, o).Close()
				})
			}
		}
	}},
	{names: []string{"transcript.ReadReply", "transcript.WaitReply", "transcript.WaitSeen", "transcript.Witness.WaitReply", "transcript.Witness.WaitSeen", "transcript.Exchanges", "transcript.ReadRider", "transcript.Riders", "transcript.ReadRiderEntry"}, run: func(h *hostile) {
		h.call("transcript.ReadRiderEntry(nil entry)", func() { transcript.ReadRiderEntry("", nil, time.Time{}, -1) })
		for _, p := range h.paths {
			ents, _ := os.ReadDir(filepath.Dir(p))
			for _, e := range ents {
				h.call("transcript.ReadRiderEntry("+q(filepath.Dir(p))+", "+q(e.Name())+")", func() {
					transcript.ReadRiderEntry(filepath.Dir(p), e, time.Time{}, -1)
				})
			}
			for _, s := range []string{"", "abc", "a\x00b"} {
				h.call("transcript readers("+q(p)+", "+q(s)+")", func() {
					transcript.ReadReply(p, s, transcript.ReplyOptions{From: -1})
					transcript.WaitReply(h.ctx(), p, s, transcript.ReplyOptions{Wait: -1, Poll: -1})
					transcript.WaitSeen(h.ctx(), p, s, transcript.SeenOptions{From: math.MaxInt64, Poll: -1})
					w := transcript.Witness{ProjectsDir: p, Poll: -1}
					w.WaitReply(h.ctx(), p, -1, s, -1)
					w.WaitSeen(h.ctx(), p, -1, s, -1)
					w.Mark(s, s)
					transcript.Exchanges(p, -1)
					transcript.ReadRider(p, time.Time{}, -1)
					transcript.Riders(p, time.Time{}, -1)
				})
			}
		}
	}},
	{names: []string{"transcript.ReadSession"}, run: func(h *hostile) {
		for _, s := range h.strs {
			h.call("transcript.ReadSession("+q(s)+")", func() {
				transcript.Witness{ProjectsDir: s}.Mark(s, s)
				transcript.Witness{ProjectsDir: h.dir}.Mark(s, "/home/u/proj")
				transcript.ReadSession(h.st, s, s, -1)
				transcript.ReadSession(h.st, h.dir, s, math.MaxInt)
			})
		}
		h.call("transcript.ReadSession(nil station)", func() { transcript.ReadSession(nil, h.dir, "abc", 0) })
	}},

	{names: []string{"transcript.Locate"}, run: func(h *hostile) {
		for _, s := range h.strs {
			for _, p := range h.paths {
				h.call("transcript.Locate("+q(p)+", "+q(s)+")", func() {
					transcript.Locate(p, s, s)
					transcript.Locate(p, "00000000-0000-0000-0000-000000000000", s)
				})
			}
		}
	}},

	// receipt
	// receipt.Writer.Append: receipt_test.go's TestAppendHostile.
	{names: []string{"receipt.Find"}, run: func(h *hostile) {
		for _, p := range h.paths {
			for _, s := range h.strs[:4] {
				h.call("receipt.Find("+q(p)+", "+q(s)+")", func() { receipt.Find(p, s) })
			}
		}
	}},

	// fleet: a Host whose ssh is not there fails as ssh does, never panics.
	{names: []string{"fleet.Host.Run", "fleet.Host.Send", "fleet.Host.Sessions", "fleet.Host.Resume", "fleet.Host.Start", "fleet.Host.Lineage", "fleet.Host.Receipt", "fleet.MergeSessions", "fleet.Watch", "fleet.SplitTarget"}, run: func(h *hostile) {
		for _, s := range h.strs[:4] {
			host := fleet.Host{Dest: s, SSH: []string{"/nonexistent/ssh"}}
			h.call("fleet.Host("+q(s)+")", func() {
				host.Run(h.ctx(), []string{s}, nil)
				host.Send(h.ctx(), fleet.SendRequest{Target: s, Line: s}, nil)
				host.Sessions(h.ctx(), true)
				host.Resume(h.ctx(), headless.ResumeRequest{SessionID: s, Line: s, CWD: s})
				host.Start(h.ctx(), headless.StartRequest{Prompt: s, CWD: s, Out: s})
				host.Lineage(h.ctx())
				host.Receipt(h.ctx(), s)
				fleet.SplitTarget([]string{s, "", s + "/"}, s+"/"+s)
				fleet.SplitTarget(nil, s)
				fleet.MergeSessions(h.ctx(), []fleet.Host{host, {}}, false)
				ctx, cancel := context.WithCancel(h.ctx())
				cancel()
				for range fleet.Watch(ctx, []fleet.Host{host}, fleet.WatchOptions{}) {
				}
			})
		}
		h.call("fleet zero", func() { (fleet.Host{}).Run(h.ctx(), nil, nil); (fleet.Host{}).Close() })
	}},

	// lineage
	{names: []string{"lineage.Ledger.Register", "lineage.Ledger.Rows", "lineage.Ledger.Links", "lineage.Ledger.Parent"}, run: func(h *hostile) {
		for _, p := range h.paths {
			for _, s := range h.strs[:4] {
				link := lineage.Link{Child: s, ChildHost: s, Parent: s, ParentHost: s, Title: s, By: lineage.By(s)}
				h.call("Ledger.Register("+q(p)+", "+q(s)+")", func() {
					l := &lineage.Ledger{Path: p, LockWait: -1}
					l.Register(h.ctx(), link)
					l.Rows(h.ctx())
					l.Links(h.ctx())
					l.Parent(h.ctx(), s)
					(&lineage.Ledger{Path: p, Sessions: h.st}).Register(h.ctx(), link)
				})
			}
		}
		h.call("Ledger{}.Register(zero)", func() { (&lineage.Ledger{}).Register(h.ctx(), lineage.Link{}) })
		h.call("Ledger{}.reads(zero)", func() {
			l := &lineage.Ledger{}
			l.Rows(h.ctx())
			l.Links(h.ctx())
			l.Parent(h.ctx(), "")
		})
	}},

	// headless
	{names: []string{"headless.Runner.Resume", "headless.Runner.Start", "headless.Runner.RunUnit", "headless.Runner.StartSteerable", "headless.Run.Wait"}, run: func(h *hostile) {
		cfg := h.cfg
		cfg.ClaudeBin, cfg.SystemdRun = h.claude.Claude, h.claude.SystemdRun
		h.call("Runner{}.StartSteerable(zero)", func() {
			run, _ := (&headless.Runner{}).StartSteerable(h.ctx(), headless.StartRequest{})
			run.Wait(h.ctx())
		})
		h.call("Run{}.Wait", func() { (&headless.Run{}).Wait(h.ctx()) })
		h.call("Runner{}.Resume(zero)", func() { (&headless.Runner{}).Resume(h.ctx(), headless.ResumeRequest{}) })
		h.call("Runner{}.Start(zero)", func() { (&headless.Runner{}).Start(h.ctx(), headless.StartRequest{}) })
		h.call("Runner{}.RunUnit(\"\")", func() { (&headless.Runner{}).RunUnit(h.ctx(), "") })
		for i, s := range h.strs {
			n, d, f := h.ints[i%len(h.ints)], h.durs[i%len(h.durs)], h.floats[i%len(h.floats)]
			r := &headless.Runner{Config: cfg, Station: h.st, Environ: func() []string { return []string{s, "CLAUDE_CONFIG_DIR=" + s} },
				PID: n, KillGrace: d, NewID: func() string { return s }}
			h.call("Runner.Resume("+q(s)+")", func() {
				r.Resume(h.ctx(), headless.ResumeRequest{SessionID: s, Line: s, Model: s, MaxTurns: n, Budget: f, Tools: s, CWD: s, Timeout: d, Self: s})
			})
			h.call("Runner.Start("+q(s)+")", func() {
				r.Start(h.ctx(), headless.StartRequest{Prompt: s, CWD: s, Model: s, MaxTurns: n, Budget: f, Tools: s, AllowedTools: s,
					SessionID: s, Name: s, Out: s, Timeout: d, Doorman: headless.DoormanMode(s), Self: s})
				r.Start(h.ctx(), headless.StartRequest{Prompt: "hi", CWD: h.dir, SessionID: s, Systemd: true, Timeout: d, Self: s})
			})
			h.call("Runner.StartSteerable("+q(s)+")", func() {
				run, _ := r.StartSteerable(h.ctx(), headless.StartRequest{Prompt: s, CWD: s, SessionID: s, Detach: true, Timeout: d, Self: s})
				run.Wait(h.ctx())
			})
			h.call("Runner.RunUnit("+q(s)+")", func() { r.RunUnit(h.ctx(), s) })
		}
		for _, p := range h.paths {
			h.call("Runner.RunUnit("+q(p)+")", func() { (&headless.Runner{Config: cfg, Station: h.st}).RunUnit(h.ctx(), p) })
		}
		// A claude that answers garbage: the result is parsed leniently.
		for _, out := range []string{"\x00{", "{\"type\":\"result\",\"usage\":7}", "{\"type\":\"result\",\"result\":null,\"session_id\":[]}\n{"} {
			h.claude.Script(fakeclaude.Script{Stdout: out, Exit: -1})
			sid := "6c2b1c1e-4b7a-4f7e-9d2a-1a2b3c4d5e6f"
			r := &headless.Runner{Config: cfg, Station: h.st, NewID: func() string { return sid }}
			h.call("Runner.Start(claude prints "+q(out)+")", func() {
				r.Start(context.Background(), headless.StartRequest{Prompt: "hi", CWD: h.dir, SessionID: sid, Timeout: 10 * time.Second, NoLineage: true, Doorman: headless.DoormanMode("none")})
			})
			h.call("Runner.Resume(claude prints "+q(out)+")", func() {
				r.Resume(context.Background(), headless.ResumeRequest{SessionID: sid, Line: "hi", CWD: h.dir, Timeout: 10 * time.Second})
			})
		}
	}},
	// doorman
	{names: []string{"doorman.New", "doorman.ThisProcess", "doorman.Doorman.Run", "doorman.Doorman.ServeMCP", "doorman.Server.Serve", "doorman.ServeIfInvoked"}, run: func(h *hostile) {
		h.call("doorman.New(zero).Run", func() { doorman.New(doorman.Options{}).Run(h.ctx()) })
		// Not invoked as "doorman --mcp" (the test's arguments): it returns.
		h.call("doorman.ServeIfInvoked", func() { doorman.ServeIfInvoked(h.ctx()) })
		for _, s := range h.strs {
			getenv := func(string) string { return s }
			o := doorman.Options{Host: doorman.ThisProcess(h.cfg, getenv), Config: h.cfg, Mode: doorman.Mode(s), Session: s, Once: true, Log: io.Discard}
			h.call("doorman.New("+q(s)+").Run", func() {
				d := doorman.New(o)
				d.Run(h.ctx())
				d.Status()
				d.Report()
				doorman.New(doorman.Options{Config: station.Config{}, Mode: doorman.Mode(s), Session: s, Log: io.Discard}).Run(h.ctx())
				doorman.New(doorman.Options{Host: doorman.ThisProcess(station.Config{}, getenv), Mode: doorman.ModeMCP, Session: s}).Run(h.ctx())
			})
			h.call("doorman.ServeMCP("+q(s)+")", func() {
				srv := &doorman.Server{In: strings.NewReader(s + "\n{\"jsonrpc\":\"2.0\",\"id\":" + s + "}\n"), Out: io.Discard}
				doorman.New(doorman.Options{Host: o.Host, Config: h.cfg, Mode: doorman.ModeMCP, Session: s}).ServeMCP(h.ctx(), srv)
			})
		}
		h.call("Server{}.Serve(zero)", func() { (&doorman.Server{}).Serve(h.ctx()) })
		for _, b := range h.bytes {
			h.call("Server.Serve("+q(b)+")", func() {
				(&doorman.Server{In: bytes.NewReader(b), Out: io.Discard}).Serve(h.ctx())
			})
		}
	}},
	{names: []string{"doorman.DoorDialer.Peer", "doorman.DoorDialer.Deliver"}, run: func(h *hostile) {
		for _, p := range h.paths {
			h.call("DoorDialer("+q(p)+")", func() {
				d := doorman.DoorDialer{Settle: -1, Timeout: -1}
				d.Peer(h.ctx(), p)
				d.Deliver(h.ctx(), p, -1, door.Message{Text: "a\x00b"}, true)
				doorman.DoorDialer{}.Deliver(h.ctx(), p, 0, door.Message{}, false)
			})
		}
	}},

	// observatory
	{names: []string{"observatory.Build"}, run: func(h *hostile) {
		h.call("observatory.Build(zero)", func() { observatory.Build(h.ctx(), observatory.Options{}) })
		for i, s := range h.strs {
			p := station.Paths{ConfigDir: s, SessionsDir: s, ProjectsDir: s, InboxDir: s, StateDir: s, ObservatoryDir: s}
			o := observatory.Options{Station: h.st, Paths: p, RidingWindow: h.durs[i%len(h.durs)], Only: s, Generator: s}
			h.call("observatory.Build("+q(s)+")", func() {
				observatory.Build(h.ctx(), o)
				observatory.Build(h.ctx(), observatory.Options{Station: station.New(p), Paths: p, Only: s})
			})
		}
	}},
	{names: []string{"observatory.Watch"}, run: func(h *hostile) {
		h.call("observatory.Watch(zero)", func() {
			if ch, err := observatory.Watch(h.ctx(), observatory.WatchOptions{}); err == nil {
				for range ch {
				}
			}
		})
		for i, s := range h.strs {
			p := station.Paths{ConfigDir: s, SessionsDir: s, ProjectsDir: s, InboxDir: s, StateDir: s, ObservatoryDir: s}
			o := observatory.WatchOptions{Station: station.New(p), Paths: p, Only: s, MaxQueued: h.ints[i%len(h.ints)], Liveness: h.durs[i%len(h.durs)]}
			h.call("observatory.Watch("+q(s)+")", func() {
				if ch, err := observatory.Watch(h.ctx(), o); err == nil {
					for range ch {
					}
				}
			})
		}
	}},
	{names: []string{"observatory.GC"}, run: func(h *hostile) {
		h.call("observatory.GC(zero)", func() { observatory.GC(h.ctx(), observatory.GCOptions{DryRun: true}) })
		for _, d := range h.durs {
			h.call(fmt.Sprintf("observatory.GC(%v)", d), func() { observatory.GC(h.ctx(), observatory.GCOptions{Station: h.st, OlderThan: d}) })
		}
	}},
	// doctor
	{names: []string{"doctor.Run"}, run: func(h *hostile) {
		exec := func(context.Context, string, ...string) ([]byte, int, error) { return []byte("\x00\xff"), -1, nil }
		h.call("doctor.Run(zero)", func() { doctor.Run(h.ctx(), doctor.Options{Exec: exec}) })
		for i, s := range h.strs {
			o := doctor.Options{Config: h.cfg, Proc: station.Proc{Root: s}, Self: s, PID: h.ints[i%len(h.ints)], SessionID: s, Exec: exec, Timeout: h.durs[i%len(h.durs)]}
			h.call("doctor.Run("+q(s)+")", func() { doctor.Run(h.ctx(), o) })
		}
	}},

	// fakes: on bad input a fake calls tb.Fatalf (its set-up failed); it
	// does not panic.
	{names: []string{"fakes/fakestation.New", "fakes/fakeowner.New", "fakes/fakeowner.Owner.WaitAcks", "fakes/fakeowner.Owner.WaitHeartbeat", "fakes/fakeowner.Child.Wait"}, run: func(h *hostile) {
		h.call("fakestation.New", func() { fakestation.New(tb{h.t}).Station().Resolve("abc") })
		for _, s := range h.strs[:4] {
			h.call("fakeowner.New("+q(s)+")", func() {
				o := fakeowner.New(tb{h.t}, fakeowner.Options{Status: s})
				o.WaitAcks(h.ctx(), -1)
				o.WaitAcks(h.ctx(), math.MaxInt)
				o.WaitHeartbeat(h.ctx(), nil)
				o.Append(s)
				o.Start(exec.Command(filepath.Join(h.dir, "no-such-program"))).Wait(h.ctx())
			})
		}
	}},
	{names: []string{"fakes/fakedoor.New", "fakes/fakedoor.Listen", "fakes/fakedoor.Door.WaitConns", "fakes/fakedoor.Door.WaitFrames"}, run: func(h *hostile) {
		for i, s := range h.strs {
			o := fakedoor.Options{Now: nil, FirstLineDeadline: h.durs[i%len(h.durs)],
				Guard:     &fakedoor.Guard{Capacity: h.floats[i%len(h.floats)], RefillPerSecond: -1, DedupWindow: -1},
				MaxBuffer: h.ints[i%len(h.ints)], RefuseWhen: nil, SessionID: s, Transcript: s}
			h.call("fakedoor.New("+q(s)+")", func() {
				d := fakedoor.New(tb{h.t}, o)
				(&door.Dialer{}).Deliver(h.ctx(), d.Path(), door.Message{SessionID: s, Text: s})
				d.WaitConns(h.ctx(), -1)
				d.WaitFrames(h.ctx(), math.MaxInt)
			})
		}
		for _, p := range h.paths {
			h.call("fakedoor.Listen("+q(p)+")", func() {
				if d, err := fakedoor.Listen(p, fakedoor.Options{}); err == nil {
					d.Close()
				}
			})
		}
	}},
	{names: []string{"fakes/fakedoorman.Start"}, run: func(h *hostile) {
		for _, p := range h.paths {
			for _, s := range h.strs[:4] {
				o := fakedoorman.Options{PeerStatus: s, AckDelay: -1, Refuse: inboxv1.Reason(s), HeartbeatSession: s, State: inboxv1.State(s), PID: -1, Door: s}
				h.call("fakedoorman.Start("+q(p)+", "+q(s)+")", func() { fakedoorman.Start(tb{h.t}, p, s, o) })
			}
		}
	}},
	{names: []string{"fakes/fakedoorman.Start", "fakes/fakedoorman.Doorman.WaitAcked"}, run: func(h *hostile) {
		h.call("fakedoorman.Start(HeartbeatEvery -1)", func() {
			d := fakedoorman.Start(tb{h.t}, h.dir, "abc", fakedoorman.Options{HeartbeatEvery: -1})
			d.WaitAcked(h.ctx(), -1)
			d.WaitAcked(h.ctx(), math.MaxInt)
		})
	}},
	{names: []string{"fakes/fakesession.Start"}, run: func(h *hostile) {
		h.call("fakesession.Start(zero)", func() { fakesession.Start(tb{h.t}, fakesession.Options{}) })
		for _, s := range h.strs[:4] {
			h.call("fakesession.Start("+q(s)+")", func() { fakesession.Start(tb{h.t}, fakesession.Options{Name: s, CWD: s}) })
		}
	}},
	{names: []string{"fakes/fakeclaude.Install", "fakes/fakeclaude.ResultObject", "fakes/fakeclaude.Fakes.WaitCalls"}, run: func(h *hostile) {
		h.call("fakeclaude.Install", func() {
			f := fakeclaude.Install(tb{h.t})
			f.WaitCalls(h.ctx(), "", -1)
			f.WaitCalls(h.ctx(), "no-such-fake", math.MaxInt)
			(&fakeclaude.Fakes{}).WaitCalls(h.ctx(), "claude", 1)
		})
		for i, s := range h.strs {
			sc := fakeclaude.Script{Stdout: s, Result: s, Subtype: s, TerminalReason: s, CostUSD: h.floats[i%len(h.floats)], NumTurns: h.ints[i%len(h.ints)], SessionID: s}
			h.call("fakeclaude.ResultObject("+q(s)+")", func() { fakeclaude.ResultObject(sc, s) })
		}
	}},
	{names: []string{"fakes/fakedoorman.DeadPID"}, run: func(h *hostile) {
		h.call("fakedoorman.DeadPID", func() { fakedoorman.DeadPID() })
	}},
	{names: []string{"fakes/fakemodel.NewServer", "fakes/fakemodel.Server.WaitRequest", "fakes/fakemodel.IsSideRequest", "fakes/fakemodel.Text", "fakes/fakemodel.Tool", "fakes/fakemodel.Bash", "fakes/fakemodel.Error"}, run: func(h *hostile) {
		for i, s := range h.strs {
			replies := []fakemodel.Reply{fakemodel.Text(s), fakemodel.Tool(s, nil), fakemodel.Tool(s, make(chan int)), fakemodel.Bash(s), fakemodel.Error(h.ints[i%len(h.ints)], s)}
			h.call("fakemodel.NewServer("+q(s)+")", func() {
				srv := fakemodel.NewServer(fakemodel.Options{DefaultReply: replies[i%len(replies)], Handler: nil, Logf: nil, Now: nil, Replies: replies, SideFilter: nil, SideReply: nil})
				defer srv.Close()
				srv.WaitRequest(h.ctx(), nil)
				fakemodel.IsSideRequest(&fakemodel.Request{Model: s})
				fakemodel.IsSideRequest(nil)
				body, _ := json.Marshal(map[string]any{"model": s, "messages": []any{map[string]any{"role": "user", "content": s}}})
				postQuiet(h.ctx(), srv.URL+"/v1/messages", body)
				postQuiet(h.ctx(), srv.URL+"/v1/messages", []byte(s))
			})
		}
	}},
}

// postQuiet posts body to url and drops the answer.
func postQuiet(ctx context.Context, url string, body []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestNoPanic calls the exported functions of the public packages (and
// the methods that take a context) with zero values and hostile ones, and
// fails on a panic or a call that does not return. The calls may refuse;
// they must not panic. TestZeroReceivers (receivers_test.go) calls the
// exported methods on zero values.
func TestNoPanic(t *testing.T) {
	if testing.Short() {
		t.Skip("a hundred calls, some starting fakes")
	}
	isolate(t)
	for _, c := range noPanicCases {
		t.Run(c.names[0], func(t *testing.T) {
			c.run(newHostile(t))
		})
	}
}

// isolate points every knob and home at an empty temporary tree and
// works in another, so a zero config that falls back to the defaults
// reads and writes nothing of the machine's.
func isolate(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OO_CLAUDE_") || strings.HasPrefix(k, "CLAUDE") || k == "XDG_RUNTIME_DIR" || k == "TMPDIR" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("OO_CLAUDE_BIN", filepath.Join(home, "no-claude"))
	t.Setenv("OO_CLAUDE_SYSTEMD_RUN", filepath.Join(home, "no-systemd-run"))
	t.Chdir(t.TempDir())
}
