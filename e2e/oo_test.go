package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// This file runs oo-claude itself against the world: the knobs that point
// its inbox, state and observatory dirs into the world, the injected
// doorman's MCP config, the verbs run as separate processes, and the
// doorman's files read back.

// inboxDir, stateDir and obsDir are the world's oo-claude dirs.
func (w *world) inboxDir() string { return filepath.Join(w.root, "i") }
func (w *world) stateDir() string { return filepath.Join(w.root, "s") }
func (w *world) obsDir() string   { return filepath.Join(w.root, "o") }

// knobs are the oo-claude environment knobs of the world: every dir inside
// it, the real claude as OO_CLAUDE_BIN, no throttle (tests send several
// lines to one session quickly) and a 10 s confirmation bound.
func (w *world) knobs() map[string]string {
	return map[string]string{
		"OO_CLAUDE_INBOX_DIR":       w.inboxDir(),
		"OO_CLAUDE_STATE_DIR":       w.stateDir(),
		"OO_CLAUDE_OBSERVATORY_DIR": w.obsDir(),
		"OO_CLAUDE_BIN":             w.claude,
		"OO_CLAUDE_MIN_INTERVAL_S":  "0",
		// A generous bound for the receiver's enqueue row: the suite runs
		// many real sessions at once on small machines, and the bound
		// only caps the wait (the ack comes as soon as the row does).
		"OO_CLAUDE_DOOR_CONFIRM_S": "10",
	}
}

func (w *world) knobEnv() []string {
	var env []string
	for k, v := range w.knobs() {
		env = append(env, k+"="+v)
	}
	return env
}

// doormanConfig writes the MCP config that injects our doorman the way
// `oo-claude start` does (one stdio server, claude-inbox, running
// `oo-claude doorman --mcp`), with the world's knobs in its env, and
// returns its path for --mcp-config with --strict-mcp-config.
func (w *world) doormanConfig() string {
	w.t.Helper()
	env := w.knobs()
	for k, v := range w.doormanKnobs {
		env[k] = v
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"claude-inbox": map[string]any{
			"type": "stdio", "command": ooClaude(w.t), "args": []string{"doorman", "--mcp"}, "env": env,
		},
	}}
	b, err := json.Marshal(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	p := filepath.Join(w.root, "doorman.mcp.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// withDoorman returns args plus the flags that inject the doorman.
func (w *world) withDoorman(args ...string) []string {
	return append(args, "--mcp-config", w.doormanConfig(), "--strict-mcp-config")
}

// ooRun is one finished oo-claude command.
type ooRun struct {
	args           []string
	stdout, stderr string
	code           int
	start          time.Time // just before the exec
	took           time.Duration
}

func (r ooRun) String() string {
	return fmt.Sprintf("oo-claude %s: exit %d after %v\nstdout: %s\nstderr: %s",
		strings.Join(r.args, " "), r.code, r.took.Round(time.Millisecond), tail(r.stdout, 2000), tail(r.stderr, 2000))
}

// oo runs the oo-claude binary as a separate process with the world's
// environment and knobs (plus env), in the world's cwd, and waits up to two
// minutes for it.
func (w *world) oo(args []string, env ...string) ooRun {
	w.t.Helper()
	r := <-w.ooAsync(args, env...)
	if r.code < 0 {
		w.t.Fatalf("%s", r)
	}
	return r
}

// ooAsync is oo in the background: the channel yields the finished run
// (code -1 when it could not be run; stderr says why).
func (w *world) ooAsync(args []string, env ...string) <-chan ooRun {
	return w.ooAsyncVia(nil, args, env...)
}

// ooAsyncVia is ooAsync with oo-claude run by a wrapper: the command is
// wrapper, then the oo-claude binary, then args (timeout 60 oo-claude …,
// bash -c '"$0" "$@"' oo-claude …).
func (w *world) ooAsyncVia(wrapper, args []string, env ...string) <-chan ooRun {
	bin := ooClaude(w.t)
	done := make(chan ooRun, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	argv := append(append(append([]string{}, wrapper...), bin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = w.cwd
	cmd.Env = append(w.env(w.knobEnv()...), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	finished := make(chan struct{})
	// A test that stops early still ends the command before the leak check.
	w.t.Cleanup(func() {
		cancel()
		<-finished
	})
	go func() {
		defer close(finished)
		defer cancel()
		err := cmd.Run()
		r := ooRun{args: args, stdout: stdout.String(), stderr: stderr.String(), start: start, took: time.Since(start)}
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			r.code = ee.ExitCode()
		default:
			r.code = -1
			r.stderr += "\nrun: " + err.Error()
		}
		done <- r
	}()
	return done
}

// ooJSON runs oo-claude with --json appended and parses its stdout: one
// JSON row, or for send --seen/--reply with a delivered class the ack row
// and then the verdict, of which it returns the verdict.
func (w *world) ooJSON(args []string, env ...string) (map[string]any, ooRun) {
	w.t.Helper()
	r := w.oo(append(args, "--json"), env...)
	m, err := verdictRow(r.stdout)
	if err != nil {
		w.t.Fatalf("%v\n%s", err, r)
	}
	return m, r
}

// verdictRow parses --json output: every line one JSON object; a first
// row before the last is the ack row of a send --seen/--reply, which must
// name the last row's msg_id and class with seen still null.
func verdictRow(stdout string) (map[string]any, error) {
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) > 2 {
		return nil, fmt.Errorf("stdout has %d lines, want one row, or the ack row and the verdict", len(lines))
	}
	rows := make([]map[string]any, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &rows[i]); err != nil {
			return nil, fmt.Errorf("stdout line %d is not one JSON object: %v", i+1, err)
		}
	}
	last := rows[len(rows)-1]
	if len(rows) == 2 {
		ack := rows[0]
		if ack["kind"] != "send" || ack["msg_id"] != last["msg_id"] || ack["class"] != last["class"] || ack["seen"] != nil {
			return nil, fmt.Errorf("the first of two rows is no ack row of the verdict's line: class %v msg_id %v seen %v", ack["class"], ack["msg_id"], ack["seen"])
		}
	}
	return last, nil
}

// send runs `oo-claude send <target> <line> --from e2e --json` and returns
// the receipt row.
func (w *world) send(target, line string, more ...string) (map[string]any, ooRun) {
	w.t.Helper()
	return w.ooJSON(append([]string{"send", target, line, "--from", "e2e"}, more...))
}

// inbox is where a session's inbox file lives.
func (w *world) inbox(sid string) string { return filepath.Join(w.inboxDir(), sid+".inbox") }

// heartbeat is the doorman's heartbeat file as contract v1 and oo-claude's
// extensions name its fields.
type heartbeat struct {
	PID       int    `json:"pid"`
	SessionID string `json:"session_id"`
	Since     string `json:"since"`
	LastSeen  string `json:"last_seen"`
	Delivered int    `json:"delivered"`
	Offset    int64  `json:"offset"`
	State     string `json:"state"`
	OwnerPID  int    `json:"owner_pid"`
	PeerPID   int    `json:"peer_pid"`
	Socket    string `json:"socket"`
	Mode      string `json:"mode"`
	StoppedAt string `json:"stopped_at"`
	LastError string `json:"last_error"`
}

// fresh reports whether the heartbeat was seen within 15 s (the contract).
func (h heartbeat) fresh() bool {
	t, err := time.Parse(time.RFC3339Nano, h.LastSeen)
	return err == nil && time.Since(t) < 15*time.Second
}

// readHeartbeat reads a session's heartbeat; ok is false while there is
// none (or it is caught mid-replace, which the atomic write rules out).
func (w *world) readHeartbeat(sid string) (heartbeat, bool) {
	var h heartbeat
	b, err := os.ReadFile(w.inbox(sid) + ".doorman.json")
	if err != nil || json.Unmarshal(b, &h) != nil {
		return h, false
	}
	return h, true
}

// waitHeartbeat waits until the session's heartbeat satisfies cond.
func (s *session) waitHeartbeat(sid string, timeout time.Duration, what string, cond func(heartbeat) bool) heartbeat {
	s.w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var h heartbeat
	err := eventually(ctx, func() (bool, error) {
		var ok bool
		h, ok = s.w.readHeartbeat(sid)
		return ok && cond(h), nil
	})
	if err != nil {
		s.fatalf("the doorman's heartbeat never showed %s: %v\nheartbeat: %s", what, err, s.w.heartbeatText(sid))
	}
	return h
}

func (w *world) heartbeatText(sid string) string {
	b, err := os.ReadFile(w.inbox(sid) + ".doorman.json")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// following is the heartbeat of a doorman that carries lines for sid.
func following(sid string) func(heartbeat) bool {
	return func(h heartbeat) bool { return h.State == "following" && h.SessionID == sid && h.fresh() }
}

// ack is one line of <inbox>.ack.
type ack struct {
	SHA256     string  `json:"sha256"`
	SessionID  string  `json:"session_id"`
	PeerStatus string  `json:"peer_status"`
	Class      string  `json:"class"`
	MsgID      string  `json:"msg_id"`
	LineOffset *int64  `json:"line_offset"`
	DoormanPID int     `json:"doorman_pid"`
	TS         string  `json:"ts"`
	From       string  `json:"from"`
	Confirm    string  `json:"confirm"`
	QueuedAt   *string `json:"queued_at"`
}

// acks reads a session's ack file (none yet: nil).
func (w *world) acks(sid string) []ack {
	w.t.Helper()
	return decodeLines[ack](w.t, w.inbox(sid)+".ack")
}

// dirEntries lists what a dir holds (names), nil when it does not exist.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// str reads a string field of a decoded JSON object.
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func itoa(n int) string { return strconv.Itoa(n) }
