// Package fakeclaude provides a fake `claude` and a fake `systemd-run` for
// tests: the test binary itself, re-executed under those names (the way
// testscript fakes external programs), so no build step is needed and other
// projects' tests can use them too.
//
// Wire it up once per test binary:
//
//	func TestMain(m *testing.M) {
//		fakeclaude.Main() // runs a fake and exits when the binary is one
//		os.Exit(m.Run())
//	}
//
// and in a test:
//
//	f := fakeclaude.Install(t)
//	f.Script(fakeclaude.Script{Result: "PONG"})
//	// run the code under test with OO_CLAUDE_BIN=f.Claude …
//	calls := f.Calls("claude")
//
// It guarantees: each fake reads its script from a file next to it
// (<dir>/<name>.script.json), not from the environment, so a scrubbed
// environment cannot lose the script; every invocation is recorded (argv,
// whole environment, cwd, pid, process group, and the content of a
// credential descriptor named in the environment) as one JSON line in
// <dir>/calls.jsonl before the fake does anything else; and the fake
// systemd-run starts the unit's command, when asked to, with nothing but the
// variables its -E flags name, as a real unit would get.
package fakeclaude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/oo-family/oo-claude/fakes"
	"github.com/oo-family/oo-claude/fakes/internal/fakewait"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// Names of the fakes, as the test binary's base name selects them.
const (
	NameClaude     = "claude"
	NameSystemdRun = "systemd-run"
	// NameGrandchild is the process a fake claude spawns when asked to:
	// it sleeps (ignoring SIGTERM when the script says so) until killed.
	NameGrandchild = "fakeclaude-grandchild"
)

// Script tells a fake what to do. The zero value makes a fake claude print
// a successful result for the session its argv names and exit 0.
type Script struct {
	// Stdout, when set, is printed verbatim instead of a result object.
	Stdout string `json:"stdout,omitempty"`
	// Result is the result text of the default result object.
	Result string `json:"result,omitempty"`
	// Subtype, IsError, TerminalReason, CostUSD, NumTurns and SessionID
	// shape the default result object (SessionID "" = the one from argv).
	Subtype        string  `json:"subtype,omitempty"`
	IsError        bool    `json:"is_error,omitempty"`
	TerminalReason string  `json:"terminal_reason,omitempty"`
	CostUSD        float64 `json:"cost_usd,omitempty"`
	NumTurns       int     `json:"num_turns,omitempty"`
	SessionID      string  `json:"session_id,omitempty"`
	Stderr         string  `json:"stderr,omitempty"`
	Exit           int     `json:"exit,omitempty"`
	// DelayMS is slept before answering (systemd-run: before exiting).
	DelayMS int `json:"delay_ms,omitempty"`
	// HoldUntil, when set, is a path the fake claude waits for (up to
	// 60 s) before answering: a run that lasts until the test lets it end.
	HoldUntil string `json:"hold_until,omitempty"`
	// Grandchild spawns a child that outlives the fake unless its process
	// group is killed; its pid is recorded in the call (Grandchild).
	Grandchild bool `json:"grandchild,omitempty"`
	// IgnoreTERM makes the fake and its grandchild ignore SIGTERM, so only
	// SIGKILL stops them.
	IgnoreTERM bool `json:"ignore_term,omitempty"`
	// Transcript appends a user and an assistant row (with the cwd) to
	// <CLAUDE_CONFIG_DIR>/projects/<encoded cwd>/<sid>.jsonl.
	Transcript bool `json:"transcript,omitempty"`
	// Acks appends this many delivered-steer acks to the session's inbox
	// ack file (OO_CLAUDE_INBOX_DIR) and writes a stopped heartbeat, as an
	// injected doorman that delivered lines would have.
	Acks int `json:"acks,omitempty"`
	// RunUnit (systemd-run) starts the unit's command detached, with only
	// the -E variables plus UnitEnv.
	RunUnit bool `json:"run_unit,omitempty"`
	// UnitEnv is added to the unit's environment (e.g. the switch that
	// makes a test binary behave as the program under test).
	UnitEnv []string `json:"unit_env,omitempty"`
	// Session makes the fake claude play a steerable session for its
	// whole run, as the real CLI does (see session.go): before it answers
	// it writes its registry row, listens on its door and starts the stdio
	// MCP servers its --mcp-config names (the doorman start and resume
	// inject), and it ends them all before it exits. A line sent to the
	// session meanwhile is carried by that doorman through the door and
	// acked on the door's enqueue row. It needs the session id in argv
	// (--resume or --session-id).
	Session bool `json:"session,omitempty"`
}

// Call is one recorded invocation of a fake.
type Call struct {
	Name       string            `json:"name"`
	Args       []string          `json:"args"` // without argv[0]
	Env        []string          `json:"env"`
	Dir        string            `json:"dir"`
	PID        int               `json:"pid"`
	PGID       int               `json:"pgid"`
	FDs        map[string]string `json:"fds,omitempty"` // descriptor variable → what the descriptor held
	Grandchild int               `json:"grandchild,omitempty"`
	UnitPID    int               `json:"unit_pid,omitempty"`
}

// Fakes is a directory holding the fakes. Make one with [Install]: a
// Fakes not made by it (the zero value) holds none (Script does
// nothing, Calls returns nil and WaitCalls an error).
type Fakes struct {
	Dir        string
	Claude     string // absolute path of the fake claude
	SystemdRun string // absolute path of the fake systemd-run
	tb         fakes.TB
}

// Install links the running test binary into a new temporary directory as
// claude and systemd-run. The test binary's TestMain must call [Main].
func Install(tb fakes.TB) *Fakes {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatalf("fakeclaude: %v", err)
	}
	dir := tb.TempDir()
	f := &Fakes{Dir: dir, Claude: filepath.Join(dir, NameClaude), SystemdRun: filepath.Join(dir, NameSystemdRun), tb: tb}
	for _, p := range []string{f.Claude, f.SystemdRun} {
		if err := os.Symlink(exe, p); err != nil {
			tb.Fatalf("fakeclaude: %v", err)
		}
	}
	return f
}

// Script sets what the fake claude does from now on.
func (f *Fakes) Script(s Script) { f.ScriptFor(NameClaude, s) }

// ScriptFor sets what the fake called name does from now on.
func (f *Fakes) ScriptFor(name string, s Script) {
	if !f.installed() {
		return
	}
	f.tb.Helper()
	b, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(f.Dir, name+".script.json"), b, 0o600); err != nil {
		f.tb.Fatalf("fakeclaude: %v", err)
	}
}

// installed reports whether f was made by Install.
func (f *Fakes) installed() bool { return f != nil && f.tb != nil }

// Calls returns the recorded invocations of the fake called name, oldest
// first ("" for all).
func (f *Fakes) Calls(name string) []Call {
	if !f.installed() {
		return nil
	}
	f.tb.Helper()
	b, err := os.ReadFile(filepath.Join(f.Dir, "calls.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		f.tb.Fatalf("fakeclaude: %v", err)
	}
	var out []Call
	for _, line := range bytes.Split(b, []byte("\n")) {
		var c Call
		if json.Unmarshal(line, &c) == nil && (name == "" || c.Name == name) {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls waits until the fake called name was invoked n times and
// returns its calls by then, with ctx.Err() when ctx ended first. The
// fakes are other processes: it looks at their record every 20 ms.
func (f *Fakes) WaitCalls(ctx context.Context, name string, n int) ([]Call, error) {
	if !f.installed() {
		return nil, errNotInstalled
	}
	f.tb.Helper()
	var c []Call
	err := fakewait.Until(ctx, nil, 20*time.Millisecond, nil, nil, func() bool {
		c = f.Calls(name)
		return len(c) >= n
	})
	return c, err
}

// errNotInstalled is WaitCalls' error for a Fakes not made by Install.
var errNotInstalled = errors.New("fakeclaude: no fakes installed (a Fakes not made by Install)")

// Main runs the fake the test binary was invoked as, and exits; it returns
// at once when the binary's base name is not one of the fakes.
func Main() {
	var code int
	switch filepath.Base(os.Args[0]) {
	case NameClaude:
		code = runClaude()
	case NameSystemdRun:
		code = runSystemdRun()
	case NameGrandchild:
		code = runGrandchild()
	default:
		return
	}
	os.Exit(code)
}

func loadScript(name string) Script {
	var s Script
	b, err := os.ReadFile(filepath.Join(filepath.Dir(os.Args[0]), name+".script.json"))
	if err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}

func record(c Call) {
	c.PID, c.PGID = os.Getpid(), syscall.Getpgrp()
	c.Dir, _ = os.Getwd()
	c.Env = os.Environ()
	slices.Sort(c.Env)
	b, _ := json.Marshal(c)
	f, err := os.OpenFile(filepath.Join(filepath.Dir(os.Args[0]), "calls.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeclaude:", err)
		return
	}
	f.Write(append(b, '\n'))
	f.Close()
}

// flagValue returns the value after flag in args.
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func runClaude() int {
	s := loadScript(NameClaude)
	args := os.Args[1:]
	if s.IgnoreTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	c := Call{Name: NameClaude, Args: args, FDs: map[string]string{}}
	for _, v := range []string{"CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR", "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil {
			fh := os.NewFile(uintptr(n), v)
			b, err := io.ReadAll(fh)
			if err != nil {
				c.FDs[v] = "error: " + err.Error()
			} else {
				c.FDs[v] = string(b)
			}
		}
	}
	if s.Grandchild {
		exe, _ := os.Executable()
		cmd := &exec.Cmd{Path: exe, Args: []string{NameGrandchild}}
		if s.IgnoreTERM {
			cmd.Env = append(os.Environ(), "FAKECLAUDE_IGNORE_TERM=1")
		}
		if err := cmd.Start(); err == nil {
			c.Grandchild = cmd.Process.Pid
		}
	}
	record(c)
	sid := flagValue(args, "--resume")
	if sid == "" {
		sid = flagValue(args, "--session-id")
	}
	if s.Transcript {
		writeTranscript(sid)
	}
	if s.Acks > 0 {
		writeAcks(sid, s.Acks)
	}
	if s.Session && sid != "" {
		sess, err := startSession(sid, flagValue(args, "--mcp-config"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeclaude: session:", err)
			return 1
		}
		defer sess.stop()
	}
	if s.DelayMS > 0 {
		time.Sleep(time.Duration(s.DelayMS) * time.Millisecond)
	}
	for end := time.Now().Add(time.Minute); s.HoldUntil != "" && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(s.HoldUntil); err == nil {
			break
		}
	}
	if s.Stderr != "" {
		fmt.Fprint(os.Stderr, s.Stderr)
	}
	if s.Stdout != "" {
		fmt.Print(s.Stdout)
	} else {
		b, _ := json.Marshal(ResultObject(s, sid))
		fmt.Println(string(b))
	}
	if flagValue(args, "--input-format") == "stream-json" && s.Stdout == "" {
		// As the real CLI: the process ends when its input does.
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
	return s.Exit
}

// ResultObject is the result object the fake claude prints for script s in
// session sid (s.SessionID wins when set): the keys and JSON types of the
// real `claude -p --output-format json` result that oo-claude reads. The
// e2e suite holds it to the real CLI's result (TestResultJSON).
func ResultObject(s Script, sid string) map[string]any {
	if s.SessionID != "" {
		sid = s.SessionID
	}
	subtype := s.Subtype
	if subtype == "" {
		subtype = "success"
	}
	turns := s.NumTurns
	if turns == 0 {
		turns = 1
	}
	var result any = s.Result
	if s.IsError {
		result = nil
	}
	terminal := s.TerminalReason
	if terminal == "" {
		terminal = "completed"
	}
	return map[string]any{
		"type": "result", "subtype": subtype, "is_error": s.IsError, "result": result,
		"session_id": sid, "num_turns": turns, "total_cost_usd": s.CostUSD, "duration_ms": 1234,
		"stop_reason": "end_turn", "terminal_reason": terminal,
	}
}

func writeTranscript(sid string) {
	cfg := os.Getenv("CLAUDE_CONFIG_DIR")
	if cfg == "" || sid == "" {
		return
	}
	cwd, _ := os.Getwd()
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	dir := filepath.Join(cfg, "projects", transcriptfile.EncodeProjectDir(cwd))
	os.MkdirAll(dir, 0o700)
	f, err := os.OpenFile(filepath.Join(dir, sid+".jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	ts := time.Now().UTC().Format(time.RFC3339Nano)
	for _, row := range []map[string]any{
		{"type": "user", "sessionId": sid, "cwd": cwd, "timestamp": ts, "entrypoint": "sdk-cli",
			"message": map[string]any{"role": "user", "content": "hello"}},
		{"type": "assistant", "sessionId": sid, "cwd": cwd, "timestamp": ts,
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "hi"}}, "stop_reason": "end_turn"}},
	} {
		b, _ := json.Marshal(row)
		f.Write(append(b, '\n'))
	}
}

func writeAcks(sid string, n int) {
	dir := os.Getenv("OO_CLAUDE_INBOX_DIR")
	if dir == "" || sid == "" {
		return
	}
	files := inboxv1.FilesFor(dir, sid)
	now := jsonrow.FormatTime(time.Now())
	for i := range n {
		inbox.AppendAck(files.Ack, inboxv1.Ack{TS: now, SHA256: fmt.Sprintf("%064x", i+1), SessionID: sid,
			PeerStatus: "busy", Class: inboxv1.AckDeliveredSteer, MsgID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)})
	}
	inbox.WriteHeartbeat(files.Heartbeat, inboxv1.Heartbeat{PID: os.Getpid(), SessionID: sid, Since: now, LastSeen: now,
		Delivered: n, State: inboxv1.StateStopped, Mode: "mcp", StoppedAt: now})
}

func runGrandchild() int {
	if os.Getenv("FAKECLAUDE_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	time.Sleep(10 * time.Minute)
	return 0
}

func runSystemdRun() int {
	s := loadScript(NameSystemdRun)
	args := os.Args[1:]
	c := Call{Name: NameSystemdRun, Args: args}
	// The unit's environment: only what -E names, from ours.
	var env []string
	var cmdline []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-E" || a == "--setenv":
			if i+1 < len(args) {
				i++
				name, val, hasVal := strings.Cut(args[i], "=")
				if !hasVal {
					v, ok := os.LookupEnv(name)
					if !ok {
						continue
					}
					val = v
				}
				env = append(env, name+"="+val)
			}
		case a == "--":
			cmdline = args[i+1:]
			i = len(args)
		}
	}
	if s.RunUnit && len(cmdline) > 0 {
		env = append(env, s.UnitEnv...)
		cmd := &exec.Cmd{Path: cmdline[0], Args: cmdline, Env: env,
			SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
		cmd.Dir, _ = os.Getwd()
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake systemd-run:", err)
			return 1
		}
		c.UnitPID = cmd.Process.Pid
		cmd.Process.Release()
	}
	record(c)
	if s.DelayMS > 0 { // a systemd-run that hangs (a stuck bus)
		time.Sleep(time.Duration(s.DelayMS) * time.Millisecond)
	}
	if s.Stderr != "" {
		fmt.Fprint(os.Stderr, s.Stderr)
	} else if s.Exit == 0 {
		fmt.Fprintf(os.Stderr, "Running as unit: %s.service\n", flagValue(args, "--unit"))
	}
	return s.Exit
}
