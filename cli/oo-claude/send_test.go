package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/internal/version"
	"github.com/oo-family/oo-claude/station"
)

// testToken stands for CLAUDE_CODE_MESSAGING_TOKEN: every send runs with it
// in its environment and it must appear nowhere.
const testToken = "70ce11a9d0000000000000000000beef"

var v01SendKeys = strings.Split("ts, ts_ms, kind, class, delivered, target, session_id, name, pid, running, status, from, line, sha256, bytes, inbox, line_offset, doorman, ack, peer_status, msg_id, waited_s, wait_s, min_interval_s, reason, note, hint, client_version", ", ")

// ourSendKeys are oo-claude's additions to the send row (send --seen).
var ourSendKeys = []string{"seen", "seen_s", "transcript", "transcript_offset", "reply", "reply_s", "priority", "confirm", "queued_at", "wait_end", "interrupted", "station"}

// sendEnv is the environment of a send through the binary: the station's,
// the token, no throttle, and an ack wait of 30 s instead of the default 5 s
// (the fake doorman acks at once, but a loaded machine's missed 5 s; a
// test of a timeout passes --wait). extra comes last and wins.
func sendEnv(fs *fakestation.Station, extra ...string) []string {
	return append(append(fs.Env(), "CLAUDE_CODE_MESSAGING_TOKEN="+testToken, "OO_CLAUDE_MIN_INTERVAL_S=0", "OO_CLAUDE_WAIT_S=30"), extra...)
}

// sleeper starts a process that lives until the test ends: a second live
// pid for a second running session.
func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

func jsonRow(t *testing.T, stdout string) map[string]json.RawMessage {
	t.Helper()
	if strings.Count(stdout, "\n") != 1 {
		t.Fatalf("--json printed %d lines: %q", strings.Count(stdout, "\n"), stdout)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	return m
}

// verdictRow is the last row of a send --json --seen/--reply: with a
// delivered class, the ack row comes first (printed as soon as the ack was
// known: class delivered, seen and reply null, the same msg_id), each a
// complete JSON line; otherwise the verdict is the only row.
func verdictRow(t *testing.T, stdout string, delivered bool) map[string]json.RawMessage {
	t.Helper()
	lines := strings.SplitAfter(stdout, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if !delivered {
		return jsonRow(t, stdout)
	}
	if len(lines) != 2 {
		t.Fatalf("--json printed %d lines, want the ack row and the verdict: %q", len(lines), stdout)
	}
	ack, final := jsonRow(t, lines[0]), jsonRow(t, lines[1])
	var class string
	json.Unmarshal(ack["class"], &class)
	if !strings.HasPrefix(class, "delivered-") || string(ack["seen"]) != "null" || string(ack["reply"]) != "null" || string(ack["msg_id"]) != string(final["msg_id"]) || string(ack["class"]) != string(final["class"]) {
		t.Errorf("ack row class %s seen %s reply %s msg_id %s, want the delivery before the wait (final msg_id %s)", ack["class"], ack["seen"], ack["reply"], ack["msg_id"], final["msg_id"])
	}
	return final
}

// lastLine is s's last line, without its newline.
func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func keySet(m map[string]json.RawMessage) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

func assertNoToken(t *testing.T, root string, outputs ...string) {
	t.Helper()
	for _, o := range outputs {
		if strings.Contains(o, testToken) {
			t.Errorf("the token appears in the output")
		}
	}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), testToken) {
				t.Errorf("%s holds the token", strings.TrimPrefix(path, root))
			}
		}
		return nil
	})
}

// TestSendBinary runs every class through the binary: exit code, the
// human line, the --json row with every v0.1 key, the file, no token.
func TestSendBinary(t *testing.T) {
	t.Parallel()
	type setup func(t *testing.T, fs *fakestation.Station) (args []string)
	running := func(o *fakedoorman.Options, line string, flags ...string) setup {
		return func(t *testing.T, fs *fakestation.Station) []string {
			r := fs.AddSession(fakestation.Session{Name: "work-e9"})
			if o != nil {
				fakedoorman.Start(t, fs.Paths.InboxDir, r.SessionID, *o)
			}
			return append([]string{r.SessionID, line}, flags...)
		}
	}
	tests := []struct {
		name    string
		setup   setup
		class   claudeinbox.Class
		code    int
		reason  string
		written int // lines in the inbox afterwards
		human   string
	}{
		{"newline", running(nil, "a\nb"), claudeinbox.Refused, 1, "newline", 0, `^refused "[0-9a-f-]{36}" \(newline\)$`},
		{"16 KiB + 1", running(nil, strings.Repeat("x", inboxv1.MaxLineBytes+1), "--no-tag"), claudeinbox.Refused, 1, "too-long", 0, ``},
		{"empty", running(nil, ""), claudeinbox.Refused, 1, "empty", 0, ``},
		{"invalid UTF-8", running(nil, "a\xffb"), claudeinbox.Refused, 1, "invalid-utf8", 0, ``},
		{"bad from", running(nil, "hi", "--from", "a]b"), claudeinbox.Refused, 1, "bad-from", 0, ``},
		{"ambiguous fragment", func(t *testing.T, fs *fakestation.Station) []string {
			fs.AddSession(fakestation.Session{Name: "proj-alpha-1"})
			fs.AddSession(fakestation.Session{PID: sleeper(t), Name: "proj-alpha-2"})
			return []string{"alpha", "hi"}
		}, claudeinbox.Refused, 1, "ambiguous-target", 0, `^refused "alpha" \(ambiguous-target\)$`},
		{"unknown name", func(t *testing.T, fs *fakestation.Station) []string {
			return []string{"nobody-here", "hi"}
		}, claudeinbox.Refused, 1, "unknown-target", 0, ``},
		{"offline full id", func(t *testing.T, fs *fakestation.Station) []string {
			return []string{offline(fs), "wake up"}
		}, claudeinbox.QueuedOffline, 3, "", 1, `^queued-offline [0-9a-f]{8}… line_offset=0$`},
		// A full id with one wrong character was queued-offline for good.
		{"full id nobody has", func(t *testing.T, fs *fakestation.Station) []string {
			sid := offline(fs)
			return []string{sid[:35] + map[bool]string{true: "1", false: "0"}[sid[35] == '0'], "wake up"}
		}, claudeinbox.Refused, 1, "unknown-session", 0, `^refused [0-9a-f]{8}… \(unknown-session\)$`},
		{"full id nobody has, --expect-start", func(t *testing.T, fs *fakestation.Station) []string {
			return []string{"--expect-start", uuid.NewString(), "wake up"}
		}, claudeinbox.QueuedOffline, 3, "", 1, `^queued-offline [0-9a-f]{8}… line_offset=0$`},
		// OO_CLAUDE_INBOX_DIR differs from the doorman's: it was
		// queued-no-doorman into an inbox no doorman follows.
		{"doorman follows another inbox dir", func(t *testing.T, fs *fakestation.Station) []string {
			r := fs.AddSession(fakestation.Session{Name: "work-e9", DoormanInbox: filepath.Join(fs.Root, "their-inbox")})
			return []string{r.SessionID, "hi"}
		}, claudeinbox.Refused, 1, "inbox-dir-mismatch", 0, `^refused [0-9a-f]{8}… \(inbox-dir-mismatch\)$`},
		{"running, no heartbeat", running(nil, "hi"), claudeinbox.QueuedNoDoorman, 3, "missing", 1, `^queued-no-doorman [0-9a-f]{8}… line_offset=0 \(missing\)$`},
		{"stale heartbeat", running(&fakedoorman.Options{Stale: true}, "hi"), claudeinbox.QueuedNoDoorman, 3, "stale", 1, ``},
		{"heartbeat of another session", running(&fakedoorman.Options{HeartbeatSession: uuid.NewString()}, "hi"), claudeinbox.QueuedNoDoorman, 3, "other-session", 1, ``},
		{"stopped doorman", running(&fakedoorman.Options{State: inboxv1.StateStopped}, "hi"), claudeinbox.QueuedNoDoorman, 3, "state", 1, ``},
		{"dead doorman pid", running(&fakedoorman.Options{PID: fakedoorman.DeadPID()}, "hi"), claudeinbox.QueuedNoDoorman, 3, "pid-gone", 1, ``},
		{"fresh heartbeat, no ack", running(&fakedoorman.Options{NoAck: true}, "hi", "--wait", "0.3"), claudeinbox.Timeout, 5, "", 1, `^timeout [0-9a-f]{8}… line_offset=0 no ack after 0\.\ds$`},
		{"delivered-steer", running(&fakedoorman.Options{}, "hi"), claudeinbox.DeliveredSteer, 0, "", 1, `^delivered-steer [0-9a-f]{8}… msg_id=[0-9a-f-]{36} after \d+\.\ds$`},
		{"delivered-start", running(&fakedoorman.Options{PeerStatus: station.StatusIdle}, "hi"), claudeinbox.DeliveredStart, 0, "", 1, `^delivered-start `},
		{"doorman refuses", running(&fakedoorman.Options{Refuse: inboxv1.ReasonNUL}, "hi"), claudeinbox.Refused, 1, "nul", 1, ``},
		{"flags before the target", func(t *testing.T, fs *fakestation.Station) []string {
			return []string{"--from", "luna", "--no-tag", offline(fs), "--", "-starts with a dash?"}
		}, claudeinbox.QueuedOffline, 3, "", 1, ``},
		{"after --", func(t *testing.T, fs *fakestation.Station) []string {
			return []string{offline(fs), "--", "-x"}
		}, claudeinbox.QueuedOffline, 3, "", 1, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, asJSON := range []bool{false, true} {
				fs := fakestation.New(t)
				args := []string{"send"}
				if asJSON {
					args = append(args, "--json")
				}
				args = append(args, tt.setup(t, fs)...)
				r := runBinary(t, sendEnv(fs), "", args...)
				if r.code != tt.code {
					t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, r.code, tt.code, r.stdout, r.stderr)
				}
				var sid string
				if asJSON {
					row := jsonRow(t, r.stdout)
					if diff := cmp.Diff(sortedStrings(append(v01SendKeys, ourSendKeys...)), keySet(row)); diff != "" {
						t.Errorf("--json keys (-want +got):\n%s", diff)
					}
					var class, reason string
					json.Unmarshal(row["class"], &class)
					json.Unmarshal(row["reason"], &reason)
					json.Unmarshal(row["session_id"], &sid)
					if class != string(tt.class) || reason != tt.reason {
						t.Errorf("row class %q reason %q, want %q %q", class, reason, tt.class, tt.reason)
					}
					// The CLI puts its own version in; the library writes none.
					var client string
					if json.Unmarshal(row["client_version"], &client); client != version.Version {
						t.Errorf("row client_version %s, want %q", row["client_version"], version.Version)
					}
					// The printed row is the row in receipts.jsonl.
					rec := strings.TrimSpace(readOrEmpty(t, fs.Paths.ReceiptsFile()))
					if rec != strings.TrimSpace(r.stdout) {
						t.Errorf("receipt %s\n!= printed %s", rec, r.stdout)
					}
				} else {
					out := strings.TrimSuffix(r.stdout, "\n")
					if strings.Contains(out, "\n") || !strings.HasPrefix(out, string(tt.class)+" ") {
						t.Errorf("stdout %q is not one line starting with %s", r.stdout, tt.class)
					}
					if tt.human != "" && !regexp.MustCompile(tt.human).MatchString(out) {
						t.Errorf("stdout %q does not match %s", out, tt.human)
					}
					if !tt.class.Delivered() && !strings.Contains(r.stderr, "note: ") {
						t.Errorf("no note on stderr: %q", r.stderr)
					}
					if tt.class == claudeinbox.QueuedOffline && !strings.Contains(r.stderr, "hint: oo-claude resume ") {
						t.Errorf("no resume hint on stderr: %q", r.stderr)
					}
					if tt.reason == "unknown-session" && (!strings.Contains(r.stderr, "hint: oo-claude sessions\n") || !strings.Contains(r.stderr, "--expect-start")) {
						t.Errorf("no sessions hint or --expect-start on stderr: %q", r.stderr)
					}
					if tt.reason == "inbox-dir-mismatch" && (!strings.Contains(r.stderr, filepath.Join(fs.Root, "their-inbox")) || !strings.Contains(r.stderr, fs.Paths.InboxDir)) {
						t.Errorf("the note does not name both directories: %q", r.stderr)
					}
				}
				inbox := ""
				if ents, _ := os.ReadDir(fs.Paths.InboxDir); len(ents) > 0 {
					for _, e := range ents {
						if strings.HasSuffix(e.Name(), ".inbox") {
							inbox += readOrEmpty(t, filepath.Join(fs.Paths.InboxDir, e.Name()))
						}
					}
				}
				if n := strings.Count(inbox, "\n"); n != tt.written {
					t.Errorf("%d lines in the inboxes, want %d: %q", n, tt.written, inbox)
				}
				assertNoToken(t, fs.Root, r.stdout, r.stderr)
			}
		})
	}
}

// offline returns the id of a session that ran on the station and does
// not run now (its transcript is there).
func offline(fs *fakestation.Station) string {
	sid := uuid.NewString()
	fs.AddTranscript(sid, "")
	return sid
}

func sortedStrings(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func readOrEmpty(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func TestSendUsage(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	tests := []struct {
		name string
		args []string
		in   string
	}{
		{"no arguments", []string{"send"}, "needs a target and one line"},
		{"no line", []string{"send", uuid.NewString()}, "needs a target and one line"},
		{"three arguments", []string{"send", uuid.NewString(), "a", "b"}, "needs a target and one line"},
		{"bad wait", []string{"send", "--wait", "soon", uuid.NewString(), "x"}, "want seconds"},
		{"negative interval", []string{"send", uuid.NewString(), "x", "--min-interval", "-1"}, "want seconds"},
		{"unknown flag", []string{"send", uuid.NewString(), "x", "--loud"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runInProcess(t, fs.Getenv, "", tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.in) {
				t.Errorf("exit %d stderr %q, want 2 and %q", r.code, r.stderr, tt.in)
			}
		})
	}
	if r := runBinary(t, sendEnv(fs), "", "send"); r.code != 2 {
		t.Errorf("binary without arguments: exit %d", r.code)
	}
	// A bad knob is a usage error too.
	r := runBinary(t, sendEnv(fs, "OO_CLAUDE_WAIT_S=later"), "", "send", uuid.NewString(), "x")
	if r.code != 2 || !strings.Contains(r.stderr, "OO_CLAUDE_WAIT_S") {
		t.Errorf("bad knob: exit %d stderr %q", r.code, r.stderr)
	}
}

// The knobs set the defaults; flags override them.
func TestSendKnobs(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	sid := offline(fs)
	env := append(fs.Env(), "OO_CLAUDE_WAIT_S=1.5", "OO_CLAUDE_MIN_INTERVAL_S=45")
	row := jsonRow(t, runBinary(t, env, "", "send", sid, "x", "--json").stdout)
	if string(row["wait_s"]) != "1.5" || string(row["min_interval_s"]) != "45" {
		t.Errorf("knobs: wait_s %s min_interval_s %s", row["wait_s"], row["min_interval_s"])
	}
	r := runBinary(t, env, "", "send", sid, "y", "--json")
	if r.code != 6 {
		t.Fatalf("second line within 45 s: exit %d", r.code)
	}
	row = jsonRow(t, runBinary(t, env, "", "send", sid, "z", "--json", "--wait", "0", "--min-interval", "0").stdout)
	if string(row["wait_s"]) != "0" || string(row["min_interval_s"]) != "0" {
		t.Errorf("flags: wait_s %s min_interval_s %s", row["wait_s"], row["min_interval_s"])
	}
	if n := strings.Count(readOrEmpty(t, fs.InboxPath(sid)), "\n"); n != 2 {
		t.Errorf("%d lines, want 2 (the dropped one not written)", n)
	}
}

// 8 processes × 100 sends into one inbox, throttle off: every line whole,
// none lost, each receipt's line_offset right.
func TestSendProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("800 processes")
	}
	fs := fakestation.New(t)
	sid := offline(fs)
	const P, N = 8, 100
	var wg sync.WaitGroup
	errs := make(chan string, P*N)
	for p := 0; p < P; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < N; i++ {
				line := fmt.Sprintf("p%d i%03d %s", p, i, strings.Repeat("~", (p*N+i)%113))
				r := runBinary(t, sendEnv(fs), "", "send", sid, line, "--from", fmt.Sprint("proc", p), "--wait", "0", "--min-interval", "0", "--json")
				if r.code != 3 {
					errs <- fmt.Sprintf("p%d i%d: exit %d %s", p, i, r.code, r.stderr)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	inbox := readOrEmpty(t, fs.InboxPath(sid))
	lines := strings.Split(strings.TrimSuffix(inbox, "\n"), "\n")
	if len(lines) != P*N {
		t.Fatalf("%d lines, want %d", len(lines), P*N)
	}
	at := map[int64]string{}
	var off int64
	for _, l := range lines {
		at[off] = l
		off += int64(len(l)) + 1
	}
	f, err := os.Open(fs.Paths.ReceiptsFile())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	seen := map[int64]bool{}
	for sc.Scan() {
		var row struct {
			Line       string `json:"line"`
			LineOffset int64  `json:"line_offset"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if at[row.LineOffset] != row.Line || seen[row.LineOffset] {
			t.Fatalf("receipt says %q at %d; the inbox has %q there", row.Line, row.LineOffset, at[row.LineOffset])
		}
		seen[row.LineOffset] = true
		n++
	}
	if n != P*N {
		t.Errorf("%d receipts, want %d", n, P*N)
	}
}

// 8 processes per sender, two senders, at once, throttle on: exactly one
// line per (session, sender) is written; the others are dropped (exit 6).
func TestSendThrottleProcesses(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	sid := offline(fs)
	type res struct {
		from string
		code int
	}
	out := make(chan res, 16)
	start := make(chan struct{})
	for i := 0; i < 16; i++ {
		from := []string{"mama", "luna"}[i%2]
		go func() {
			<-start
			r := runBinary(t, append(fs.Env(), "OO_CLAUDE_MIN_INTERVAL_S=30"), "", "send", sid, fmt.Sprint("line ", i), "--from", from, "--wait", "0")
			out <- res{from, r.code}
		}()
	}
	close(start)
	codes := map[string][]int{}
	for i := 0; i < 16; i++ {
		r := <-out
		codes[r.from] = append(codes[r.from], r.code)
	}
	want := []int{3, 6, 6, 6, 6, 6, 6, 6}
	for from, c := range codes {
		sort.Ints(c)
		if diff := cmp.Diff(want, c); diff != "" {
			t.Errorf("%s exit codes (-want +got):\n%s", from, diff)
		}
	}
	if n := strings.Count(readOrEmpty(t, fs.InboxPath(sid)), "\n"); n != 2 {
		t.Errorf("%d lines written, want 2", n)
	}
}

func TestSendSymlinkedInbox(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	sid := offline(fs)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, nil, 0o600)
	if err := os.Symlink(victim, fs.InboxPath(sid)); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, sendEnv(fs), "", "send", sid, "x")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "refused ") || !strings.Contains(r.stderr, "symlink") {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(victim); len(b) != 0 {
		t.Errorf("written through the symlink: %q", b)
	}
}

// A receipts file that cannot be written: the verdict and exit code stand,
// the printed row carries receipt_write_error.
func TestSendReceiptWriteError(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	if err := os.Symlink(filepath.Join(t.TempDir(), "x"), fs.Paths.ReceiptsFile()); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, sendEnv(fs), "", "send", offline(fs), "x", "--json")
	row := jsonRow(t, r.stdout)
	if r.code != 3 || row["receipt_write_error"] == nil || !strings.Contains(r.stderr, "receipt not written") {
		t.Errorf("exit %d row %s stderr %q", r.code, r.stdout, r.stderr)
	}
}

// Send in-process too, so the race detector sees the CLI's own code.
func TestSendInProcess(t *testing.T) {
	fs := fakestation.New(t)
	row := fs.AddSession(fakestation.Session{Name: "work-e9"})
	fakedoorman.Start(t, fs.Paths.InboxDir, row.SessionID, fakedoorman.Options{})
	getenv := func(k string) string {
		if k == "OO_CLAUDE_WAIT_S" {
			return "60"
		}
		return fs.Getenv(k)
	}
	start := time.Now()
	r := runInProcess(t, getenv, "", "send", "work-e9", "hi", "--from", "luna")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "delivered-steer ") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	// The ack ends the wait: far sooner than the 60 s window (milliseconds;
	// the bound is generous for a loaded machine, where 2 s was too tight).
	if time.Since(start) > 30*time.Second {
		t.Errorf("slow: %v", time.Since(start))
	}
}

// absorbRows plays the session's Claude Code for --seen: once the doorman
// has acked a line, it appends to the session's transcript the
// queued_command row that carries the ack's msg_id (as Claude Code does when
// it absorbs the line into the running turn). With wrongID it writes a row
// with another msg_id instead. Rows in then follow each absorbed row (the
// model's answer). It is woken by each ack (no polling) and stops when the
// test ends. The rows come after the ack, racing the sender's wait: a test
// whose wait must not run out before them writes them with rowsBeforeAck.
func absorbRows(t *testing.T, d *fakedoorman.Doorman, transcript string, wrongID bool, then ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(transcript), 0o700); err != nil {
		t.Fatal(err)
	}
	write := absorbedRows(transcript, wrongID, then...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		written := 0
		for {
			if d.WaitAcked(ctx, written+1) != nil {
				return // the test ended, or the doorman stopped
			}
			f, err := os.Open(d.Files.Ack)
			if err != nil {
				continue
			}
			var ids []string
			inbox.ScanAcks(f, 0, func(a inboxv1.Ack, _ int64) bool {
				ids = append(ids, a.MsgID)
				return true
			})
			f.Close()
			for _, id := range ids[min(written, len(ids)):] {
				write(id)
			}
			written = max(written, len(ids))
		}
	}()
}

// rowsBeforeAck is absorbRows's rows as a fake doorman's BeforeAck: they
// are in the transcript before the ack, so the sender's seen wait finds
// them at its first read, however loaded the machine.
func rowsBeforeAck(t *testing.T, transcript string, then ...string) func(msgID string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(transcript), 0o700); err != nil {
		t.Fatal(err)
	}
	return absorbedRows(transcript, false, then...)
}

// absorbedRows returns what writes the rows of one absorbed line.
func absorbedRows(transcript string, wrongID bool, then ...string) func(msgID string) {
	return func(id string) {
		if wrongID {
			id = uuid.NewString()
		}
		row := `{"type":"attachment","attachment":{"type":"queued_command","prompt":"[e2e 📡] hi","origin":{"kind":"peer","from":"e2e","msg_id":"` + id + `"},"isMeta":true},"uuid":"` + uuid.NewString() + `"}` + "\n"
		for _, r := range then {
			row += r + "\n"
		}
		tf, err := os.OpenFile(transcript, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return
		}
		tf.WriteString(row)
		tf.Close()
	}
}

// TestSendSeenBinary: send --seen through the binary. A line whose msg_id
// the transcript shows is "seen" (stdout, receipt seen true, seen_s); one
// it does not show is "not seen within S" with a note, and still exits 0
// (the class's code); a line that was not delivered has nothing to prove
// (seen null) and keeps its class's code.
func TestSendSeenBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		doorman   *fakedoorman.Options
		absorb    bool // the "session" writes the row
		wrongID   bool
		seen      string
		code      int
		human     string
		noteFrag  string
		existing  bool // the transcript exists before the send
		wantClass claudeinbox.Class
	}{
		{"seen, transcript already there", &fakedoorman.Options{}, true, false, "true", 0, `^delivered-steer [0-9a-f]{8}… msg_id=[0-9a-f-]{36} after \d+\.\ds, seen after \d+\.\ds$`, "", true, claudeinbox.DeliveredSteer},
		{"seen, transcript created by the first row", &fakedoorman.Options{PeerStatus: station.StatusIdle}, true, false, "true", 0, `^delivered-start .*, seen after \d+\.\ds$`, "", false, claudeinbox.DeliveredStart},
		{"another msg_id only", &fakedoorman.Options{}, true, true, "false", 0, `^delivered-steer .*, not seen within 0\.6s$`, "note: not seen within 600ms", true, claudeinbox.DeliveredSteer},
		{"no row at all", &fakedoorman.Options{}, false, false, "false", 0, `, not seen within 0\.6s$`, "note: not seen within 600ms", false, claudeinbox.DeliveredSteer},
		{"no doorman: nothing to prove", nil, false, false, "null", 3, `^queued-no-doorman `, "note: no doorman heartbeat", false, claudeinbox.QueuedNoDoorman},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, asJSON := range []bool{false, true} {
				fs := fakestation.New(t)
				r := fs.AddSession(fakestation.Session{Name: "work-e9"})
				tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(r.CWD), r.SessionID+transcriptfile.Ext)
				if tt.existing {
					if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
						t.Fatal(err)
					}
					os.WriteFile(tp, []byte(`{"type":"user","message":{"role":"user","content":"work"}}`+"\n"), 0o600)
				}
				if tt.doorman != nil {
					d := fakedoorman.Start(t, fs.Paths.InboxDir, r.SessionID, *tt.doorman)
					if tt.absorb {
						absorbRows(t, d, tp, tt.wrongID)
					}
				}
				args := []string{"send", r.SessionID, "hi", "--seen", "0.6"}
				if tt.seen == "true" {
					args[len(args)-1] = "60"
				}
				if asJSON {
					args = append(args, "--json")
				}
				start := time.Now()
				// The ack's wait is generous: a loaded machine's fake
				// doorman missed the default 5 s.
				res := runBinary(t, sendEnv(fs, "OO_CLAUDE_WAIT_S=30"), "", args...)
				took := time.Since(start)
				t.Logf("%v: %v: %s", args[4:], took, res.stdout)
				if res.code != tt.code {
					t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, res.code, tt.code, res.stdout, res.stderr)
				}
				if tt.seen == "true" && took > 30*time.Second { // far sooner than the 60 s window; generous for a loaded machine
					t.Errorf("seen only after %v; the row was written within moments of the ack", took)
				}
				if !strings.Contains(res.stderr, tt.noteFrag) || (tt.noteFrag == "" && res.stderr != "") {
					t.Errorf("stderr %q, want %q", res.stderr, tt.noteFrag)
				}
				if !asJSON {
					if out := strings.TrimSuffix(res.stdout, "\n"); !regexp.MustCompile(tt.human).MatchString(out) {
						t.Errorf("stdout %q does not match %s", out, tt.human)
					}
					continue
				}
				row := verdictRow(t, res.stdout, tt.wantClass.Delivered())
				if diff := cmp.Diff(sortedStrings(append(v01SendKeys, ourSendKeys...)), keySet(row)); diff != "" {
					t.Errorf("--json keys (-want +got):\n%s", diff)
				}
				var class string
				json.Unmarshal(row["class"], &class)
				if class != string(tt.wantClass) || string(row["seen"]) != tt.seen {
					t.Errorf("row class %s seen %s, want %s %s", class, row["seen"], tt.wantClass, tt.seen)
				}
				var seenS *float64
				json.Unmarshal(row["seen_s"], &seenS)
				switch {
				case tt.seen == "null" && seenS != nil:
					t.Errorf("seen_s %v with seen null", *seenS)
				case tt.seen == "false" && (seenS == nil || *seenS < 0.6):
					t.Errorf("seen_s %s for a line not seen, want the whole wait (0.6)", row["seen_s"])
				case tt.seen == "true" && (seenS == nil || *seenS > 5):
					t.Errorf("seen_s %s for a line seen", row["seen_s"])
				}
				if rec, last := strings.TrimSpace(readOrEmpty(t, fs.Paths.ReceiptsFile())), lastLine(res.stdout); rec != last {
					t.Errorf("receipt %s\n!= printed %s", rec, res.stdout)
				}
			}
		})
	}
}

func TestSendSeenUsage(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	for _, v := range []string{"-1", "soon"} {
		r := runInProcess(t, fs.Getenv, "", "send", uuid.NewString(), "x", "--seen", v)
		if r.code != 2 || !strings.Contains(r.stderr, "want seconds") {
			t.Errorf("--seen %s: exit %d stderr %q, want 2", v, r.code, r.stderr)
		}
	}
}

// TestSendReplyBinary: send --reply through the binary prints the verdict
// line, then the model's answer; --json carries reply and reply_s; no
// answer in time is a note on stderr, with the class's exit code.
func TestSendReplyBinary(t *testing.T) {
	t.Parallel()
	before := `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"NOT THE REPLY"}],"stop_reason":"tool_use"}}`
	answer := `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"PONG from the session"}],"stop_reason":"end_turn"},"timestamp":"2026-11-30T19:30:15.686Z"}`
	tests := []struct {
		name   string
		then   []string
		stdout string // regexp
		stderr string
		reply  string
	}{
		{"answered", []string{answer}, `^delivered-steer [0-9a-f]{8}… msg_id=[0-9a-f-]{36} after \d+\.\ds, seen after \d+\.\ds, replied after \d+\.\ds\nPONG from the session\n$`, "",
			`{"text":"PONG from the session","tools":[],"stop_reason":"end_turn","turn_ended":true,"at":"2026-11-30T19:30:15.686Z"}`},
		{"not answered in time", nil, `^delivered-steer .*, seen after \d+\.\ds, no reply within 0\.8s\n$`, "has not finished answering", "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, asJSON := range []bool{false, true} {
				fs := fakestation.New(t)
				r := fs.AddSession(fakestation.Session{Name: "work-e9"})
				tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(r.CWD), r.SessionID+transcriptfile.Ext)
				if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
					t.Fatal(err)
				}
				os.WriteFile(tp, []byte(before+"\n"), 0o600)
				// The session's rows are written before the ack: "not
				// answered in time" needs a budget that runs out (0.8 s),
				// and a row written after the ack raced it on a loaded
				// machine (the budget ran out before the msg_id row was
				// read). The answer's budget ends at the answer.
				fakedoorman.Start(t, fs.Paths.InboxDir, r.SessionID, fakedoorman.Options{BeforeAck: rowsBeforeAck(t, tp, tt.then...)})
				args := []string{"send", r.SessionID, "ping", "--reply", "0.8"}
				if tt.reply != "null" {
					args[len(args)-1] = "60"
				}
				if asJSON {
					args = append(args, "--json")
				}
				res := runBinary(t, sendEnv(fs), "", args...)
				if res.code != 0 {
					t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", args, res.code, res.stdout, res.stderr)
				}
				if !strings.Contains(res.stderr, tt.stderr) || (tt.stderr == "" && res.stderr != "") {
					t.Errorf("stderr %q, want %q", res.stderr, tt.stderr)
				}
				if !asJSON {
					if !regexp.MustCompile(tt.stdout).MatchString(res.stdout) {
						t.Errorf("stdout %q does not match %s", res.stdout, tt.stdout)
					}
					continue
				}
				row := verdictRow(t, res.stdout, true)
				if got := string(row["reply"]); got != tt.reply {
					t.Errorf("reply %s, want %s", got, tt.reply)
				}
				if string(row["reply_s"]) == "null" || string(row["seen"]) != "true" {
					t.Errorf("reply_s %s seen %s", row["reply_s"], row["seen"])
				}
			}
		})
	}
}

// TestSendPriorityFlag: --priority later writes the structured line and the
// receipt says so; an unknown priority is a usage error and writes nothing.
func TestSendPriorityFlag(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	sid := offline(fs)
	r := runInProcess(t, fs.Getenv, "", "send", sid, "after your turn", "--from", "omi", "--priority", "later", "--json")
	row := jsonRow(t, r.stdout)
	if r.code != 3 || string(row["priority"]) != `"later"` || !strings.Contains(string(row["line"]), `\"priority\":\"later\"`) {
		t.Errorf("exit %d priority %s line %s", r.code, row["priority"], row["line"])
	}
	r = runInProcess(t, fs.Getenv, "", "send", sid, "x", "--priority", "soon")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--priority") {
		t.Errorf("--priority soon: exit %d stderr %q", r.code, r.stderr)
	}
}
