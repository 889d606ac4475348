package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/programs"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/station"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/top/*.golden from the screens captured")

// topClock is the fixed clock of the golden screens (OO_CLAUDE_TOP_NOW).
var topClock = time.Date(2026, 12, 1, 20, 30, 0, 0, time.UTC)

// tmuxPane is a shell in a pane of a private tmux server, for running
// oo-claude top as a person would.
type tmuxPane struct {
	t    *testing.T
	bin  string
	sock string
}

// newPane starts /bin/sh in a detached w×h pane whose environment is env
// (with the test binary on PATH as oo-claude) and whose prompt is "prompt$ ".
func newPane(t *testing.T, w, h int, env []string) *tmuxPane {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("top's screen tests need tmux and CI=true forbids skipping them: %v", err)
		}
		t.Skipf("top's screen tests need tmux: %v", err)
	}
	dir, err := os.MkdirTemp("", "ootop") // short: a socket path is at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Symlink(binary(t), filepath.Join(dir, "oo-claude")); err != nil {
		t.Fatal(err)
	}
	p := &tmuxPane{t: t, bin: bin, sock: filepath.Join(dir, "s")}
	args := []string{"new-session", "-d", "-s", "top", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h)}
	full := append([]string{"OO_CLAUDE_TEST_AS_BINARY=1", "PATH=" + dir + ":/usr/bin:/bin", "PS1=prompt$ ", "HOME=" + dir, childGORACE()}, env...)
	// env -i: the pane's shell sees exactly full, not the tmux server's
	// environment.
	args = append(append(append(args, "env", "-i"), full...), "/bin/sh")
	if out, err := p.cmd(args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { p.cmd("kill-server").Run() })
	p.waitFor("the shell's prompt", func(s string) bool { return strings.Contains(s, "prompt$") })
	return p
}

func (p *tmuxPane) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(p.bin, append([]string{"-S", p.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TERM=xterm-256color"}
	return cmd
}

// screen is what the pane shows now, without colours.
func (p *tmuxPane) screen() string {
	out, err := p.cmd("capture-pane", "-p", "-t", "top").Output()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v)", err)
	}
	return string(out)
}

func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	if out, err := p.cmd(append([]string{"send-keys", "-t", "top"}, keys...)...).CombinedOutput(); err != nil {
		p.t.Fatalf("tmux send-keys %q: %v\n%s", keys, err, out)
	}
}

// waitFor waits until the screen satisfies ok (generously: the machine is
// loaded) and returns it. tmux tells of no change, so the screen is
// looked at every 20 ms.
func (p *tmuxPane) waitFor(what string, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
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

// topStation is the station of the golden screens: a parent and its child
// (the lineage ledger says so), a third session waiting, with fixed ids,
// names and start times. The parent's transcript holds the cost-state row
// of an earlier process and a request since, the child's a request of its
// first process; the third has none.
func topStation(t *testing.T) *fakestation.Station {
	fs := fakestation.New(t)
	add := func(id, name, status string, age time.Duration) station.Row {
		return fs.AddSession(fakestation.Session{SessionID: id, Name: name, Status: status, StartedAt: topClock.Add(-age)})
	}
	lead := add("1a2b3c4d-0000-4000-8000-000000000001", "lead", station.StatusBusy, 2*time.Hour+5*time.Minute)
	helper := add("5e6f7a8b-0000-4000-8000-000000000002", "helper", station.StatusIdle, 12*time.Minute)
	add("9c0d1e2f-0000-4000-8000-000000000003", "reviewer", station.StatusWaiting, 3*24*time.Hour)
	led := &lineage.Ledger{Path: fs.Paths.LineageFile(), Now: func() time.Time { return topClock }}
	if _, err := led.Register(context.Background(), lineage.Link{Child: helper.SessionID, Parent: lead.SessionID, Title: "helper"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fs.InboxPath(lead.SessionID), []byte("[ops 📡] check the build before the release\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	request := func(tokens int) string {
		return fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"id":"msg_%d","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":%d,"output_tokens":4}}}`+"\n", tokens, tokens-4)
	}
	for _, tr := range []struct {
		row  station.Row
		rows string
	}{
		{lead, `{"type":"cost-state","totalCostUSD":0.0026253,"hasUnknownModelCost":false}` + "\n" + request(1234)},
		{helper, request(12345)},
	} {
		dir := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(tr.row.CWD))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, tr.row.SessionID+transcriptfile.Ext), []byte(tr.rows), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// headerRE is the header's host name, which differs from machine to machine.
var headerRE = regexp.MustCompile(`^(oo-claude top (?:·|\|) )(\S+)( (?:·|\|) .*?) +(\d\d:\d\d:\d\dZ)$`)

// normalized is the screen with the host name replaced and trailing
// spaces cut.
func normalized(s string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " ")
	}
	if len(ls) > 0 {
		ls[0] = headerRE.ReplaceAllString(ls[0], "${1}HOST${3} ${4}")
	}
	return strings.Join(ls, "\n") + "\n"
}

// TestTopGolden: the screens of oo-claude top at 80×24 and 160×50 under
// tmux, with the clock fixed, in UTF-8 and in the C locale, match the
// golden ones (go test -run TestTopGolden -update-golden ./cli/oo-claude/
// rewrites them); q restores the terminal.
func TestTopGolden(t *testing.T) {
	fs := topStation(t)
	for _, tc := range []struct {
		name   string
		w, h   int
		locale string
	}{
		{"80x24", 80, 24, "C.UTF-8"},
		{"160x50", 160, 50, "C.UTF-8"},
		{"80x24-ascii", 80, 24, "C"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(fs.Env(), "OO_CLAUDE_TOP_NOW="+topClock.Format(time.RFC3339), "LANG="+tc.locale, "NO_COLOR=1", "TERM=xterm-256color")
			p := newPane(t, tc.w, tc.h, env)
			p.keys("oo-claude top", "Enter")
			// The tree is complete once the document came: the child under
			// its parent and the inbox's pending line; and the costs. The
			// screen is complete once the events came too: the last
			// session's doorman state and the two costs (on a loaded
			// machine the screen was read before the doorman's event).
			got := normalized(p.waitFor("the three sessions, by lineage", func(s string) bool {
				return strings.Contains(s, "reviewer") && strings.Contains(s, "helper") && strings.Contains(s, "pend 1") && strings.Contains(s, " 3d") &&
					strings.Contains(s, "$0.0026+1.2k") && strings.Contains(s, "12m 12.3k tok") &&
					(strings.Contains(s, "└─ helper") || strings.Contains(s, "`- helper")) &&
					strings.Contains(s, "reviewer doorman not-fresh missing") && strings.Contains(s, "lead cost $0.0026+1.2k tok") &&
					strings.Contains(s, "helper cost 12.3k tok")
			}))
			golden := filepath.Join("testdata", "top", tc.name+".golden")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run TestTopGolden -update-golden ./cli/oo-claude/ writes it)", err)
			}
			if got != string(want) {
				t.Errorf("the screen differs from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
			p.keys("q")
			restored(t, p)
		})
	}
}

// restored checks that the view is gone and the terminal works as before:
// the shell's prompt is back and a typed line is echoed and run.
func restored(t *testing.T, p *tmuxPane) {
	t.Helper()
	p.waitFor("the prompt again, without the view", func(s string) bool {
		return strings.Count(s, "prompt$") >= 2 && !strings.Contains(s, "oo-claude top ·")
	})
	p.keys("echo ok-$((40+2))", "Enter")
	p.waitFor("the shell running a typed line", func(s string) bool { return strings.Contains(s, "ok-42") })
}

// TestTopExits: Ctrl-C and SIGTERM end the view and restore the terminal
// as q does, and a resize redraws it at the new size.
func TestTopExits(t *testing.T) {
	fs := topStation(t)
	env := append(fs.Env(), "LANG=C.UTF-8", "TERM=xterm-256color")
	for _, how := range []string{"ctrl-c", "sigterm"} {
		t.Run(how, func(t *testing.T) {
			p := newPane(t, 100, 30, env)
			p.keys("oo-claude top", "Enter")
			p.waitFor("the view", func(s string) bool { return strings.Contains(s, "reviewer") })
			if how == "ctrl-c" {
				if out, err := p.cmd("resize-window", "-t", "top", "-x", "60", "-y", "20").CombinedOutput(); err != nil {
					t.Fatalf("resize: %v\n%s", err, out)
				}
				p.waitFor("the view at 60×20", func(s string) bool {
					ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
					return len(ls) <= 20 && strings.Contains(s, "reviewer") && strings.Contains(ls[len(ls)-1], "? keys")
				})
				p.keys("C-c")
			} else {
				pid := topPID(t, p)
				if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			restored(t, p)
		})
	}
}

// TestTopReadsThisStation: enter shows what oo-claude read says of the
// selected session of this station (the view's program runs the read verb
// of the oo-claude that started it), and its complaint for a session with
// no transcript; Escape goes back to the tree.
func TestTopReadsThisStation(t *testing.T) {
	fs := topStation(t)
	p := newPane(t, 120, 30, append(fs.Env(), "LANG=C.UTF-8", "TERM=xterm-256color", "NO_COLOR=1"))
	p.keys("oo-claude top", "Enter")
	p.waitFor("lead selected", func(s string) bool { return strings.Contains(s, "▶ lead") })
	p.keys("Enter")
	p.waitFor("lead's read", func(s string) bool {
		return strings.Contains(s, "session 1a2b3c4d-0000-4000-8000-000000000001 lead (running") && strings.Contains(s, "transcript "+fs.Paths.ProjectsDir)
	})
	p.keys("Escape")
	p.waitFor("the tree again", func(s string) bool { return strings.Contains(s, "▶ lead") })
	for range 2 {
		p.keys("j")
	}
	p.waitFor("reviewer selected", func(s string) bool { return strings.Contains(s, "▶ reviewer") })
	p.keys("Enter")
	p.waitFor("reviewer's read: no transcript", func(s string) bool {
		return strings.Contains(strings.Join(strings.Fields(s), " "), "no transcript for session 9c0d1e2f-0000-4000-8000-000000000003")
	})
	p.keys("Escape")
	p.waitFor("the tree again", func(s string) bool { return strings.Contains(s, "▶ reviewer") })
	p.keys("q")
	restored(t, p)
}

// TestTopExecsTheProgramBeside: `oo-claude top` runs the top program
// installed beside it, and without one exits 1 saying so, the terminal
// untouched. The test binary, linked as oo-claude (and as oo-claude-top
// beside it), is both programs.
func TestTopExecsTheProgramBeside(t *testing.T) {
	fs := topStation(t)
	dir := t.TempDir()
	self := filepath.Join(dir, "oo-claude")
	installAt(t, binary(t), self)
	p := newPane(t, 250, 30, append(fs.Env(), "LANG=C.UTF-8", "TERM=xterm-256color", "NO_COLOR=1"))
	p.keys(self+" top; echo exit=$?", "Enter")
	p.waitFor("the missing program named, exit 1", func(s string) bool {
		return strings.Contains(s, filepath.Join(dir, programs.Top)+" is not installed beside oo-claude") && strings.Contains(s, "exit=1")
	})
	installAt(t, binary(t), filepath.Join(dir, programs.Top))
	p.keys("clear; "+self+" top; echo exit=$?", "Enter")
	p.waitFor("the view", func(s string) bool { return strings.Contains(s, "▶ lead") && strings.Contains(s, "reviewer") })
	p.keys("q")
	p.waitFor("exit 0", func(s string) bool { return strings.Contains(s, "exit=0") })
}

// topPID is the pid of the oo-claude top the pane's shell runs.
func topPID(t *testing.T, p *tmuxPane) int {
	t.Helper()
	out, err := p.cmd("display-message", "-p", "-t", "top", "#{pane_pid}").Output()
	if err != nil {
		t.Fatal(err)
	}
	sh := strings.TrimSpace(string(out))
	b, err := os.ReadFile("/proc/" + sh + "/task/" + sh + "/children")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) != 1 {
		t.Fatalf("the shell %s has children %q, want oo-claude top alone", sh, f)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestTopNeedsATerminal: without a terminal top says so and exits 2 (a
// pipe gets watch's stream instead); it takes no arguments.
func TestTopNeedsATerminal(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"top"}, "top needs a terminal"},
		{[]string{"top", "x"}, "top takes no arguments"},
	} {
		r := runInProcess(t, fs.Getenv, "", tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

// TestTopHosts: top --host a --host b --host down under tmux shows each
// station's sessions under its header (down's says it is lost), and s sends
// to the selected session through its own station (the line lands in b's
// inbox, the verdict shows in place), enter shows what b's read says; q
// restores the terminal.
func TestTopHosts(t *testing.T) {
	env, st := sshStations(t, "a", "b")
	st["a"].AddSession(fakestation.Session{Name: "alpha-a1", Status: station.StatusBusy})
	rb := st["b"].AddSession(fakestation.Session{Name: "beta-b2", Status: station.StatusIdle})
	p := newPane(t, 120, 30, append(env, "LANG=C.UTF-8", "TERM=xterm-256color", "NO_COLOR=1"))
	p.keys("oo-claude top --host a --host b --host down", "Enter")
	s := p.waitFor("both stations, grouped, and down lost", func(s string) bool {
		return strings.Contains(s, "beta-b2") && strings.Contains(s, "alpha-a1") && strings.Contains(s, "[down] · 0 sessions · LOST") &&
			strings.Contains(s, "b-station") && strings.Contains(s, "a-station")
	})
	ls := strings.Split(s, "\n")
	ia, _ := lineWith(ls, "[a] a-station · 1 sessions")
	ia1, _ := lineWith(ls, "alpha-a1 ")
	ib, _ := lineWith(ls, "[b] b-station · 1 sessions")
	ib2, _ := lineWith(ls, "beta-b2 ")
	if ia < 0 || ib < 0 || !(ia < ia1 && ia1 < ib && ib < ib2) {
		t.Fatalf("not grouped by station:\n%s", s)
	}
	p.keys("j") // beta-b2 is the last session: j selects it from anywhere
	p.waitFor("beta-b2 selected", func(s string) bool { return strings.Contains(s, "▶ beta-b2") })
	p.keys("s")
	p.waitFor("the line editor", func(s string) bool { return strings.Contains(s, "send to beta-b2:") })
	p.keys("-l", "hello from top")
	p.keys("Enter")
	s = p.waitFor("the verdict under beta-b2", func(s string) bool { return strings.Contains(s, `» "hello from top" · queued`) })
	ls = strings.Split(s, "\n")
	if i, _ := lineWith(ls, "beta-b2 "); i < 0 || !strings.Contains(ls[i+1], "» ") {
		t.Errorf("the verdict is not in place under beta-b2:\n%s", s)
	}
	b, err := os.ReadFile(st["b"].InboxPath(rb.SessionID))
	if err != nil || !strings.Contains(string(b), "hello from top") {
		t.Errorf("b's inbox %q %v, want the line", b, err)
	}
	if _, err := os.Stat(st["a"].InboxPath(rb.SessionID)); err == nil {
		t.Errorf("the line reached station a too")
	}
	// enter: what b's read says of beta-b2 (it has no transcript there).
	p.keys("Enter")
	p.waitFor("b's read", func(s string) bool {
		return strings.Contains(s, "b: oo-claude read exit 1: oo-claude: no transcript for session "+rb.SessionID)
	})
	p.keys("Escape")
	p.waitFor("the tree again", func(s string) bool { return strings.Contains(s, "[b] b-station") })
	p.keys("q")
	restored(t, p)
}

func lineWith(ls []string, sub string) (int, string) {
	for i, l := range ls {
		if strings.Contains(l, sub) {
			return i, l
		}
	}
	return -1, ""
}
