package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
)

// TestSSHTopTTY: a person runs `oo-claude top` on a station over ssh with a
// terminal (ssh -t, as from a laptop), in a tmux pane, through the real
// sshd of newSSHRig: the view comes up on the remote pty with the
// station's session, q quits it, ssh exits 0, the pane shows the shell
// again (the view's alternate screen gone), and no top process is left on
// the remote side.
func TestSSHTopTTY(t *testing.T) {
	oo := ooClaude(t)
	tmux := tmuxBinary(t)
	r := newSSHRig(t, oo)
	r.st["a"].AddSession(fakestation.Session{Name: "over-ssh-one", Status: "idle"})

	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tm := func(args ...string) *exec.Cmd {
		cmd := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = append(append([]string{}, r.env...), "TERM=xterm-256color", "LANG=C.UTF-8")
		return cmd
	}
	if out, err := tm("new-session", "-d", "-s", "top", "-x", "100", "-y", "30", "sh").CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { tm("kill-server").Run() })
	screen := func() string {
		out, err := tm("capture-pane", "-p", "-t", "top").Output()
		if err != nil {
			return fmt.Sprintf("(capture-pane: %v)", err)
		}
		return string(out)
	}
	// waitFor polls the pane (tmux sends no event for a redraw) until ok
	// holds; the bound is generous for a loaded machine.
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			s := screen()
			if ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("the pane never showed %s:\n%s", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	cmd := fmt.Sprintf("ssh -F %s -t a %s top; echo top-exit-$((40+2))-$?", r.config, oo)
	if out, err := tm("send-keys", "-t", "top", cmd, "Enter").CombinedOutput(); err != nil {
		t.Fatalf("send-keys: %v\n%s", err, out)
	}
	start := time.Now()
	view := waitFor("the view with the station's session", func(s string) bool {
		return strings.Contains(s, "oo-claude top") && strings.Contains(s, "over-ssh-one")
	})
	t.Logf("the view came up over ssh in %v:\n%s", time.Since(start).Round(time.Millisecond), view)
	if !strings.Contains(view, "idle") {
		t.Errorf("the session's status is not in the view:\n%s", view)
	}
	if out, err := tm("send-keys", "-t", "top", "q").CombinedOutput(); err != nil {
		t.Fatalf("send-keys q: %v\n%s", err, out)
	}
	after := waitFor("the shell after top and ssh exited", func(s string) bool { return strings.Contains(s, "top-exit-42-") })
	if !strings.Contains(after, "top-exit-42-0") {
		t.Errorf("ssh (top) did not exit 0:\n%s", after)
	}
	if strings.Contains(after, "over-ssh-one") {
		t.Errorf("the view stayed on the screen after q:\n%s", after)
	}
	// The remote top ends with the session (sshd is on this machine, so
	// its processes are in this process table).
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := topProcesses(oo)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("oo-claude top still runs after q: pids %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// topProcesses returns the pids whose command line is oo's top verb.
func topProcesses(oo string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
		if len(argv) >= 2 && string(argv[0]) == oo && string(argv[1]) == "top" {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
