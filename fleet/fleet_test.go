package fleet_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/receipt"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeSSH is an ssh that runs the remote command with sh on this machine,
// HOME set to <root>/<dest>, as sshd runs it with the user's shell; the
// destination "down" fails as an unreachable host does (exit 255).
const fakeSSH = `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in --) shift; break;; -o) shift 2;; *) shift;; esac; done
dest=$1; shift
case "$dest" in down) echo "ssh: connect to host down port 22: Connection refused" >&2; exit 255;; esac
HOME=$FLEET_ROOT/$dest PATH=/usr/bin:/bin exec sh -c "$1"
`

// fakeRemote is the remote oo-claude under ~/go/bin (not on the PATH): it
// records its arguments and stdin, prints ~/out and exits with ~/exit.
const fakeRemote = `#!/bin/sh
printf '%s\n' "$@" > "$HOME/args"
cat > "$HOME/stdin"
cat "$HOME/out"
exit $(cat "$HOME/exit")
`

type rig struct {
	root string
	ssh  []string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	root := t.TempDir()
	ssh := filepath.Join(root, "ssh")
	if err := os.WriteFile(ssh, []byte(fakeSSH), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLEET_ROOT", root)
	return &rig{root: root, ssh: []string{ssh, "-F", "/dev/null"}}
}

func (r *rig) station(t *testing.T, dest, out string, exit int) fleet.Host {
	t.Helper()
	bin := filepath.Join(r.root, dest, "go", "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(bin, "oo-claude"), fakeRemote, 0o700)
	write(filepath.Join(r.root, dest, "out"), out, 0o600)
	write(filepath.Join(r.root, dest, "exit"), string(rune('0'+exit)), 0o600)
	return fleet.Host{Dest: dest, SSH: r.ssh}
}

func (r *rig) read(t *testing.T, dest, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.root, dest, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSendQuotingAndRows: the target and flags reach the remote verb as
// the words they are (no shell expands them), the line arrives on stdin
// byte-exact, the ack row and the verdict come back typed, and the remote
// exit code is the result's.
func TestSendQuotingAndRows(t *testing.T) {
	r := newRig(t)
	rows := `{"kind":"send","class":"delivered-steer","delivered":true,"msg_id":"m1","seen":null}` + "\n" +
		`{"kind":"send","class":"delivered-steer","delivered":true,"msg_id":"m1","seen":true}` + "\n"
	h := r.station(t, "a", rows, 0)
	line := "it's \"$HOME\"; `id` $(id) — naïve ✓ \\n"
	target := "we'ird $USER;name"
	var acked []receipt.SendRow
	res, err := h.Send(context.Background(), fleet.SendRequest{Target: target, Line: line, From: "ma ma", Seen: 3 * time.Second}, func(r receipt.SendRow) { acked = append(acked, r) })
	if err != nil {
		t.Fatal(err)
	}
	if got := r.read(t, "a", "stdin"); got != line+"\n" {
		t.Errorf("stdin %q, want %q", got, line+"\n")
	}
	wantArgs := "send\n--json\n--from\nma ma\n--seen\n3\n--\n" + target + "\n-\n"
	if got := r.read(t, "a", "args"); got != wantArgs {
		t.Errorf("remote args %q, want %q", got, wantArgs)
	}
	if res.Ack == nil || res.Verdict.Seen == nil || !*res.Verdict.Seen || len(acked) != 1 || acked[0].Seen != nil {
		t.Errorf("result %+v acked %v, want the ack row then the verdict", res, acked)
	}

	h = r.station(t, "b", `{"kind":"send","class":"queued-no-doorman","delivered":false}`+"\n", 3)
	res, err = h.Send(context.Background(), fleet.SendRequest{Target: "x", Line: "hi"}, nil)
	if err != nil || res.Exit != 3 || res.Verdict.Class != "queued-no-doorman" {
		t.Errorf("queued: %+v %v, want exit 3 passed through", res, err)
	}
}

// TestSSHFailureIsNotAClass: ssh's exit 255 is an SSHError matching ErrSSH,
// never a verdict.
func TestSSHFailureIsNotAClass(t *testing.T) {
	r := newRig(t)
	h := fleet.Host{Dest: "down", SSH: r.ssh}
	res, err := h.Send(context.Background(), fleet.SendRequest{Target: "x", Line: "hi"}, nil)
	var se *fleet.SSHError
	if !errors.Is(err, fleet.ErrSSH) || !errors.As(err, &se) || !strings.Contains(se.Error(), "Connection refused") || res.Verdict.Class != "" {
		t.Errorf("down: %+v %v, want an SSHError and no class", res, err)
	}
	if _, err := (fleet.Host{Dest: "-oProxyCommand=x"}).Run(context.Background(), nil, nil); !errors.Is(err, fleet.ErrSSH) {
		t.Errorf("option as destination: %v", err)
	}
}

// TestMergeSessions: one document over two stations and one that is down:
// every session carries its station, the down one is listed with its error.
func TestMergeSessions(t *testing.T) {
	r := newRig(t)
	doc := func(sid string) string {
		return `{"schema":"oo-claude/sessions/v0","generated_at":"2026-12-01T10:00:00.000Z","station":"u@` + sid + `","sessions":[{"session":"` + sid + `-1","name":"n"}],"warnings":[]}` + "\n"
	}
	hosts := []fleet.Host{r.station(t, "a", doc("a"), 0), r.station(t, "b", doc("b"), 0), {Dest: "down", SSH: r.ssh}}
	m, err := fleet.MergeSessions(context.Background(), hosts, false)
	if !errors.Is(err, fleet.ErrSSH) {
		t.Errorf("err %v, want the down station's SSHError", err)
	}
	if len(m.Sessions) != 2 || m.Sessions[0].Station != "a" || m.Sessions[1].Station != "b" || m.Sessions[1].Session != "b-1" {
		t.Errorf("sessions %+v", m.Sessions)
	}
	want := []observatory.StationState{{Station: "a", Name: "u@a"}, {Station: "b", Name: "u@b"}, {Station: "down"}}
	if len(m.Stations) != 3 || m.Stations[0] != want[0] || m.Stations[1] != want[1] || m.Stations[2].Station != "down" || !strings.Contains(m.Stations[2].Error, "Connection refused") {
		t.Errorf("stations %+v", m.Stations)
	}
}

// TestWatchLostAndBack: a station's stream that ends is station-lost, then
// (reconnected) station-back and its events again, each with its station.
func TestWatchLostAndBack(t *testing.T) {
	r := newRig(t)
	ev := `{"event":"session-started","ts":"t","session":"s1","initial":true}` + "\n"
	hosts := []fleet.Host{r.station(t, "a", ev, 0), {Dest: "down", SSH: r.ssh}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ch := fleet.Watch(ctx, hosts, fleet.WatchOptions{Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	var seq []string
	for e := range ch {
		if e.Station == "a" {
			seq = append(seq, string(e.Event))
		}
		if e.Station == "down" && e.Event == fleet.EventStationBack {
			t.Errorf("a down station came back: %+v", e)
		}
		if len(seq) == 4 {
			cancel()
		}
	}
	want := []string{"session-started", fleet.EventStationLost, fleet.EventStationBack, "session-started"}
	if strings.Join(seq[:4], ",") != strings.Join(want, ",") {
		t.Errorf("events of a: %v, want %v", seq, want)
	}
}

// TestHeadlessVerbs: resume, start, lineage show and receipt on a station
// take their flags as the words they are, the line or prompt on stdin
// (never in the command line), and come back typed with the exit code.
func TestHeadlessVerbs(t *testing.T) {
	r := newRig(t)
	line := "it's `id` $(id); naïve"
	h := r.station(t, "a", `{"kind":"resume","class":"held-by-session","delivered":false,"target":"s1","held_by":"heartbeat"}`+"\n", 4)
	res, err := h.Resume(context.Background(), headless.ResumeRequest{SessionID: "s1", Line: line, Model: "m $x", CWD: "/srv/it's", MaxTurns: 2, Budget: 0.5, Timeout: 90 * time.Second, Self: "/here/oo-claude"})
	if err != nil || res.Exit != 4 || res.Row.Class != "held-by-session" || res.Row.HeldBy == nil || *res.Row.HeldBy != "heartbeat" {
		t.Errorf("resume: %+v %v", res, err)
	}
	if got, want := r.read(t, "a", "args"), "resume\n--json\n--model\nm $x\n--cwd\n/srv/it's\n--max-turns\n2\n--budget\n0.5\n--timeout\n90\n--\ns1\n-\n"; got != want {
		t.Errorf("resume args %q, want %q", got, want)
	}
	if got := r.read(t, "a", "stdin"); got != line+"\n" {
		t.Errorf("resume stdin %q", got)
	}

	prompt := "two\nlines; $HOME"
	h = r.station(t, "b", `{"state":"completed","session_id":"s2","result_file":"/r/s2.json","result":"ok"}`+"\n", 0)
	sr, err := h.Start(context.Background(), headless.StartRequest{Prompt: prompt, CWD: "/srv/p", Doorman: headless.DoormanNone, NoLineage: true})
	if err != nil || sr.File == nil || sr.Detached != nil || sr.File.State != headless.Completed || sr.File.ResultFile != "/r/s2.json" {
		t.Errorf("start: %+v %v", sr, err)
	}
	if got, want := r.read(t, "b", "args"), "start\n--json\n--cwd\n/srv/p\n--no-doorman\n--no-lineage\n--\n-\n"; got != want {
		t.Errorf("start args %q, want %q", got, want)
	}
	if got := r.read(t, "b", "stdin"); got != prompt+"\n" {
		t.Errorf("start stdin %q", got)
	}
	h = r.station(t, "c", `{"state":"started","unit":"u1","resultFile":"/r/s3.json","session_id":"s3"}`+"\n", 0)
	sr, err = h.Start(context.Background(), headless.StartRequest{Prompt: "p", Systemd: true})
	if err != nil || sr.Detached == nil || sr.Detached.Unit != "u1" || sr.File != nil {
		t.Errorf("start --systemd: %+v %v", sr, err)
	}

	h = r.station(t, "d", `[{"ts":"t","child_host":null,"child_session":"c1","parent_session":"p1","parent_host":null,"by":"parent"}]`+"\n", 0)
	links, err := h.Lineage(context.Background())
	if err != nil || len(links) != 1 || links[0].ChildSession != "c1" {
		t.Errorf("lineage: %+v %v", links, err)
	}
	if got := r.read(t, "d", "args"); got != "lineage\nshow\n--json\n" {
		t.Errorf("lineage args %q", got)
	}

	h = r.station(t, "e", `{"kind":"send","class":"delivered-steer","msg_id":"m 1","seen":true}`+"\n", 0)
	row, err := h.Receipt(context.Background(), "m 1")
	if err != nil || !strings.Contains(string(row), `"seen":true`) {
		t.Errorf("receipt: %s %v", row, err)
	}
	if got := r.read(t, "e", "args"); got != "receipt\n--json\n--\nm 1\n" {
		t.Errorf("receipt args %q", got)
	}
	h = r.station(t, "f", "", 1)
	if err := os.WriteFile(filepath.Join(r.root, "f", "go", "bin", "oo-claude"), []byte("#!/bin/sh\necho 'oo-claude: no receipt in x names msg_id \"m\"' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Receipt(context.Background(), "m"); !errors.Is(err, receipt.ErrNotFound) {
		t.Errorf("no receipt: %v, want receipt.ErrNotFound", err)
	}
	if _, err := (fleet.Host{Dest: "down", SSH: r.ssh}).Lineage(context.Background()); !errors.Is(err, fleet.ErrSSH) {
		t.Errorf("down: %v", err)
	}
}

// TestSplitTarget: STATION/SESSION across a merged view, the station one
// of its destinations; anything else is not split.
func TestSplitTarget(t *testing.T) {
	dests := []string{"a", "u@b", "ssh://u@c:2222", "ssh://u@c:2222/x"}
	for _, c := range []struct{ target, dest, session string }{
		{"a/8f0c5b8e", "a", "8f0c5b8e"},
		{"u@b/work-e9", "u@b", "work-e9"},
		{"a/feat/x", "a", "feat/x"},
		{"ssh://u@c:2222/1234", "ssh://u@c:2222", "1234"},
		{"ssh://u@c:2222/x/y", "ssh://u@c:2222/x", "y"},
		{"b/work", "", ""},
		{"a/", "", ""},
		{"a", "", ""},
		{"work-e9", "", ""},
	} {
		d, s, ok := fleet.SplitTarget(dests, c.target)
		if d != c.dest || s != c.session || ok != (c.dest != "") {
			t.Errorf("SplitTarget(%q) = %q, %q, %v; want %q, %q", c.target, d, s, ok, c.dest, c.session)
		}
	}
}

// NewHosts shares one connection per destination through a control path in
// a private directory of its own, which done removes; an ssh command line
// that names its own control options keeps them.
func TestNewHosts(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	hosts, done, err := fleet.NewHosts([]string{"a", "u@b"}, []string{"ssh", "-p", "2222"}, "/opt/oo-claude")
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 2 || hosts[0].Dest != "a" || hosts[1].Dest != "u@b" || hosts[1].RemoteBin != "/opt/oo-claude" || hosts[0].SSH[2] != "2222" {
		t.Fatalf("hosts = %+v", hosts)
	}
	dir := filepath.Dir(hosts[0].ControlPath)
	if filepath.Base(hosts[0].ControlPath) != "%C" || hosts[1].ControlPath != hosts[0].ControlPath {
		t.Errorf("control paths %q, %q; want one %%C in a directory of the run", hosts[0].ControlPath, hosts[1].ControlPath)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("control directory %s: %v, %v; want a 0700 directory", dir, fi, err)
	}
	done()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after done, the control directory: %v; want it gone", err)
	}

	own, done, err := fleet.NewHosts([]string{"a"}, []string{"ssh", "-o", "ControlPath=/x/%C"}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if own[0].ControlPath != "" {
		t.Errorf("with the command line's own control path: %q; want none of ours", own[0].ControlPath)
	}
}

// TestNewHostsLongTMPDIR: under a TMPDIR too long for a control socket in
// it (ssh binds %C, 40 hex digits, and a 17-character suffix), the
// control directory is a short private one elsewhere, where the socket
// ssh binds fits; done removes it.
func TestNewHostsLongTMPDIR(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("x", 60))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	hosts, done, err := fleet.NewHosts([]string{"a"}, []string{"ssh"}, "")
	if err != nil {
		t.Fatal(err)
	}
	cp := hosts[0].ControlPath
	if cp == "" {
		done()
		t.Fatal("no control path: /tmp can hold one")
	}
	// The path a master binds first: %C expanded, then "." and 16 more.
	sock := strings.Replace(cp, "%C", strings.Repeat("c", 40), 1) + ".0123456789abcdef"
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Errorf("binding ssh's socket path %s (%d bytes): %v", sock, len(sock), err)
	} else {
		l.Close()
	}
	dir := filepath.Dir(cp)
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
		t.Errorf("control directory %s: %v, %v; want a 0700 directory of ours", dir, fi, err)
	}
	done()
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after done, the control directory: %v; want it gone", err)
	}
}

// TestSendCancelled: a send that ctx ends while the station is silent
// (its remote verb waits) is an SSHError matching ctx.Err(), as Run's is.
func TestSendCancelled(t *testing.T) {
	r := newRig(t)
	h := r.station(t, "a", "", 0)
	if err := os.WriteFile(filepath.Join(r.root, "a", "go", "bin", "oo-claude"), []byte("#!/bin/sh\ncat >/dev/null\nexec sleep 600\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := h.Send(ctx, fleet.SendRequest{Target: "x", Line: "hi"}, nil); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, fleet.ErrSSH) {
		t.Errorf("send past its deadline: %v, want an SSHError matching context.DeadlineExceeded", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if _, err := h.Send(ctx, fleet.SendRequest{Target: "x", Line: "hi"}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled send: %v, want it to match context.Canceled", err)
	}
}

// TestLivenessOptions: a call bounds a station that never answers
// (ConnectTimeout) and one that stops answering (ServerAliveInterval)
// unless the configuration in effect (ssh -G: the command line's options,
// then ~/.ssh/config) sets its own, which then wins.
func TestLivenessOptions(t *testing.T) {
	dir := t.TempDir()
	ssh := filepath.Join(dir, "ssh")
	// -G prints the file named by the destination; a call records its
	// arguments there.
	script := `#!/bin/sh
for a; do last=$a; done
for a; do if [ "$a" = -G ]; then cat "` + dir + `/$last.G"; exit 0; fi; done
printf '%s\n' "$@" > "` + dir + `/args"
`
	if err := os.WriteFile(ssh, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dest, config string
		want, not    []string
	}{
		{"defaults", "user u\nconnecttimeout none\nserveraliveinterval 0\nserveralivecountmax 3\n", []string{"ConnectTimeout=10", "ServerAliveInterval=5"}, nil},
		{"configured", "connecttimeout 30\nserveraliveinterval 15\nserveralivecountmax 4\n", nil, []string{"ConnectTimeout", "ServerAlive"}},
		{"one set", "connecttimeout 3\nserveraliveinterval 0\n", []string{"ServerAliveInterval=5"}, []string{"ConnectTimeout"}},
	} {
		if err := os.WriteFile(filepath.Join(dir, c.dest+".G"), []byte(c.config), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := (fleet.Host{Dest: c.dest, SSH: []string{ssh}}).Run(context.Background(), []string{"sessions"}, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "args"))
		if err != nil {
			t.Fatal(err)
		}
		args := string(b)
		for _, w := range c.want {
			if !strings.Contains(args, w) {
				t.Errorf("%s: args %q, want %s", c.dest, args, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(args, n) {
				t.Errorf("%s: args %q, want no %s of ours", c.dest, args, n)
			}
		}
	}
}

// TestWatchLongLine: a line of a station's stream over the 1 MiB bound is
// a warning event and skipped; the station's events after it still come.
func TestWatchLongLine(t *testing.T) {
	r := newRig(t)
	ev := func(sid string) string { return `{"event":"session-started","ts":"t","session":"` + sid + `"}` + "\n" }
	out := ev("s1") + `{"event":"turn-ended","text":"` + strings.Repeat("x", 2<<20) + `"}` + "\n" + ev("s2")
	hosts := []fleet.Host{r.station(t, "a", out, 0)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var seq []string
	for e := range fleet.Watch(ctx, hosts, fleet.WatchOptions{Backoff: time.Hour}) {
		seq = append(seq, string(e.Event)+" "+e.Session)
		if e.Event == fleet.EventStationLost {
			cancel()
		}
	}
	if want := "session-started s1,warning ,session-started s2," + fleet.EventStationLost + " "; strings.Join(seq, ",") != want {
		t.Errorf("events %q, want %q", seq, want)
	}
}
