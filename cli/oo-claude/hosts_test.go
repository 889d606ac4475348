package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakestation"
)

// fakeSSHScript runs the remote command with sh here, in an environment of
// its own as sshd gives one (HOME, PATH, nothing of the caller's knobs):
// the station's knobs come from its station file alone. "down" is an
// unreachable host (exit 255).
const fakeSSHScript = `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in --) shift; break;; -o) shift 2;; *) shift;; esac; done
dest=$1; shift
case "$dest" in down) echo "ssh: connect to host down port 22: Connection refused" >&2; exit 255;; esac
exec env -i HOME="$FAKE_SSH_ROOT/$dest" PATH=/usr/bin:/bin OO_CLAUDE_TEST_AS_BINARY=1 sh -c "$1"
`

// sshStations makes a fake ssh and, for each name, a station reached
// through it whose only knobs are in its station file.
func sshStations(t *testing.T, names ...string) (env []string, st map[string]*fakestation.Station) {
	t.Helper()
	root := t.TempDir()
	ssh := filepath.Join(root, "ssh")
	if err := os.WriteFile(ssh, []byte(fakeSSHScript), 0o700); err != nil {
		t.Fatal(err)
	}
	st = map[string]*fakestation.Station{}
	for _, n := range names {
		fs := fakestation.New(t)
		st[n] = fs
		home := filepath.Join(root, n)
		body := "OO_CLAUDE_STATION=" + n + "-station\nOO_CLAUDE_MIN_INTERVAL_S=0\n"
		for _, kv := range fs.Env()[1:] {
			body += kv + "\n"
		}
		writeStationFile(t, home, body)
	}
	return []string{"HOME=" + t.TempDir(), "FAKE_SSH_ROOT=" + root, "OO_CLAUDE_SSH=" + ssh + " -F /dev/null", "OO_CLAUDE_REMOTE_BIN=" + binary(t)}, st
}

// TestHostsMergedSessions: sessions --host a --host b --host down is one
// document: each session carries its station, the down station is listed
// with its error, never dropped, and the exit is ssh's own (255); a
// station that answered with an error instead (its station file has a bad
// knob) is listed the same way, exit 1.
func TestHostsMergedSessions(t *testing.T) {
	t.Parallel()
	env, st := sshStations(t, "a", "b", "bad")
	writeStationFile(t, filepath.Join(strings.TrimPrefix(env[1], "FAKE_SSH_ROOT="), "bad"), "OO_CLAUDE_WAIT_S=soon\n")
	ra := st["a"].AddSession(fakestation.Session{Name: "alpha-a1"})
	rb := st["b"].AddSession(fakestation.Session{Name: "beta-b2"})
	r := runBinary(t, env, "", "sessions", "--json", "--host", "a", "--host", "b", "--host", "down")
	if r.code != 255 || !strings.Contains(r.stderr, "Connection refused") {
		t.Errorf("exit %d stderr %q, want 255 with the down station's error", r.code, r.stderr)
	}
	var doc struct {
		Sessions []struct{ Session, Station string }     `json:"sessions"`
		Stations []struct{ Station, Name, Error string } `json:"stations"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(doc.Sessions) != 2 || doc.Sessions[0].Session != ra.SessionID || doc.Sessions[0].Station != "a" || doc.Sessions[1].Session != rb.SessionID || doc.Sessions[1].Station != "b" {
		t.Errorf("sessions %+v", doc.Sessions)
	}
	if len(doc.Stations) != 3 || doc.Stations[0].Name != "a-station" || doc.Stations[2].Station != "down" || doc.Stations[2].Error == "" {
		t.Errorf("stations %+v", doc.Stations)
	}
	r = runBinary(t, env, "", "sessions", "--json", "--host", "a", "--host", "bad")
	if r.code != 1 || !strings.Contains(r.stderr, "OO_CLAUDE_WAIT_S") || !strings.Contains(r.stdout, ra.SessionID) {
		t.Errorf("a station answering with an error: exit %d stdout %q stderr %q, want 1, the error, a's session", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, env, "", "riders", "--host", "down")
	if r.code != 255 {
		t.Errorf("riders --host down: exit %d stderr %q, want 255", r.code, r.stderr)
	}
}

// TestHostsSendByteExact: send --host with the line on stdin arrives in the
// remote station's inbox byte-exact (quotes, $, ;, backticks, non-ASCII:
// no remote shell touched it), the class's exit code passes through, and
// ssh's own failure is exit 255, never a class.
func TestHostsSendByteExact(t *testing.T) {
	t.Parallel()
	env, st := sshStations(t, "a")
	sid := "8f0c5b8e-3a55-4d7e-9a7e-2d2b8f1e6a10"
	line := "it's \"$HOME\"; `id` $(id) — naïve ✓"
	r := runBinary(t, env, line, "send", "--host", "a", "--no-tag", "--expect-start", "--json", sid, "-")
	if r.code != 3 || !strings.Contains(r.stdout, `"class":"queued-offline"`) || !strings.Contains(r.stdout, `"station":"a-station"`) {
		t.Fatalf("exit %d stdout %s stderr %s, want queued-offline (3) from a-station", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(st["a"].Paths.InboxDir, sid+".inbox"))
	if err != nil || string(b) != line+"\n" {
		t.Errorf("remote inbox %q %v, want %q", b, err, line+"\n")
	}
	r = runBinary(t, env, "", "send", "--host", "down", sid, "hi")
	if r.code != 255 || !strings.Contains(r.stderr, "ssh-failed") || strings.Contains(r.stdout, "class") {
		t.Errorf("down: exit %d stdout %q stderr %q, want 255 ssh-failed", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, env, "", "receipt", "--host", "a", "--json", "nope")
	if r.code != 1 || !strings.Contains(r.stderr, "nope") {
		t.Errorf("remote receipt: exit %d %q", r.code, r.stderr)
	}
}

// TestHostsHeadlessVerbs: start, resume and lineage show with --host run
// on the station: the prompt and the line travel on stdin and arrive
// byte-exact (quotes, $, ;, backticks: no remote shell touched them),
// --cwd is the station's path as given, the rows come back with their
// exit codes, ssh's failure is exit 255.
func TestHostsHeadlessVerbs(t *testing.T) {
	t.Parallel()
	fk := fakeclaude.Install(t)
	fk.Script(fakeclaude.Script{Result: "READY"})
	env, st := sshStations(t, "a")
	home := filepath.Join(strings.TrimPrefix(env[1], "FAKE_SSH_ROOT="), "a")
	f, err := os.OpenFile(filepath.Join(home, ".config", "oo-claude", "station.env"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("OO_CLAUDE_BIN=" + fk.Claude + "\n")
	f.Close()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// No --session-id: the fake claude is this test binary, as the local
	// oo-claude is, whose command line would then name the session.
	prompt := "it's \"$HOME\"; `id` $(id) — naïve ✓"
	r := runBinary(t, env, prompt, "start", "--host", "a", "--json", "--cwd", cwd, "--no-doorman", "--no-lineage", "-")
	var file struct {
		State, Result string
		SessionID     string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &file); err != nil || r.code != 0 || file.State != "completed" || file.Result != "READY" {
		t.Fatalf("start --host: exit %d %v stdout %s stderr %s", r.code, err, r.stdout, r.stderr)
	}
	sid := file.SessionID
	calls := fk.Calls("claude")
	if len(calls) != 1 || calls[0].Dir != cwd || !slices.Contains(calls[0].Args, prompt) {
		t.Fatalf("claude calls %+v, want one in %s with the prompt as one argument", calls, cwd)
	}

	tr := &hlRig{fs: st["a"], cwd: cwd}
	tr.transcriptFor(t, sid) // the fake claude writes none
	line := "also: `rm -rf $HOME`; 'quoted' \\n"
	r = runBinary(t, env, line, "resume", "--host", "a", "--json", sid, "-")
	var row struct {
		Class, Line string
		SessionID   string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &row); err != nil || r.code != 0 || row.Class != "delivered-resume" || row.SessionID != sid || row.Line != line {
		t.Fatalf("resume --host: exit %d %+v %v stdout %s stderr %s", r.code, row, err, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(st["a"].Paths.ReceiptsFile())
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var last map[string]any
	if json.Unmarshal([]byte(lines[len(lines)-1]), &last); last["line"] != line {
		t.Errorf("the station's resume receipt %v, want the line %q byte-exact", last, line)
	}
	r = runBinary(t, env, "", "resume", "--host", "a", "--json", uuid.NewString(), "hi")
	if r.code != 1 || !strings.Contains(r.stdout, `"class":"refused"`) {
		t.Errorf("resume of an unknown session: exit %d %s %s, want refused (1) from the station", r.code, r.stdout, r.stderr)
	}

	r = runBinary(t, env, "", "lineage", "show", "--host", "a", "--json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("lineage show --host: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"lineage", "show", "--host", "down"}, {"start", "--host", "down", "hi"}, {"resume", "--host", "down", sid, "hi"}} {
		if r := runBinary(t, env, "", args...); r.code != 255 || !strings.Contains(r.stderr, "ssh-failed") {
			t.Errorf("%v: exit %d %q, want 255 ssh-failed", args, r.code, r.stderr)
		}
	}
}

// TestHostsStationSlashSession: across a merged view (--host a --host b)
// a target is STATION/SESSION, STATION one of the destinations: the line
// goes to that station alone; with several --host a target without its
// station is a usage error, never a guess; with one --host its own prefix
// is dropped.
func TestHostsStationSlashSession(t *testing.T) {
	t.Parallel()
	env, st := sshStations(t, "a", "b")
	st["a"].AddSession(fakestation.Session{Name: "same"})
	rb := st["b"].AddSession(fakestation.Session{Name: "same"})
	r := runBinary(t, env, "to b", "send", "--host", "a", "--host", "b", "--json", "--no-tag", "b/same", "-")
	if !strings.Contains(r.stdout, `"station":"b-station"`) || !strings.Contains(r.stdout, rb.SessionID) {
		t.Fatalf("send b/same: exit %d %s %s, want b's session", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(st["b"].InboxPath(rb.SessionID)); err != nil || string(b) != "to b\n" {
		t.Errorf("b's inbox %q %v", b, err)
	}
	if ents, _ := os.ReadDir(st["a"].Paths.InboxDir); len(ents) != 0 {
		t.Errorf("station a got %v", ents)
	}
	r = runBinary(t, env, "", "send", "--host", "a", "--host", "b", "same", "x")
	if r.code != 2 || !strings.Contains(r.stderr, "STATION/SESSION") {
		t.Errorf("several --host, no station: exit %d %q, want a usage error", r.code, r.stderr)
	}
	r = runBinary(t, env, "again", "send", "--host", "b", "--json", "--no-tag", "b/"+rb.SessionID, "-")
	if !strings.Contains(r.stdout, `"station":"b-station"`) {
		t.Errorf("send --host b b/SID: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, env, "", "riders", "--host", "a", "--host", "b", "--json", "c/same")
	if r.code != 2 {
		t.Errorf("riders c/same with --host a --host b: exit %d %q, want a usage error", r.code, r.stderr)
	}
}

// TestIsDest: --host takes the ssh destinations README names and refuses
// what is none (a usage error before ssh runs, not ssh's usage text and
// exit 255).
func TestIsDest(t *testing.T) {
	for _, v := range []string{"build1", "me@build1", "ssh://build1", "ssh://me@build1", "ssh://build1:2222", "ssh://me@[::1]:22", "ssh://[fe80::1]", "10.0.0.7", "my-alias.example"} {
		if !isDest(v) {
			t.Errorf("isDest(%q) = false, want true", v)
		}
	}
	for _, v := range []string{"", "-oProxyCommand=x", "ssh://", "ssh://:22", "ssh://host:abc", "ssh://host:99999", "ssh://host:0", "ssh://host:", "@host", "ssh://@", "ssh://@host", "me@", "a b", "a\tb", "ssh://a/-oX", "ssh://-oX", "me@-oX", "a@b@c", "ssh://[::1", "ssh://[]:22", "ssh://[::1]x", "ssh://host:022"} {
		if isDest(v) {
			t.Errorf("isDest(%q) = true, want false", v)
		}
	}
	r := runInProcess(t, func(string) string { return "" }, "", "send", "work-e9", "hi", "--host", "ssh://")
	if r.code != exitUsage || !strings.Contains(r.stderr, "is not an ssh destination") {
		t.Errorf("send --host ssh://: exit %d stderr %q, want 2", r.code, r.stderr)
	}
}

// scriptedSSHScript is an ssh that reaches no station: it reads stdin,
// prints $FAKE_SSH_OUT and $FAKE_SSH_ERR, touches $FAKE_SSH_MARK, then
// with $FAKE_SSH_HANG waits for good, else exits $FAKE_SSH_EXIT: what a
// station's end printed and how it ended (255: ssh's own failure, a
// dropped connection). A control command (-O exit) and a look at the
// configuration (-G) end at once.
const scriptedSSHScript = `#!/bin/sh
for a; do case "$a" in -O|-G) exit 0;; esac; done
cat >/dev/null
printf '%s' "$FAKE_SSH_OUT"
printf '%s' "$FAKE_SSH_ERR" >&2
if [ -n "$FAKE_SSH_MARK" ]; then : > "$FAKE_SSH_MARK"; fi
if [ -n "$FAKE_SSH_HANG" ]; then exec sleep 600; fi
exit "${FAKE_SSH_EXIT:-0}"
`

// scriptedSSH is the environment of an oo-claude whose ssh is
// scriptedSSHScript.
func scriptedSSH(t *testing.T) []string {
	t.Helper()
	ssh := filepath.Join(t.TempDir(), "ssh")
	if err := os.WriteFile(ssh, []byte(scriptedSSHScript), 0o700); err != nil {
		t.Fatal(err)
	}
	return []string{"HOME=" + t.TempDir(), "OO_CLAUDE_SSH=" + ssh}
}

// TestHostsSendNoVerdict: a station's send that ran but printed no
// verdict row (a banner, an older oo-claude's usage error, no oo-claude
// there, a crash) is not ssh's failure: never 255 or ssh-failed; a usage
// error there stays 2, anything else is 1, with what is known of the line.
func TestHostsSendNoVerdict(t *testing.T) {
	t.Parallel()
	env := scriptedSSH(t)
	for _, c := range []struct {
		name, out, errs, exit string
		code                  int
		says                  string
	}{
		{"a banner, no row", "Welcome to build1\n", "", "0", 1, "printed no verdict row"},
		{"an older oo-claude", "", "oo-claude: flag provided but not defined: -expect-start\n", "2", 2, "refused the command line"},
		{"no oo-claude there", "", "sh: 1: exec: /opt/oo-claude: not found\n", "127", 1, "OO_CLAUDE_REMOTE_BIN"},
		{"a crash", "", "fatal error: out of memory\n", "4", 1, "known only there"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runBinary(t, append(env, "FAKE_SSH_OUT="+c.out, "FAKE_SSH_ERR="+c.errs, "FAKE_SSH_EXIT="+c.exit), "", "send", "--host", "a", "--json", "work", "hi")
			if r.code != c.code || strings.Contains(r.stderr, "ssh-failed") || !strings.Contains(r.stderr, c.says) || r.stdout != "" {
				t.Errorf("exit %d stdout %q stderr %q, want %d saying %q, no ssh-failed", r.code, r.stdout, r.stderr, c.code, c.says)
			}
		})
	}
	env, _ = sshStations(t, "a")
	r := runBinary(t, append(env, "OO_CLAUDE_REMOTE_BIN=/nonexistent/oo-claude"), "", "send", "--host", "a", "work", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "OO_CLAUDE_REMOTE_BIN") {
		t.Errorf("no remote oo-claude: exit %d stderr %q, want 1 naming OO_CLAUDE_REMOTE_BIN", r.code, r.stderr)
	}
}

// TestHostsSendDropAfterVerdict: a connection that drops (ssh exit 255)
// after the station printed its verdict row keeps that verdict: the row
// is printed, the exit code is its class's, a note says the connection
// dropped after it; after an ack row alone the line is known delivered
// and the receipt command says where its verdict is, exit 255.
func TestHostsSendDropAfterVerdict(t *testing.T) {
	t.Parallel()
	env := scriptedSSH(t)
	const (
		ack      = `{"kind":"send","class":"delivered-steer","delivered":true,"session_id":"s1","msg_id":"m1","seen":null}` + "\n"
		seen     = `{"kind":"send","class":"delivered-steer","delivered":true,"session_id":"s1","msg_id":"m1","seen":true}` + "\n"
		queued   = `{"kind":"send","class":"queued-offline","delivered":false,"session_id":"s1"}` + "\n"
		dropNote = "dropped after the station's verdict"
	)
	for _, c := range []struct {
		name, out  string
		args       []string
		code       int
		rows       int    // the lines on stdout
		stdout     string // in the last of them
		stderrSays string
	}{
		{"delivered", ack, []string{"--json"}, 0, 1, `"msg_id":"m1"`, dropNote},
		{"queued", queued, []string{"--json"}, 3, 1, `"class":"queued-offline"`, dropNote},
		{"human", ack, nil, 0, 1, "delivered-steer s1", dropNote},
		{"seen", ack + seen, []string{"--json", "--seen", "10"}, 0, 2, `"seen":true`, dropNote},
		{"ack alone", ack, []string{"--json", "--seen", "10"}, 255, 1, `"seen":null`, "oo-claude receipt m1 --host a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"send", "--host", "a"}, c.args...), "s1", "hi")
			r := runBinary(t, append(env, "FAKE_SSH_OUT="+c.out, "FAKE_SSH_ERR=Connection to a closed by remote host.\n", "FAKE_SSH_EXIT=255"), "", args...)
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if r.code != c.code || len(lines) != c.rows || !strings.Contains(lines[len(lines)-1], c.stdout) || !strings.Contains(r.stderr, c.stderrSays) {
				t.Errorf("exit %d stdout %q stderr %q, want %d, %d lines, the last with %q, saying %q", r.code, r.stdout, r.stderr, c.code, c.rows, c.stdout, c.stderrSays)
			}
		})
	}
}

// TestHostsSendSignal: SIGINT or SIGTERM while send --host waits on a
// station that has not answered (the ack wait there) exits 130 or 143,
// as the local send's interrupted does, never 255 ssh-failed; the note
// says the line's fate is the station's, naming its receipt command when
// the ack row had come (--seen).
func TestHostsSendSignal(t *testing.T) {
	t.Parallel()
	const ack = `{"kind":"send","class":"delivered-steer","delivered":true,"session_id":"s1","msg_id":"m1","seen":null}` + "\n"
	for _, c := range []struct {
		name, out string
		args      []string
		sig       syscall.Signal
		code      int
		says      string
	}{
		{"SIGINT, no ack", "", nil, syscall.SIGINT, 130, "known only on a"},
		{"SIGTERM, no ack", "", []string{"--json"}, syscall.SIGTERM, 143, "known only on a"},
		{"SIGINT, acked", ack, []string{"--json", "--seen", "60"}, syscall.SIGINT, 130, "oo-claude receipt m1 --host a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mark := filepath.Join(t.TempDir(), "mark")
			env := append(scriptedSSH(t), "FAKE_SSH_OUT="+c.out, "FAKE_SSH_MARK="+mark, "FAKE_SSH_HANG=1")
			cmd, _, errb := startSend(t, env, append(append([]string{"send", "--host", "a"}, c.args...), "s1", "hi")...)
			waitUntil(t, "ssh started", func() bool { _, err := os.Stat(mark); return err == nil })
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			if code := exitOf(t, cmd); code != c.code || strings.Contains(errb.String(), "ssh-failed") || !strings.Contains(errb.String(), c.says) {
				t.Errorf("exit %d stderr %q, want %d saying %q, no ssh-failed", code, errb.String(), c.code, c.says)
			}
		})
	}
}
