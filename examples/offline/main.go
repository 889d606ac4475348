// Command offline shows the real thing without an API key: a real Claude
// Code session, run offline against a fake model on 127.0.0.1, steered
// while it works and asked a question, through the oo-claude library.
//
//	go run ./examples/offline
//
// It starts `claude -p` with the doorman injected (headless.Runner.Start,
// what `oo-claude start` does; the doorman is this program again: the
// first call in main, doorman.ServeIfInvoked, serves `doorman --mcp` as
// `oo-claude doorman --mcp` does), waits for the doorman to follow
// the session's inbox, sends a line while the session runs a tool
// (claudeinbox.Sender.Send, what `oo-claude send --seen` does), waits until
// the session's transcript shows the model was given that line, then sends
// a question and waits for the model's answer to it in the transcript
// (Sender.ReplyWait, what `oo-claude send --reply` does). It
// prints each step with its time, then removes everything it made (a
// temporary HOME with Claude Code's config, the inboxes, the transcripts)
// and checks that no process it started is left.
//
// The claude binary is -claude PATH, else $OO_CLAUDE_E2E_CLAUDE, else the
// pinned CLI where scripts/install-claude-code.sh puts it. Without one it
// exits 1 with one line naming the install command. Every other failure
// exits 1 too, saying which step did not hold.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/station"
)

// installCommand installs the pinned Claude Code and prints its path.
const installCommand = "scripts/install-claude-code.sh"

func main() {
	// Claude Code runs the injected doorman as "<this program> doorman
	// --mcp": then this serves it and exits.
	doorman.ServeIfInvoked(context.Background())
	fs := flag.NewFlagSet("offline", flag.ContinueOnError)
	claude := fs.String("claude", "", "the claude binary (default $OO_CLAUDE_E2E_CLAUDE, else the pinned CLI in the install script's cache)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "offline: takes no arguments (flags: -claude PATH)")
		os.Exit(2)
	}
	ctx, stop := signalContext()
	bin, err := findClaude(*claude, os.Getenv)
	if err == nil {
		err = run(ctx, bin, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "offline: %v\n", err)
		os.Exit(1)
	}
}

// findClaude returns the claude binary to run: flagPath, else
// $OO_CLAUDE_E2E_CLAUDE, else the pinned CLI in the install script's
// cache. A binary that is not there is an error naming the install command.
func findClaude(flagPath string, getenv func(string) string) (string, error) {
	p, from := flagPath, "-claude"
	if p == "" {
		p, from = getenv("OO_CLAUDE_E2E_CLAUDE"), "OO_CLAUDE_E2E_CLAUDE"
	}
	if p == "" {
		var err error
		if p, err = pinnedPath(getenv); err != nil {
			return "", fmt.Errorf("no Claude Code found (%v): install it with %s (it prints the path), or give -claude PATH", err, installCommand)
		}
		from = "the install script's cache"
	}
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("no Claude Code at %s (%s): install it with %s (it prints the path), or give -claude PATH", p, from, installCommand)
	}
	return filepath.Abs(p)
}

// pinnedPath is where scripts/install-claude-code.sh puts the version
// claude-code.version pins:
// ${OO_CLAUDE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oo-claude-e2e}/<version>/node_modules/@anthropic-ai/claude-code-<platform>/claude.
// The version file is looked for in the current directory and its parents.
func pinnedPath(getenv func(string) string) (string, error) {
	version, err := pinnedVersion()
	if err != nil {
		return "", err
	}
	cache := getenv("OO_CLAUDE_E2E_CACHE")
	if cache == "" {
		base := getenv("XDG_CACHE_HOME")
		if base == "" {
			base = filepath.Join(getenv("HOME"), ".cache")
		}
		cache = filepath.Join(base, "oo-claude-e2e")
	}
	platform := map[string]string{"amd64": "linux-x64", "arm64": "linux-arm64"}[runtime.GOARCH]
	if runtime.GOOS != "linux" || platform == "" {
		return "", fmt.Errorf("the pinned CLI is installed on Linux x64 and arm64 only, this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return filepath.Join(cache, version, "node_modules", "@anthropic-ai", "claude-code-"+platform, "claude"), nil
}

func pinnedVersion() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "claude-code.version"))
		if err == nil {
			return strings.TrimSpace(string(b)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no claude-code.version here or above: run it from the oo-claude module")
		}
		dir = parent
	}
}

// The conversation the fake model plays: a Bash tool round while the
// steered line comes in, another while the question comes in, then the
// answer.
const (
	prompt   = "run the test suite and tell me how it went"
	steer    = "please also run the linter"
	question = "what did the linter find?"
	answer   = "The linter found nothing to fix, and the tests pass."
)

// model answers each conversation request: the answer once the question is
// in the conversation, else one more tool round ("sleep 3"), so the session
// is busy whenever a line arrives.
func model(r *fakemodel.Request) fakemodel.Reply {
	if r.MessagesContain(question) {
		return fakemodel.Text(answer)
	}
	return fakemodel.Bash("sleep 3")
}

// stepper prints one line per step: when it happened (seconds since the
// start), the step, what happened.
type stepper struct {
	out   io.Writer
	start time.Time
}

func (s *stepper) printf(step, format string, a ...any) { s.at(time.Now(), step, format, a...) }

func (s *stepper) at(t time.Time, step, format string, a ...any) {
	fmt.Fprintf(s.out, "%6.1fs  %-8s %s\n", t.Sub(s.start).Seconds(), step, fmt.Sprintf(format, a...))
}

// run is the whole demo with the claude binary bin.
func run(ctx context.Context, bin string, out io.Writer) (err error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	st := &stepper{out: out, start: time.Now()}

	// A private machine: HOME, Claude Code's config, the runtime dir (the
	// door's socket), TMPDIR and a project directory, all in one temporary
	// directory with a short path (a socket path has at most 107 bytes).
	root, err := os.MkdirTemp("", "oo-offline-")
	if err != nil {
		return err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return err
	}
	defer func() {
		if rerr := os.RemoveAll(root); rerr != nil && err == nil {
			err = rerr
		}
	}()
	dirs := map[string]string{"HOME": "h", "CLAUDE_CONFIG_DIR": "c", "XDG_RUNTIME_DIR": "r", "TMPDIR": "t"}
	cwd := filepath.Join(root, "work")
	if err := os.Mkdir(cwd, 0o700); err != nil {
		return err
	}

	m := fakemodel.NewServer(fakemodel.Options{Handler: model})
	defer m.Close()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "USER=" + os.Getenv("USER"), "LANG=C.UTF-8",
		"OO_CLAUDE_BIN=" + bin,
		// Generous bounds, so a loaded machine slows the demo down
		// instead of failing it: how long the doorman looks for Claude
		// Code's record of a line it wrote, and how long send waits for
		// the doorman's ack.
		"OO_CLAUDE_DOOR_CONFIRM_S=10", "OO_CLAUDE_WAIT_S=30",
		// The model is the fake one; nothing else leaves the machine.
		"ANTHROPIC_BASE_URL=" + m.URL, "ANTHROPIC_API_KEY=sk-ant-offline",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"HTTPS_PROXY=" + m.URL, "HTTP_PROXY=" + m.URL, "NO_PROXY=127.0.0.1,localhost",
	}
	for name, d := range dirs {
		p := filepath.Join(root, d)
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
		env = append(env, name+"="+p)
	}
	getenv := func(k string) string {
		for _, kv := range env {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v
			}
		}
		return ""
	}
	cfg, err := station.ConfigFromEnv(getenv)
	if err != nil {
		return err
	}
	ver, _ := exec.CommandContext(ctx, bin, "--version").Output()
	fmt.Fprintf(out, "Claude Code %s (%s)\nfake model %s, everything under %s\n",
		strings.TrimSpace(string(ver)), bin, m.URL, root)

	// 1. start: claude -p with the doorman injected, in the background.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	sid := uuid.NewString()
	runner := &headless.Runner{Config: cfg, Environ: func() []string { return env }}
	started := make(chan headless.StartResult, 1)
	go func() {
		res, err := runner.Start(ctx, headless.StartRequest{
			Prompt: prompt, CWD: cwd, SessionID: sid, MaxTurns: 12, Budget: 1,
			Tools: "Bash", AllowedTools: "Bash", Timeout: 90 * time.Second,
			Self: self, NoLineage: true,
		})
		if err != nil && res.Reason == "" {
			res.Reason = err.Error()
		}
		started <- res
	}()
	// Whatever happens next, the session ends before run returns.
	defer func() {
		cancel()
		<-started
	}()
	st.printf("start", "claude -p %q in %s, session %s, doorman injected", prompt, cwd, sid)

	// 2. The doorman: Claude Code spawned it; it follows once it has
	// found its session and checked the door.
	var hb inboxv1.Heartbeat
	if err := poll(ctx, started, func() bool {
		hb, err = readHeartbeat(cfg.InboxDir, sid)
		return err == nil && hb.SessionID == sid && hb.State == inboxv1.StateFollowing
	}); err != nil {
		return fmt.Errorf("the injected doorman did not follow: %w (heartbeat: %+v)", err, hb)
	}
	st.printf("doorman", "pid %d follows the inbox, a child of claude pid %d", hb.PID, hb.OwnerPID)

	// 3. steer: a line into the running turn, and the proof the model got it.
	sender := claudeinbox.NewSender(cfg)
	sender.SeenWait = 30 * time.Second // NewSender set the transcript witness
	sent := time.Now()
	v, err := sender.Send(ctx, claudeinbox.Request{Target: sid, Line: steer, From: "steerer"})
	if err != nil {
		return fmt.Errorf("steer: %w", err)
	}
	if !v.Class.Delivered() {
		return fmt.Errorf("steer: %s (%s), want delivered-*", v.Class, v.Reason)
	}
	acked := sent.Add(v.Waited)
	st.at(acked, "steer", "%s msg_id=%s, acked after %.2fs: %q", v.Class, v.MsgID, v.Waited.Seconds(), v.Line)
	if v.Seen == nil || !*v.Seen {
		return fmt.Errorf("steer: the transcript did not show msg_id=%s within %v", v.MsgID, sender.SeenWait)
	}
	st.at(acked.Add(v.SeenAfter), "seen", "the transcript shows msg_id=%s, %.1fs after the ack: the model got the line", v.MsgID, v.SeenAfter.Seconds())

	// 4. ask: a question into the same running turn, and its answer (what
	// `oo-claude send --reply` does): the assistant's text after the model
	// took the question, to the end of the turn.
	sender.MinInterval = 0 // a second line within seconds is this demo's point
	sender.SeenWait, sender.ReplyWait = 0, 60*time.Second
	sent = time.Now()
	q, err := sender.Send(ctx, claudeinbox.Request{Target: sid, Line: question, From: "asker"})
	if err != nil {
		return fmt.Errorf("ask: %w", err)
	}
	if !q.Class.Delivered() || q.Seen == nil || !*q.Seen {
		return fmt.Errorf("ask: %s (%s), seen %v; want delivered-* and seen", q.Class, q.Reason, q.Seen)
	}
	acked = sent.Add(q.Waited)
	st.at(acked, "ask", "%s msg_id=%s, acked after %.2fs: %q", q.Class, q.MsgID, q.Waited.Seconds(), q.Line)
	if q.Reply == nil {
		return fmt.Errorf("ask: no reply within %v (%s)", sender.ReplyWait, q.Note)
	}
	st.at(acked.Add(q.ReplyAfter), "reply", "%q, %.1fs after the ack", q.Reply.Text, q.ReplyAfter.Seconds())

	// 5. The session ends its turn with the answer; its doorman stops.
	var res headless.StartResult
	select {
	case res = <-started:
		started <- res // for the deferred wait
	case <-ctx.Done():
		return fmt.Errorf("the session did not finish: %w", ctx.Err())
	}
	if res.Class != headless.Completed {
		return fmt.Errorf("start: %s (%s)", res.Class, res.Reason)
	}
	turns := 0
	if res.File.NumTurns != nil {
		turns = *res.File.NumTurns
	}
	st.printf("done", "%s: %d turns, %d requests to the fake model", res.Class, turns, m.Len())
	pids := []int{hb.PID, hb.OwnerPID}
	if err := poll(ctx, nil, func() bool { return !alive(pids[0]) && !alive(pids[1]) }); err != nil {
		return fmt.Errorf("claude (pid %d) or its doorman (pid %d) still runs", pids[1], pids[0])
	}
	st.printf("cleanup", "claude and its doorman exited; removing %s", root)
	return nil
}

// poll checks cond every 20 ms until it holds, ctx ends or the session
// ended (started yields).
func poll(ctx context.Context, started chan headless.StartResult, cond func() bool) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case res := <-started:
			started <- res
			return fmt.Errorf("the session ended first: %s (%s)", res.Class, res.Reason)
		case <-t.C:
		}
	}
	return nil
}

// alive reports whether a process pid exists (and is not a zombie).
func alive(pid int) bool {
	info, err := station.Proc{}.Info(pid)
	return err == nil && !info.Zombie()
}

// signalContext ends at SIGINT or SIGTERM (Claude Code stops its MCP
// servers with SIGINT; a person stops the demo with ^C, and it cleans up).
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// readHeartbeat reads session sid's heartbeat in the inbox dir,
// <session id>.inbox.doorman.json.
func readHeartbeat(inboxDir, sid string) (inboxv1.Heartbeat, error) {
	var h inboxv1.Heartbeat
	b, err := os.ReadFile(filepath.Join(inboxDir, sid+".inbox.doorman.json"))
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	return h, err
}
