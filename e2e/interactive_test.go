package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// This file runs the real interactive CLI (the TUI) under tmux, offline,
// and is the harness other interactive tests call:
//
//	w := newWorld(t, fakemodel.Options{Replies: })
//	s := w.startInteractive(interactiveOpts{Args: []string{"--allowedTools", "Bash"}})
//	s.PID, s.SessionID, s.Target, s.Transcript   // who and where
//	s.typeLine("run the tool")                      // a user's prompt
//	s.waitTranscript(10*time.Second, "a peer row", func(row map[string]any) bool { ... })
//	s.pane()                                        // the screen, for a failure message
//
// Each session runs on a tmux server of its own (a private socket in the
// world's root, -S, with no configuration file), so nothing reaches or
// leaks from a tmux the machine already runs; the server is killed on
// cleanup and the claude process waited for.

// tmuxBinary returns tmux's path. Without tmux the interactive tests skip
// saying why, except under CI (CI=true), where a missing tmux fails: CI's
// scripts/test.sh installs it, so its absence is a broken machine, not a
// reason to pass.
func tmuxBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the interactive tests need tmux and CI=true forbids skipping them: %v (scripts/test.sh installs it with apt-get)", err)
	}
	t.Skipf("the interactive tests need tmux: %v (scripts/test.sh installs it with apt-get, or apt-get install tmux)", err)
	return ""
}

// interactiveConfirmS is the doorman's bound for the receiver's enqueue row
// in interactive sessions (OO_CLAUDE_DOOR_CONFIRM_S), and interactiveWait a
// send's --wait that covers it.
const (
	interactiveConfirmS = "10"
	interactiveWait     = "15"
)

// interactiveOpts configure startInteractive. The zero value is a session
// in the world's cwd with the doorman injected.
type interactiveOpts struct {
	// Args are more claude arguments, after --model (e.g. --allowedTools
	// Bash).
	Args []string
	// Env is added to the session's environment.
	Env []string
	// Cwd is the session's working directory; "" means the world's.
	Cwd string
	// NoDoorman starts the session without the claude-inbox doorman.
	NoDoorman bool
}

// interactive is one interactive claude session running in a tmux pane.
type interactive struct {
	w    *world
	tmux string
	sock string // the private tmux server's socket
	// Target is the tmux target of the session's pane.
	Target string
	// PID is the claude process (the pane's process).
	PID int
	// SessionID is the session id its registry row names.
	SessionID string
	// Row is its registry row as first seen.
	Row registryRow
	// Transcript is where its transcript is written (it may not exist
	// before the first prompt).
	Transcript string
}

// startInteractive starts claude's TUI in a detached 160×50 tmux pane with
// the world's environment, trusts the cwd and approves the API key in the
// config's .claude.json so no first-run dialog stops it, injects the
// doorman (unless opts.NoDoorman), and returns once the registry row is
// written and, with a doorman, its heartbeat says following. Everything is
// stopped at the end of the test.
func (w *world) startInteractive(opts interactiveOpts) *interactive {
	w.t.Helper()
	bin := tmuxBinary(w.t)
	cwd := opts.Cwd
	if cwd == "" {
		cwd = w.cwd
	}
	w.writeClaudeJSON(cwd)
	args := append([]string{w.claude, "--model", testModel}, opts.Args...)
	if !opts.NoDoorman {
		args = append(args, "--mcp-config", w.doormanConfig(), "--strict-mcp-config")
	}
	s := &interactive{w: w, tmux: bin, sock: filepath.Join(w.root, fmt.Sprintf("tmux-%d", time.Now().UnixNano())), Target: "cc:0.0"}
	// One invocation starts the server, keeps a pane whose process died
	// (so its last screen can still be read) and starts the session; more
	// than one word after new-session's options is run without a shell.
	tmuxArgs := []string{"start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
		"new-session", "-d", "-s", "cc", "-x", "160", "-y", "50", "-c", cwd}
	// The TUI on two loaded cores has been seen to stamp a door frame's
	// enqueue row 1.7 s after the write, so the doorman's bound for it
	// (2 s by default) is made generous; a line never queued still fails.
	env := append(w.env("OO_CLAUDE_DOOR_CONFIRM_S="+interactiveConfirmS), opts.Env...)
	for _, e := range env {
		tmuxArgs = append(tmuxArgs, "-e", e)
	}
	tmuxArgs = append(tmuxArgs, args...)
	if out, err := s.tmuxCmd(tmuxArgs...).CombinedOutput(); err != nil {
		w.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	w.t.Cleanup(s.stop)
	out, err := s.tmuxCmd("display-message", "-p", "-t", s.Target, "#{pane_pid}").Output()
	if err != nil {
		w.t.Fatalf("tmux display-message: %v", err)
	}
	if s.PID, err = strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
		w.t.Fatalf("pane pid %q: %v", out, err)
	}
	s.Row = s.waitRow(60 * time.Second)
	s.SessionID = s.Row.SessionID
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		w.t.Fatal(err)
	}
	s.Transcript = w.transcriptPath(real, s.SessionID)
	if !opts.NoDoorman {
		s.waitHeartbeat(30*time.Second, "a following doorman", following(s.SessionID))
	}
	return s
}

// writeClaudeJSON writes the global config that lets the TUI start without
// a dialog: onboarding done, a theme, the test API key approved and cwd
// trusted (the facts file, "Interactive sessions run offline too"). With
// CLAUDE_CONFIG_DIR set it is read from there; HOME gets the same.
func (w *world) writeClaudeJSON(cwd string) {
	w.t.Helper()
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		w.t.Fatal(err)
	}
	cfg := map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"customApiKeyResponses":  map[string]any{"approved": []string{"sk-ant-test"}, "rejected": []string{}},
		"projects":               map[string]any{real: map[string]any{"hasTrustDialogAccepted": true}},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, dir := range []string{w.config, w.home} {
		if err := os.WriteFile(filepath.Join(dir, ".claude.json"), b, 0o600); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (s *interactive) tmuxCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(s.tmux, append([]string{"-S", s.sock, "-f", "/dev/null"}, args...)...)
	cmd.Dir = s.w.cwd
	cmd.Env = s.w.env()
	return cmd
}

// pane returns what the pane shows now (its visible screen, no colours).
func (s *interactive) pane() string {
	out, err := s.tmuxCmd("capture-pane", "-p", "-t", s.Target).Output()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v)", err)
	}
	return strings.TrimRight(string(out), "\n ")
}

// alive reports whether the claude process still runs (a zombie does not).
func (s *interactive) alive() bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.PID))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// typeLine types text into the TUI's prompt and presses Enter, as a user
// does, and returns once the transcript holds the prompt (its user row, or
// a queue row if the session was busy).
//
// The TUI takes a burst of keys as a paste, and an Enter that arrives
// inside that burst (a loaded machine can deliver the text and the Enter
// in one read) is part of the paste, not a submit: the text then sits in
// the prompt box. So Enter goes only after the pane shows the text, and
// goes again while the transcript lacks the prompt. An Enter on an empty
// prompt box does nothing, so a second one cannot submit twice.
func (s *interactive) typeLine(text string) {
	s.w.t.Helper()
	if out, err := s.tmuxCmd("send-keys", "-t", s.Target, "-l", text).CombinedOutput(); err != nil {
		s.fatalf("tmux send-keys: %v\n%s", err, out)
	}
	shown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := eventually(shown, func() (bool, error) {
		if !s.alive() {
			return false, errors.New("claude exited")
		}
		return strings.Contains(s.pane(), text), nil
	}); err != nil {
		s.fatalf("the pane never showed the typed text %q: %v", text, err)
	}
	submitted := func(row map[string]any) bool {
		t := row["type"]
		return (t == "user" || t == "queue-operation") && strings.Contains(fmt.Sprint(row), text)
	}
	const presses = 6
	for i := 1; ; i++ {
		if out, err := s.tmuxCmd("send-keys", "-t", s.Target, "Enter").CombinedOutput(); err != nil {
			s.fatalf("tmux send-keys Enter: %v\n%s", err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := eventually(ctx, func() (bool, error) {
			if !s.alive() {
				return false, errors.New("claude exited")
			}
			for _, r := range s.rows() {
				if submitted(r) {
					return true, nil
				}
			}
			return false, nil
		})
		cancel()
		switch {
		case err == nil:
			if i > 1 {
				s.w.t.Logf("typeLine: the prompt was taken at Enter %d", i)
			}
			return
		case !errors.Is(err, context.DeadlineExceeded) || i == presses:
			s.fatalf("the transcript never held the typed prompt %q after %d Enters: %v", text, i, err)
		}
	}
}

// stop ends the session: the tmux server is killed (the pane's process
// gets SIGHUP), then claude is waited for, and killed with its process
// group if it lingers.
func (s *interactive) stop() {
	_ = s.tmuxCmd("kill-server").Run()
	deadline := time.Now().Add(10 * time.Second)
	for s.alive() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if s.alive() {
		_ = syscall.Kill(-s.PID, syscall.SIGKILL)
		_ = syscall.Kill(s.PID, syscall.SIGKILL)
	}
}

// fatalf fails the test with the pane's screen attached.
func (s *interactive) fatalf(format string, args ...any) {
	s.w.t.Helper()
	s.w.t.Fatalf("%s\n%s", fmt.Sprintf(format, args...), s.diag())
}

func (s *interactive) diag() string {
	state := "running"
	if !s.alive() {
		state = "exited"
	}
	return fmt.Sprintf("interactive claude pid %d (%s); fake model saw %d messages requests\npane:\n%s",
		s.PID, state, s.w.model.Len(), s.pane())
}

// waitRow waits until the session's registry row exists and parses.
func (s *interactive) waitRow(timeout time.Duration) registryRow {
	s.w.t.Helper()
	path := s.w.rowPath(s.PID)
	row, err := waitRegistryRow(path, timeout, func() bool { return !s.alive() })
	if err != nil {
		s.fatalf("registry row %s: %v", path, err)
	}
	return row
}

// readRow reads the session's registry row now.
func (s *interactive) readRow() (registryRow, bool) {
	var row registryRow
	b, err := os.ReadFile(s.w.rowPath(s.PID))
	if err != nil || json.Unmarshal(b, &row) != nil {
		return row, false
	}
	return row, true
}

// waitStatus waits until the registry row's status is status.
func (s *interactive) waitStatus(timeout time.Duration, status string) {
	s.w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := eventually(ctx, func() (bool, error) {
		row, ok := s.readRow()
		return ok && row.Status == status, nil
	}); err != nil {
		row, _ := s.readRow()
		s.fatalf("the registry row's status never became %q (it is %q): %v", status, row.Status, err)
	}
}

// waitHeartbeat waits until the doorman's heartbeat satisfies cond.
func (s *interactive) waitHeartbeat(timeout time.Duration, what string, cond func(heartbeat) bool) heartbeat {
	s.w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var h heartbeat
	err := eventually(ctx, func() (bool, error) {
		var ok bool
		h, ok = s.w.readHeartbeat(s.SessionID)
		return ok && cond(h), nil
	})
	if err != nil {
		s.fatalf("the doorman's heartbeat never showed %s: %v\nheartbeat: %s", what, err, s.w.heartbeatText(s.SessionID))
	}
	return h
}

// rows returns the transcript's rows so far (none yet: nil).
func (s *interactive) rows() []map[string]any {
	s.w.t.Helper()
	if _, err := os.Stat(s.Transcript); err != nil {
		return nil
	}
	return decodeLines[map[string]any](s.w.t, s.Transcript)
}

// waitTranscript waits until a transcript row satisfies match and returns
// it with its index.
func (s *interactive) waitTranscript(timeout time.Duration, what string, match func(map[string]any) bool) (map[string]any, int) {
	s.w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var (
		hit map[string]any
		at  int
	)
	err := eventually(ctx, func() (bool, error) {
		if !s.alive() {
			return false, errors.New("claude exited")
		}
		for i, r := range s.rows() {
			if match(r) {
				hit, at = r, i
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		s.fatalf("the transcript never showed %s: %v", what, err)
	}
	return hit, at
}

// waitModel waits for a messages request matching match, giving up early
// when claude has exited.
func (s *interactive) waitModel(timeout time.Duration, what string, match func(*fakemodel.Request) bool) *fakemodel.Request {
	s.w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var hit *fakemodel.Request
	err := eventually(ctx, func() (bool, error) {
		reqs := s.w.model.Requests()
		for i := range reqs {
			if match(&reqs[i]) {
				hit = &reqs[i]
				return true, nil
			}
		}
		if !s.alive() {
			return false, errors.New("claude exited")
		}
		return false, nil
	})
	if err != nil {
		s.fatalf("waiting for the model to be asked %s: %v", what, err)
	}
	return hit
}

// isEnqueue reports whether row is the receiver's queue-operation enqueue
// row of content.
func isEnqueue(row map[string]any, content string) bool {
	return row["type"] == "queue-operation" && row["operation"] == "enqueue" && row["content"] == content
}

// checkConfirmed holds a delivered line's ack (as the send receipt embeds
// it) to the receiver's own record: confirmed by the transcript, queued_at
// the timestamp of the line's enqueue row.
func checkConfirmed(t *testing.T, rc map[string]any, enqueue map[string]any) {
	t.Helper()
	a, _ := rc["ack"].(map[string]any)
	if a["confirm"] != "transcript" {
		t.Errorf("ack confirm %v; want \"transcript\"\nack: %v", a["confirm"], a)
	}
	if a["queued_at"] == nil || a["queued_at"] != enqueue["timestamp"] {
		t.Errorf("ack queued_at %v; want the enqueue row's timestamp %v", a["queued_at"], enqueue["timestamp"])
	}
}

// hasOrigin reports whether row holds an origin with msgID anywhere in it.
func hasOrigin(msgID string) func(map[string]any) bool {
	return func(row map[string]any) bool { return findOrigin([]map[string]any{row}, msgID) != nil }
}

// TestInteractiveIdle: the real TUI, idle at its prompt, with the doorman
// injected. A line sent with `oo-claude send` is delivered-start, its ack
// confirmed by the transcript (queued_at is the enqueue row's timestamp);
// the receiver enqueues exactly that line, then starts a turn with it (the
// user row whose origin carries the receipt's msg_id, a peer line), the
// model is asked with it and its answer lands in the transcript.
func TestInteractiveIdle(t *testing.T) {
	t.Parallel()
	const answer = "idle answer 5b1e"
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Text(answer)}})
	s := w.startInteractive(interactiveOpts{})
	if s.Row.Kind != "interactive" {
		s.fatalf("registry row kind %q; want interactive", s.Row.Kind)
	}
	s.waitStatus(10*time.Second, "idle")

	line := "idle line " + uuid.NewString()
	rc, r := w.send(s.SessionID, line, "--wait", interactiveWait)
	if r.code != 0 || str(rc, "class") != "delivered-start" {
		s.fatalf("send: want delivered-start, exit 0\n%s\nheartbeat: %s", r, w.heartbeatText(s.SessionID))
	}
	msgID, tagged := str(rc, "msg_id"), str(rc, "line")
	enqRow, enq := s.waitTranscript(10*time.Second, "the enqueue row of the line", func(row map[string]any) bool { return isEnqueue(row, tagged) })
	checkConfirmed(t, rc, enqRow)
	started, at := s.waitTranscript(10*time.Second, "the turn the line started", hasOrigin(msgID))
	if started["type"] != "user" || at < enq {
		t.Errorf("the line's origin is on a %v row at %d (enqueue at %d); want the user row that starts the turn, after the enqueue", started["type"], at, enq)
	}
	if o := findOrigin([]map[string]any{started}, msgID); o["kind"] != "peer" {
		t.Errorf("origin %v; want kind peer", o)
	}
	s.waitModel(20*time.Second, "with the line", func(q *fakemodel.Request) bool { return !fakemodel.IsSideRequest(q) && q.MessagesContain(line) })
	s.waitTranscript(20*time.Second, "the model's answer", func(row map[string]any) bool {
		return row["type"] == "assistant" && strings.Contains(fmt.Sprint(row["message"]), answer)
	})
	enqueued := 0
	for _, row := range s.rows() {
		if isEnqueue(row, tagged) {
			enqueued++
		}
	}
	if enqueued != 1 {
		t.Errorf("the line was enqueued %d times; want once", enqueued)
	}
}

// TestInteractiveBusy: the real TUI in a turn whose tool runs (a user's
// prompt typed into the pane, the model scripted to run Bash "sleep 3").
// A line sent meanwhile is delivered-steer, its ack confirmed by the
// transcript (queued_at is the enqueue row's timestamp); the receiver
// enqueues it and
// absorbs it into the running turn: the queued_command row with the
// receipt's msg_id, and the model's next request carries the line with
// the tool's result.
func TestInteractiveBusy(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 3"), fakemodel.Text("busy answer")}})
	s := w.startInteractive(interactiveOpts{Args: []string{"--allowedTools", "Bash"}})
	prompt := "run the tool " + uuid.NewString()[:8]
	s.typeLine(prompt)
	first := s.waitModel(20*time.Second, "with the typed prompt", func(q *fakemodel.Request) bool { return !fakemodel.IsSideRequest(q) && q.MessagesContain(prompt) })
	s.waitTranscript(10*time.Second, "the Bash tool call", func(row map[string]any) bool {
		return row["type"] == "assistant" && strings.Contains(fmt.Sprint(row["message"]), "sleep 3")
	})
	s.waitStatus(5*time.Second, "busy")

	line := "busy line " + uuid.NewString()
	rc, r := w.send(s.SessionID, line, "--wait", interactiveWait)
	if r.code != 0 || str(rc, "class") != "delivered-steer" {
		s.fatalf("send: want delivered-steer, exit 0\n%s\nheartbeat: %s", r, w.heartbeatText(s.SessionID))
	}
	msgID, tagged := str(rc, "msg_id"), str(rc, "line")
	enqRow, enq := s.waitTranscript(10*time.Second, "the enqueue row of the line", func(row map[string]any) bool { return isEnqueue(row, tagged) })
	checkConfirmed(t, rc, enqRow)
	absorbed, at := s.waitTranscript(20*time.Second, "the line absorbed", hasOrigin(msgID))
	if at < enq {
		t.Errorf("the line's origin row (%d) comes before its enqueue row (%d)", at, enq)
	}
	if a, _ := absorbed["attachment"].(map[string]any); absorbed["type"] != "attachment" || a["type"] != "queued_command" {
		t.Errorf("the line's origin is on %v; want the queued_command attachment of a line absorbed mid-turn", absorbed)
	}
	carried := s.waitModel(20*time.Second, "with the steered line", func(q *fakemodel.Request) bool {
		return q.Seq > first.Seq && !fakemodel.IsSideRequest(q) && q.MessagesContain(line)
	})
	if len(carried.ToolResults()) == 0 {
		t.Errorf("the line came in %s without the tool's result; want it absorbed into the running turn", carried)
	}
}
