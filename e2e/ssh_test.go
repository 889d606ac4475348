package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/fakes/fakestation"
)

// This file proves the fleet with OpenSSH's own sshd on 127.0.0.1: its own
// config, host key and client key, key-only, on a free port, as the user
// running the tests. Two stations share it: each ssh Host alias sends its
// own XDG_CONFIG_HOME (AcceptEnv), so each reads its own station file.

// sshRig is a running sshd and the ssh config that reaches its stations.
type sshRig struct {
	dir    string
	config string // ssh -F file: Host a, Host b, Host down
	tmp    string // the local oo-claude's TMPDIR
	env    []string
	st     map[string]*fakestation.Station
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// newSSHRig starts the sshd with stations a and b (fake stations) and,
// for each of extra (name → the body of its station file), one more.
func newSSHRig(t *testing.T, oo string, extra ...map[string]string) *sshRig {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		if sshd, err = exec.LookPath("/usr/sbin/sshd"); err != nil {
			t.Skip("no sshd (Debian's openssh-server; scripts/test.sh installs it)")
		}
	}
	if os.Geteuid() == 0 {
		if fi, err := os.Stat("/run/sshd"); err != nil || !fi.IsDir() {
			t.Skip("sshd as root needs its privilege separation directory /run/sshd (scripts/test.sh makes it)")
		}
	}
	dir := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "host_key"))
	run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "client_key"))
	pub, err := os.ReadFile(filepath.Join(dir, "client_key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	// Root may log in with a key here, in this test's sshd only (CI runs
	// as root). SetEnv SHLVL=1: Debian's bash, the login shell sshd runs
	// the command with, sources ~/.bashrc when run by sshd at shell level
	// 1; SHLVL=1 makes it level 2, so the user's ~/.bashrc (seconds, on a
	// machine with pyenv) is not part of every session, and its PATH
	// does not hide the non-interactive one a station really has.
	cfg := fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s/host_key
AuthorizedKeysFile %s/authorized_keys
PidFile %s/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
AcceptEnv XDG_CONFIG_HOME
SetEnv SHLVL=1
LogLevel ERROR
`, port, dir, dir, dir)
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd's log (the readiness probe below is a "Connection closed"
	// there) goes to a file, shown when the test fails: a pipe would be
	// held open by every session child sshd forks.
	sshdLog := filepath.Join(dir, "sshd.log")
	cmd := exec.Command(sshd, "-D", "-E", sshdLog, "-f", filepath.Join(dir, "sshd_config"))
	t.Cleanup(func() {
		if b, _ := os.ReadFile(sshdLog); t.Failed() {
			t.Logf("sshd log:\n%s", b)
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd does not listen: %v", err)
		}
	}
	r := &sshRig{dir: dir, config: filepath.Join(dir, "ssh_config"), st: map[string]*fakestation.Station{}}
	var sc strings.Builder
	for _, n := range []string{"a", "b"} {
		fs := fakestation.New(t)
		r.st[n] = fs
		xdg := filepath.Join(dir, "xdg-"+n)
		body := "OO_CLAUDE_STATION=" + n + "-station\nOO_CLAUDE_MIN_INTERVAL_S=0\n"
		for _, kv := range fs.Env()[1:] {
			body += kv + "\n"
		}
		if err := os.MkdirAll(filepath.Join(xdg, "oo-claude"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(xdg, "oo-claude", "station.env"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sc, "Host %s\n  HostName 127.0.0.1\n  Port %d\n  SetEnv XDG_CONFIG_HOME=%s\n", n, port, xdg)
	}
	for _, m := range extra {
		for n, body := range m {
			xdg := filepath.Join(dir, "xdg-"+n)
			if err := os.MkdirAll(filepath.Join(xdg, "oo-claude"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(xdg, "oo-claude", "station.env"), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&sc, "Host %s\n  HostName 127.0.0.1\n  Port %d\n  SetEnv XDG_CONFIG_HOME=%s\n", n, port, xdg)
		}
	}
	fmt.Fprintf(&sc, "Host down\n  HostName 127.0.0.1\n  Port %d\n", freePort(t))
	fmt.Fprintf(&sc, "Host *\n  User %s\n  IdentityFile %s/client_key\n  IdentitiesOnly yes\n  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n", currentUser(t), dir)
	if err := os.WriteFile(r.config, []byte(sc.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// TMPDIR holds the local side's connection-sharing sockets (a short
	// path: a unix socket's is bounded), so a process of this test is
	// found by it (an ssh master names its socket as its title).
	tmp, err := os.MkdirTemp("", "ssh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	r.tmp = tmp
	r.env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "TMPDIR=" + tmp, "OO_CLAUDE_SSH=ssh -F " + r.config, "OO_CLAUDE_REMOTE_BIN=" + oo}
	return r
}

func currentUser(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("id", "-un").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func (r *sshRig) run(t *testing.T, oo, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, oo, args...)
	cmd.Env = r.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestSSHStations: over a real sshd, two stations and one that is down: a
// merged sessions document, a line with quotes, $, ;, backticks and
// non-ASCII arriving byte-exact in the remote inbox, ssh's failure as exit
// 255, and a dropped watch leaving no process on either side.
func TestSSHStations(t *testing.T) {
	oo := ooClaude(t)
	r := newSSHRig(t, oo)
	ra := r.st["a"].AddSession(fakestation.Session{Name: "alpha-a1"})
	rb := r.st["b"].AddSession(fakestation.Session{Name: "beta-b2"})

	out, errs, code := r.run(t, oo, "", "sessions", "--json", "--host", "a", "--host", "b", "--host", "down")
	var doc struct {
		Sessions []struct{ Session, Station string }     `json:"sessions"`
		Stations []struct{ Station, Name, Error string } `json:"stations"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("sessions: exit %d %v: %s %s", code, err, out, errs)
	}
	// Printed in full, the down station listed with its error; the
	// exit is ssh's own failure's (255), as for one --host.
	if code != 255 || len(doc.Sessions) != 2 || doc.Sessions[0].Session != ra.SessionID || doc.Sessions[1].Session != rb.SessionID ||
		len(doc.Stations) != 3 || doc.Stations[0].Name != "a-station" || doc.Stations[1].Name != "b-station" || doc.Stations[2].Error == "" {
		t.Errorf("merged sessions: exit %d %+v\nstderr %s", code, doc, errs)
	}

	sid := "8f0c5b8e-3a55-4d7e-9a7e-2d2b8f1e6a10"
	line := "it's \"$HOME\"; `id` $(id) | x & — naïve ✓ \\n"
	start := time.Now()
	out, errs, code = r.run(t, oo, line, "send", "--host", "b", "--no-tag", "--expect-start", "--json", sid, "-")
	t.Logf("remote send → verdict: %v", time.Since(start))
	if code != 3 || !strings.Contains(out, `"station":"b-station"`) {
		t.Fatalf("send: exit %d %s %s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(r.st["b"].Paths.InboxDir, sid+".inbox")); err != nil || string(b) != line+"\n" {
		t.Errorf("remote inbox %q %v, want %q", b, err, line+"\n")
	}
	if _, err := os.Stat(filepath.Join(r.st["a"].Paths.InboxDir, sid+".inbox")); err == nil {
		t.Errorf("the line reached station a too")
	}
	_, errs, code = r.run(t, oo, "hi", "send", "--host", "down", sid, "-")
	if code != 255 || !strings.Contains(errs, "ssh-failed") {
		t.Errorf("down: exit %d %s", code, errs)
	}

	// A watch whose local process is SIGKILLed: its ssh child dies with
	// it, and the remote watch ends with the connection.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := exec.CommandContext(ctx, oo, "watch", "--json", "--host", "a")
	w.Env = r.env
	pr, err := w.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(pr)
	for sc.Scan() && !strings.Contains(sc.Text(), `"event":"doorman"`) {
	}
	mine := func() []string {
		var found []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			c := strings.ReplaceAll(string(b), "\x00", " ")
			if strings.Contains(c, r.config) || strings.Contains(c, r.tmp) || (strings.Contains(c, oo) && strings.Contains(c, "watch")) {
				found = append(found, e.Name()+": "+c)
			}
		}
		return found
	}
	if len(mine()) < 2 {
		t.Fatalf("watch: want the local and remote processes, got %v", mine())
	}
	w.Process.Signal(syscall.SIGKILL)
	w.Wait()
	killed := time.Now()
	for len(mine()) > 0 {
		if time.Since(killed) > 30*time.Second { // they end at the hang-up; generous for a loaded machine
			t.Fatalf("still running 30 s after the local watch was killed: %v", mine())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("no process left %v after SIGKILL of the local watch", time.Since(killed))
}

// TestSSHSendLatency measures a send's round trip (here to a session that
// is not running: the verdict queued-offline, no doorman in the way) run
// locally, over ssh with a fresh connection each time, and over ssh through
// a shared connection (ControlMaster), for BENCHMARKS.md.
func TestSSHSendLatency(t *testing.T) {
	oo := ooClaude(t)
	r := newSSHRig(t, oo)
	sid := "8f0c5b8e-3a55-4d7e-9a7e-2d2b8f1e6a10"
	const n = 10
	median := func(name string, env []string, args ...string) time.Duration {
		var ds []time.Duration
		for range n {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			cmd := exec.CommandContext(ctx, oo, args...)
			cmd.Env = env
			cmd.Stdin = strings.NewReader("ping")
			start := time.Now()
			err := cmd.Run()
			ds = append(ds, time.Since(start))
			cancel()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
				t.Fatalf("%s: %v, want exit 3", name, err)
			}
		}
		for i := range ds {
			for j := i + 1; j < len(ds); j++ {
				if ds[j] < ds[i] {
					ds[i], ds[j] = ds[j], ds[i]
				}
			}
		}
		t.Logf("%s: median %v (min %v, max %v, n=%d)", name, ds[n/2].Round(100*time.Microsecond), ds[0].Round(100*time.Microsecond), ds[n-1].Round(100*time.Microsecond), n)
		return ds[n/2]
	}
	local := append([]string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, r.st["a"].Env()[1:]...)
	median("local send", local, "send", "--json", "--min-interval", "0", "--expect-start", sid, "-")
	fresh := append(append([]string(nil), r.env...), "OO_CLAUDE_SSH=ssh -F "+r.config+" -o ControlMaster=no -o ControlPath=none")
	median("ssh send, a new connection each", fresh, "send", "--json", "--min-interval", "0", "--expect-start", "--host", "a", sid, "-")
	cm := filepath.Join(r.dir, "cm")
	shared := append(append([]string(nil), r.env...), "OO_CLAUDE_SSH=ssh -F "+r.config+" -o ControlMaster=auto -o ControlPath="+cm+" -o ControlPersist=60")
	median("ssh send, a shared connection", shared, "send", "--json", "--min-interval", "0", "--expect-start", "--host", "a", sid, "-")
	exec.Command("ssh", "-F", r.config, "-o", "ControlPath="+cm, "-O", "exit", "a").Run()
}

// TestSSHMergedWatch: `watch --host a --host b --host down --json` over the
// real sshd is one stream in arrival order, each event with its station;
// the station that is down is a station-lost event with ssh's error (never
// silence); and a session that starts on either station reaches the merged
// reader, whose latency (the registry row written → the event read here)
// is the figure for BENCHMARKS.md.
func TestSSHMergedWatch(t *testing.T) {
	oo := ooClaude(t)
	r := newSSHRig(t, oo)
	ra := r.st["a"].AddSession(fakestation.Session{Name: "alpha-a1"})
	rb := r.st["b"].AddSession(fakestation.Session{Name: "beta-b2"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := exec.CommandContext(ctx, oo, "watch", "--json", "--host", "a", "--host", "b", "--host", "down")
	w.Env = r.env
	pr, err := w.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var werr syncBuffer
	w.Stderr = &werr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { w.Process.Kill(); w.Wait() }()
	type arrival struct {
		ev map[string]any
		at time.Time
	}
	lines := make(chan arrival, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				t.Errorf("watch printed a line that is not JSON: %q", sc.Text())
				continue
			}
			lines <- arrival{ev, time.Now()}
		}
	}()
	var seen []map[string]any
	next := func(what string, match func(map[string]any) bool) arrival {
		t.Helper()
		for {
			select {
			case a, ok := <-lines:
				if !ok {
					t.Fatalf("watch ended before %s; events %v\nstderr %s", what, seen, werr.String())
				}
				seen = append(seen, a.ev)
				if st, _ := a.ev["station"].(string); st != "a" && st != "b" && st != "down" {
					t.Errorf("an event without its station: %v", a.ev)
				}
				if match(a.ev) {
					return a
				}
			case <-ctx.Done():
				t.Fatalf("no %s; events %v\nstderr %s", what, seen, werr.String())
			}
		}
	}
	started := func(station, sid string) func(map[string]any) bool {
		return func(ev map[string]any) bool {
			return ev["event"] == "session-started" && ev["station"] == station && ev["session"] == sid
		}
	}
	// Both stations' initial sessions (their remote watches run) and the
	// down station's loss, in whatever order they arrive.
	want := map[string]func(map[string]any) bool{
		"a's session": started("a", ra.SessionID),
		"b's session": started("b", rb.SessionID),
		"down's loss": func(ev map[string]any) bool { return ev["event"] == "station-lost" && ev["station"] == "down" },
	}
	for len(want) > 0 {
		a := next(fmt.Sprint(len(want), " more first events"), func(ev map[string]any) bool {
			for k, m := range want {
				if m(ev) {
					delete(want, k)
					return true
				}
			}
			return false
		})
		if a.ev["event"] == "station-lost" {
			if txt, _ := a.ev["text"].(string); !strings.Contains(txt, "255") && !strings.Contains(txt, "refused") {
				t.Errorf("down's station-lost %v, want ssh's error", a.ev)
			}
		}
	}
	const n = 10
	var ds []time.Duration
	for i := range n {
		st := []string{"a", "b"}[i%2]
		t0 := time.Now()
		row := r.st[st].AddSession(fakestation.Session{Name: fmt.Sprintf("new-%d", i)})
		a := next("the new session on "+st, started(st, row.SessionID))
		ds = append(ds, a.at.Sub(t0))
	}
	slices.Sort(ds)
	t.Logf("merged watch over ssh, a new session's row → the merged reader: median %v (min %v, max %v, n=%d)",
		ds[n/2].Round(100*time.Microsecond), ds[0].Round(100*time.Microsecond), ds[n-1].Round(100*time.Microsecond), n)
}

// sshProc is an oo-claude command running in the background over the
// rig, its stdout read line by line as it comes.
type sshProc struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr syncBuffer
	done   chan struct{}
	code   int
}

func (r *sshRig) start(t *testing.T, oo, stdin string, args ...string) *sshProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	p := &sshProc{cmd: exec.CommandContext(ctx, oo, args...), lines: make(chan string, 16), done: make(chan struct{})}
	p.cmd.Env = r.env
	p.cmd.Stdin = strings.NewReader(stdin)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		defer cancel()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		if err := p.cmd.Wait(); err != nil {
			p.code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				p.code = ee.ExitCode()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-p.done })
	return p
}

// line is the next stdout line ("" when stdout ended).
func (p *sshProc) line(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case l := <-p.lines:
		return l
	case <-time.After(timeout):
		t.Fatalf("no line from %v in %v; stderr %s", p.cmd.Args, timeout, p.stderr.String())
	}
	return ""
}

// wait is the exit code once the command ended.
func (p *sshProc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	for range p.lines {
	}
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		t.Fatalf("%v still runs after %v", p.cmd.Args, timeout)
	}
	return 0
}

// children are the pids whose parent is pid.
func children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == strconv.Itoa(pid) {
				out = append(out, c)
			}
		}
	}
	return out
}

// TestSSHRealClaude: the real Claude Code on a station reached over the
// real sshd, steered and asked with `send --host --reply` (the line on
// stdin): the ack row comes as soon as the ack is known, the verdict with
// the model's answer after it. A second ask whose ssh client is killed
// during the reply wait leaves the caller the ack row and exit 255
// (ssh-failed, never a class); `receipt MSG_ID --host` then gives the
// station's final row, the answer in it.
func TestSSHRealClaude(t *testing.T) {
	answerA := "ANSWER-A-" + uuid.NewString()
	answerB := "ANSWER-B-" + uuid.NewString()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 2"),
		fakemodel.Reply{Text: "first turn's answer", Delay: 6 * time.Second},
		fakemodel.Reply{Text: answerA, Delay: 4 * time.Second},
		fakemodel.Reply{Text: answerB, Delay: 8 * time.Second}}})
	oo := ooClaude(t)
	body := "OO_CLAUDE_STATION=c-station\nCLAUDE_CONFIG_DIR=" + w.config + "\n"
	for k, v := range w.knobs() {
		body += k + "=" + v + "\n"
	}
	r := newSSHRig(t, oo, map[string]string{"c": body})
	s := w.start(w.withDoorman(pargs("work", "--allowedTools", "Bash")...))
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	last := s.waitModel(30*time.Second, "with the tool's result", func(q *fakemodel.Request) bool {
		return len(q.ToolResults()) > 0
	})

	lineA := "question A: it's \"$HOME\"; `id` $(id) — ✓ " + uuid.NewString()
	sent := time.Now()
	a := r.start(t, oo, lineA, "send", "--host", "c", "--from", "e2e", "--json", "--reply", "60", sid, "-")
	ackA := a.line(t, 60*time.Second)
	t.Logf("send --host → the ack row of a real session's doorman, over a new connection: %v", time.Since(sent).Round(time.Millisecond))
	if !strings.Contains(ackA, `"class":"delivered-`) || !strings.Contains(ackA, `"reply":null`) {
		t.Fatalf("A's first row %s, want the ack row (delivered, no reply yet); stderr %s", ackA, a.stderr.String())
	}
	s.waitModel(60*time.Second, "with line A", func(q *fakemodel.Request) bool {
		return q.Seq > last.Seq && q.MessagesContain(lineA)
	})

	// B is sent while A's turn runs; its ssh client dies during the wait.
	lineB := "question B " + uuid.NewString()
	b := r.start(t, oo, lineB, "send", "--host", "c", "--from", "e2e", "--json", "--reply", "60", sid, "-")
	ackB := b.line(t, 60*time.Second)
	var ack struct {
		Class string `json:"class"`
		MsgID string `json:"msg_id"`
	}
	if err := json.Unmarshal([]byte(ackB), &ack); err != nil || ack.MsgID == "" || !strings.HasPrefix(ack.Class, "delivered-") {
		t.Fatalf("B's first row %s, want the ack row", ackB)
	}
	kids := children(b.cmd.Process.Pid)
	if len(kids) != 1 {
		t.Fatalf("B's local process has children %v, want its one ssh", kids)
	}
	syscall.Kill(kids[0], syscall.SIGKILL)
	if code := b.wait(t, 30*time.Second); code != 255 || !strings.Contains(b.stderr.String(), "ssh-failed") || !strings.Contains(b.stderr.String(), "receipt "+ack.MsgID+" --host c") {
		t.Errorf("B after the drop: exit %d, stderr %s; want 255, ssh-failed and the receipt command", code, b.stderr.String())
	}

	verdictA := a.line(t, 90*time.Second)
	if code := a.wait(t, 30*time.Second); code != 0 || !strings.Contains(verdictA, `"text":"`+answerA+`"`) || !strings.Contains(verdictA, `"station":"c-station"`) {
		t.Errorf("A's verdict (exit %d) %s, want exactly %q from c-station", code, verdictA, answerA)
	}

	// The station's own send of B ran on after the drop: its receipt
	// row holds the answer.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var row string
	err := eventually(ctx, func() (bool, error) {
		out, _, code := r.run(t, oo, "", "receipt", "--host", "c", "--json", ack.MsgID)
		row = out
		return code == 0 && strings.Contains(out, `"reply":{`), nil
	})
	if err != nil || !strings.Contains(row, `"text":"`+answerB+`"`) || !strings.Contains(row, `"msg_id":"`+ack.MsgID+`"`) {
		t.Errorf("receipt %s --host c: %s (%v), want the final row with %q", ack.MsgID, row, err, answerB)
	}
	s.mustSucceed(90 * time.Second)
}

// manyStationsCommands are the commands of the README's "Many stations"
// section (its "    $ " lines).
func manyStationsCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			in = l == "## Many stations"
			continue
		}
		if c, ok := strings.CutPrefix(l, "    $ "); ok && in {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) == 0 {
		t.Fatal(`README.md: no "$ " commands in the "Many stations" section`)
	}
	return cmds
}

// TestSSHReadmeManyStations runs every command of the README's "Many
// stations" section as written, with sh, against the real sshd: build1
// and build2 are the Host aliases of two stations, work-e9 a session on
// build1 (no doorman: the line is queued), $line a line with a shell's
// specials, the receipt's msg_id that of a past delivered send in
// build1's receipts. watch runs until its first events from
// both stations; top runs in a private tmux server until it shows both
// stations, then quits on q.
func TestSSHReadmeManyStations(t *testing.T) {
	oo := ooClaude(t)
	r := newSSHRig(t, oo)
	bin := t.TempDir()
	if err := os.Symlink(oo, filepath.Join(bin, "oo-claude")); err != nil {
		t.Fatal(err)
	}
	// The aliases the README uses, as the user's ~/.ssh/config has them.
	cfg, err := os.ReadFile(r.config)
	if err != nil {
		t.Fatal(err)
	}
	c := strings.Replace(strings.Replace(string(cfg), "Host a\n", "Host a build1\n", 1), "Host b\n", "Host b build2\n", 1)
	if err := os.WriteFile(r.config, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	work := r.st["a"].AddSession(fakestation.Session{Name: "work-e9"})
	r.st["b"].AddSession(fakestation.Session{Name: "beta-b2"})
	line := "it's `id` $(id); \"$HOME\" — ✓"
	env := append(append([]string(nil), r.env...), "line="+line)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin + ":/usr/bin:/bin"
		}
	}
	uuidRE := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	msgID := uuid.NewString()
	past := `{"ts":"2026-12-01T10:00:00.000Z","kind":"send","class":"delivered-steer","delivered":true,"target":"work-e9","session_id":"` + work.SessionID + `","msg_id":"` + msgID + `","seen":true,"station":"a-station"}` + "\n"
	if err := os.WriteFile(r.st["a"].Paths.ReceiptsFile(), []byte(past), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range manyStationsCommands(t) {
		f := strings.Fields(cmd)
		verb := ""
		for i, w := range f {
			if w == "oo-claude" && i+1 < len(f) {
				verb = f[i+1]
			}
		}
		switch verb {
		case "watch":
			p := r.startSh(t, env, cmd)
			got := map[string]bool{}
			for !got["build1"] || !got["build2"] {
				var ev struct{ Event, Station string }
				l := p.line(t, 60*time.Second)
				if json.Unmarshal([]byte(l), &ev) != nil {
					t.Fatalf("%s: %q is not an event; stderr %s", cmd, l, p.stderr.String())
				}
				got[ev.Station] = true
			}
			p.cmd.Process.Kill()
			continue
		case "top":
			runTop(t, env, cmd, "[build1] a-station", "[build2] b-station")
			continue
		case "receipt":
			cmd = uuidRE.ReplaceAllString(cmd, msgID)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		sh := exec.CommandContext(ctx, "sh", "-c", cmd)
		sh.Env = env
		var out, errb strings.Builder
		sh.Stdout, sh.Stderr = &out, &errb
		err := sh.Run()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		t.Logf("$ %s\nexit %d\n%s%s", cmd, code, out.String(), errb.String())
		switch verb {
		case "sessions":
			if code != 0 || !strings.Contains(out.String(), `"station":"build1"`) || !strings.Contains(out.String(), `"station":"build2"`) {
				t.Errorf("%s: exit %d, want both stations' sessions", cmd, code)
			}
		case "send":
			// work-e9 has no doorman here: queued-no-doorman (3).
			var v struct{ Class, Station string }
			rows := strings.Split(strings.TrimSpace(out.String()), "\n")
			if json.Unmarshal([]byte(rows[len(rows)-1]), &v); code != 3 || v.Class != "queued-no-doorman" || v.Station != "a-station" {
				t.Errorf("%s: exit %d %+v, want queued-no-doorman from a-station", cmd, code, v)
			}
			b, _ := os.ReadFile(r.st["a"].InboxPath(work.SessionID))
			if !strings.Contains(string(b), line) {
				t.Errorf("build1's inbox %q, want the line byte-exact", b)
			}
		case "receipt":
			if code != 0 || !strings.Contains(out.String(), msgID) || !strings.Contains(out.String(), "delivered-steer") {
				t.Errorf("%s: exit %d, want the past send's receipt", cmd, code)
			}
		default:
			if code != 0 {
				t.Errorf("%s: exit %d", cmd, code)
			}
		}
	}
}

// startSh is sh -c cmd in the background with env.
func (r *sshRig) startSh(t *testing.T, env []string, cmd string) *sshProc {
	t.Helper()
	saved := r.env
	r.env = env
	defer func() { r.env = saved }()
	return r.start(t, "sh", "", "-c", "exec "+cmd)
}

// runTop runs cmd (oo-claude top …) in a private tmux server until its
// screen shows every one of want, then quits it with q.
func runTop(t *testing.T, env []string, cmd string, want ...string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux (scripts/test.sh installs it)")
	}
	sock := filepath.Join(t.TempDir(), "tmux")
	tmux := func(args ...string) (string, error) {
		c := exec.Command("tmux", append([]string{"-S", sock}, args...)...)
		c.Env = env
		out, err := c.CombinedOutput()
		return string(out), err
	}
	var envArgs []string
	for _, kv := range env {
		envArgs = append(envArgs, "-e", kv)
	}
	if out, err := tmux(append(append([]string{"new-session", "-d", "-x", "200", "-y", "50"}, envArgs...), cmd)...); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { tmux("kill-server") })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var screen string
	err := eventually(ctx, func() (bool, error) {
		screen, _ = tmux("capture-pane", "-p")
		for _, w := range want {
			if !strings.Contains(screen, w) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%s: the screen never showed %q:\n%s", cmd, want, screen)
	}
	tmux("send-keys", "q")
}
