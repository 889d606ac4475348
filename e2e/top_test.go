package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestTopSteersARealSession: `oo-claude top` under tmux at 120×40 on a
// station of two real interactive sessions, one busy in a tool, one idle.
// Both appear with their status; the idle one is selected, `s`, a line and
// enter send it: the receiver's transcript has the line's enqueue row and
// the view shows the verdict (delivered-start, confirmed) under the
// session, then, with `a`, the model's answer; `q` gives the shell its
// prompt back.
func TestTopSteersARealSession(t *testing.T) {
	t.Parallel()
	answer := "TOP-ANSWER-" + uuid.NewString()[:8]
	line := "top line " + uuid.NewString()
	// The busy session's turn runs a short tool again and again (it stays
	// busy to the end of the test); the idle one's line gets the answer.
	w := newWorld(t, fakemodel.Options{Handler: func(q *fakemodel.Request) fakemodel.Reply {
		switch {
		case q.MessagesContain(line):
			return fakemodel.Text(answer)
		case q.MessagesContain("run the tool"):
			return fakemodel.Bash("sleep 3")
		}
		return fakemodel.Text("ok")
	}})
	busy := w.startInteractive(interactiveOpts{Args: []string{"--allowedTools", "Bash"}, Env: []string{slowConfirm}})
	busy.typeLine("run the tool " + uuid.NewString()[:8])
	busy.waitTranscript(30*time.Second, "the Bash tool call", func(row map[string]any) bool {
		return row["type"] == "assistant" && strings.Contains(fmt.Sprint(row["message"]), "sleep 3")
	})
	busy.waitStatus(10*time.Second, "busy")
	idle := w.startInteractive(interactiveOpts{Env: []string{slowConfirm}})
	idle.waitStatus(10*time.Second, "idle")

	p := w.topPane(120, 40)
	start := time.Now()
	p.keys("oo-claude top --from e2e", "Enter")
	sessionLine := func(s string, sid string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, sid[:8]) && !strings.Contains(l, "session-started") {
				return l
			}
		}
		return ""
	}
	p.waitFor("both sessions with their status", func(s string) bool {
		return strings.Contains(sessionLine(s, busy.SessionID), "busy") && strings.Contains(sessionLine(s, idle.SessionID), "idle")
	})
	took := time.Since(start)
	t.Logf("oo-claude top: both sessions on the screen %v after the command was typed (the shell's start of the binary included)", took.Round(time.Millisecond))
	// The issue asks for 1 s; the figure is logged above, and the bound
	// only catches a view that waits for a slow timer: generous, for a
	// loaded 2-core machine running many sessions under -race.
	if took > 15*time.Second {
		t.Errorf("the sessions took %v to appear; the issue asks for 1 s (the bound here is generous for a loaded machine)", took)
	}
	scr := p.screen()
	for _, s := range []*interactive{busy, idle} {
		if l := sessionLine(scr, s.SessionID); !strings.Contains(l, s.rowName()) {
			t.Errorf("the line of %s lacks its name %q: %q", s.SessionID, s.rowName(), l)
		}
	}

	// Select the idle session, then send it a line.
	if scr := p.screen(); !strings.Contains(sessionLine(scr, idle.SessionID), "▶") {
		move := "j"
		if strings.Index(scr, idle.SessionID[:8]) < strings.Index(scr, busy.SessionID[:8]) {
			move = "k"
		}
		p.keys(move)
		p.waitFor("the idle session selected", func(s string) bool { return strings.Contains(sessionLine(s, idle.SessionID), "▶") })
	}
	p.keys("s")
	p.waitFor("the line editor", func(s string) bool { return strings.Contains(s, "send to ") })
	p.keys("-l", line)
	p.keys("Enter")
	idle.waitTranscript(20*time.Second, "the enqueue row of the line", func(row map[string]any) bool {
		return row["type"] == "queue-operation" && row["operation"] == "enqueue" && strings.Contains(fmt.Sprint(row["content"]), line)
	})
	p.waitFor("the verdict under the session", func(s string) bool {
		return strings.Contains(s, "delivered-start · confirmed")
	})
	p.keys("a")
	p.waitFor("the model's answer in place", func(s string) bool { return strings.Contains(s, `reply "TOP-ANSWER-`) })
	// The cost column: the busy session's requests before the view opened
	// (read back from its transcript's end) and the idle one's since, in
	// tokens (neither process has exited: no cost-state row yet).
	scr = p.waitFor("the sessions' tokens", func(s string) bool {
		return strings.Contains(sessionLine(s, busy.SessionID), " tok") && strings.Contains(sessionLine(s, idle.SessionID), " tok")
	})
	if strings.Contains(scr, "$") {
		t.Errorf("a dollar figure before any process of the sessions exited:\n%s", scr)
	}
	t.Logf("the screen:\n%s", scr)
	p.keys("q")
	p.waitFor("the shell's prompt again, without the view", func(s string) bool {
		return strings.Count(s, "prompt$") >= 2 && !strings.Contains(s, "oo-claude top ·")
	})
}

// rowName is the name the session's registry row gives it now.
func (s *interactive) rowName() string {
	if row, ok := s.readRow(); ok {
		return row.Name
	}
	return "(no row)"
}

// topPane is a shell (prompt "prompt$ ") in a w×h pane of a private tmux
// server, with the world's environment and oo-claude on its PATH.
type topPane struct {
	t    *testing.T
	tmux string
	sock string
}

func (w *world) topPane(width, height int) *topPane {
	w.t.Helper()
	bin := tmuxBinary(w.t)
	dir := filepath.Join(w.root, "top")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Symlink(ooClaude(w.t), filepath.Join(dir, "oo-claude")); err != nil {
		w.t.Fatal(err)
	}
	p := &topPane{t: w.t, tmux: bin, sock: filepath.Join(w.root, fmt.Sprintf("tmux-top-%d", time.Now().UnixNano()))}
	env := append(w.env(w.knobEnv()...), "PATH="+dir+":/usr/bin:/bin", "PS1=prompt$ ", "TERM=xterm-256color",
		"OO_CLAUDE_WAIT_S="+interactiveWait) // the TUI's enqueue row can be slow on a loaded machine
	args := append([]string{"new-session", "-d", "-s", "top", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "-c", w.cwd, "env", "-i"}, env...)
	if out, err := p.cmd(append(args, "/bin/sh")...).CombinedOutput(); err != nil {
		w.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	w.t.Cleanup(func() { p.cmd("kill-server").Run() })
	p.waitFor("the shell's prompt", func(s string) bool { return strings.Contains(s, "prompt$") })
	return p
}

func (p *topPane) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(p.tmux, append([]string{"-S", p.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TERM=xterm-256color"}
	return cmd
}

func (p *topPane) screen() string {
	out, err := p.cmd("capture-pane", "-p", "-t", "top").Output()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v)", err)
	}
	return string(out)
}

func (p *topPane) keys(keys ...string) {
	p.t.Helper()
	if out, err := p.cmd(append([]string{"send-keys", "-t", "top"}, keys...)...).CombinedOutput(); err != nil {
		p.t.Fatalf("tmux send-keys %q: %v\n%s", keys, err, out)
	}
}

// waitFor waits up to 60 s (a loaded machine) for the screen to satisfy ok,
// looking every 20 ms (tmux tells of no change).
func (p *topPane) waitFor(what string, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := p.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the pane never showed %s:\n%s", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
