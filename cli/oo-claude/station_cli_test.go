package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
)

// writeStationFile writes home's station file (~/.config/oo-claude/station.env).
func writeStationFile(t *testing.T, home, body string) string {
	t.Helper()
	dir := filepath.Join(home, ".config", "oo-claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "station.env")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStationFileNamesTheStation: with only HOME in the environment (as
// `ssh host oo-claude …` has it), the station file's knobs name the
// station's directories and its name; the environment overrides the file;
// a bad line is a usage error naming the file and the line.
func TestStationFileNamesTheStation(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	row := fs.AddSession(fakestation.Session{Name: "far-a1"})
	home := t.TempDir()
	var body strings.Builder
	body.WriteString("# the station of this test\n\n")
	for _, kv := range fs.Env()[1:] { // every knob but HOME
		body.WriteString(kv + "\n")
	}
	body.WriteString("OO_CLAUDE_STATION=\"alpha\"\n")
	writeStationFile(t, home, body.String())
	env := []string{"HOME=" + home}

	r := runBinary(t, env, "", "sessions", "--json")
	if r.code != 0 {
		t.Fatalf("sessions: exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Station  string `json:"station"`
		Sessions []struct {
			Session string `json:"session"`
			Station string `json:"station"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Station != "alpha" || len(doc.Sessions) != 1 || doc.Sessions[0].Session != row.SessionID || doc.Sessions[0].Station != "alpha" {
		t.Errorf("document %+v, want station alpha with session %s carrying it", doc, row.SessionID)
	}

	r = runBinary(t, append(env, "OO_CLAUDE_STATION=beta"), "", "sessions", "--json")
	if !strings.Contains(r.stdout, `"station":"beta"`) || strings.Contains(r.stdout, "alpha") {
		t.Errorf("the environment does not override the file: %s", r.stdout)
	}

	p := writeStationFile(t, home, "OO_CLAUDE_WAIT_S=3\nOO_CLAUDE_WAIT=3\n")
	r = runBinary(t, env, "", "sessions")
	if r.code != exitUsage || !strings.Contains(r.stderr, p+", line 2") || !strings.Contains(r.stderr, "OO_CLAUDE_WAIT") {
		t.Errorf("bad line: exit %d stderr %q, want exit 2 naming %s, line 2", r.code, r.stderr, p)
	}
	writeStationFile(t, home, "just words\n")
	r = runBinary(t, env, "", "sessions")
	if r.code != exitUsage || !strings.Contains(r.stderr, "line 1") {
		t.Errorf("line without =: exit %d stderr %q", r.code, r.stderr)
	}
}

// TestStationNameDefault: without OO_CLAUDE_STATION the name is
// user@host, with the config dir when it is not ~/.claude; sessions and
// watch say on stderr when the registry directory does not exist.
func TestStationNameDefault(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	host, _ := os.Hostname()
	user, _ := currentUser()
	r := runBinary(t, []string{"HOME=" + home}, "", "sessions", "--json")
	if !strings.Contains(r.stdout, `"station":"`+user+"@"+host+`"`) {
		t.Errorf("default station: %s, want %s@%s", r.stdout, user, host)
	}
	if !strings.Contains(r.stderr, filepath.Join(home, ".claude", "sessions")+" does not exist") {
		t.Errorf("no note of the missing registry on stderr: %q", r.stderr)
	}
	cd := filepath.Join(home, "other")
	r = runBinary(t, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + cd}, "", "sessions", "--json")
	if !strings.Contains(r.stdout, `"station":"`+user+"@"+host+":"+cd+`"`) {
		t.Errorf("station of another config dir: %s", r.stdout)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := command(ctx, t, []string{"HOME=" + home}, "watch", "--json")
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	for !strings.Contains(errb.String(), "does not exist") {
		if ctx.Err() != nil {
			t.Fatalf("watch said nothing of the missing registry: %q", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSendLineFromStdin: "-" reads the line from stdin, byte-exact (quotes,
// $, ;, backticks, non-ASCII), one trailing newline dropped.
func TestSendLineFromStdin(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	sid := "8f0c5b8e-3a55-4d7e-9a7e-2d2b8f1e6a10" // no running session: queued-offline
	line := "it's \"$HOME\"; `id` — naïve ✓"
	r := runBinary(t, sendEnv(fs), line+"\n", "send", "--no-tag", "--expect-start", "--json", sid, "-")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (queued-offline): %s %s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(fs.Paths.InboxDir, sid+".inbox"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != line+"\n" {
		t.Errorf("inbox %q, want %q", b, line+"\n")
	}
	// Too long on stdin is what it is as an argument: refused (too-long,
	// exit 1), its row printed and nothing written, at each length past
	// the bound (the read stops one byte past it).
	for _, n := range []int{inboxv1.MaxLineBytes + 1, inboxv1.MaxLineBytes + 2, 10 * inboxv1.MaxLineBytes} {
		r = runBinary(t, sendEnv(fs), strings.Repeat("x", n), "send", "--no-tag", "--expect-start", "--json", sid, "-")
		if r.code != 1 || !strings.Contains(r.stdout, `"class":"refused"`) || !strings.Contains(r.stdout, `"reason":"too-long"`) {
			t.Errorf("%d bytes: exit %d stdout %q stderr %q, want refused too-long (1)", n, r.code, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(fs.Paths.InboxDir, sid+".inbox")); string(b) != line+"\n" {
		t.Errorf("inbox after the refusals %q, want the first line alone", b)
	}
}

// TestWatchEndsWhenReaderGoes: on an idle station, without a tty, watch
// exits within 2 s of its stdout's reader going away (no write would ever
// fail on a quiet station: ssh's orphaned remote watch).
func TestWatchEndsWhenReaderGoes(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	fs.AddSession(fakestation.Session{Name: "quiet-a1"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(ctx, t, fs.Env(), "watch", "--json")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	// Read the initial events to the last one (the session's doorman):
	// after it, the idle station has nothing to say.
	sc := bufio.NewScanner(pr)
	for sc.Scan() && !strings.Contains(sc.Text(), `"event":"doorman"`) {
	}
	if sc.Err() != nil {
		t.Fatal(sc.Err())
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pr.Close()
	start := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Logf("watch ended: %v", err)
		}
		// About 1 s on an idle machine (the hang-up is an event, the
		// watch's shutdown takes the rest), which a loaded one can
		// stretch past any tight bound: the figure is logged. An idle
		// watch that missed the hang-up would run until the 60 s context
		// killed it, which the check below tells apart.
		t.Logf("watch exited %v after its reader went away", time.Since(start))
		if ctx.Err() != nil {
			t.Fatal("the watch was killed by the test's 60 s context, not ended by the hang-up")
		}
	case <-time.After(40 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("watch still ran 40 s after its reader went away")
	}
}

// TestReceiptVerb: receipt MSG_ID prints the receipt row of a past send;
// an unknown msg_id is exit 1.
func TestReceiptVerb(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	rows := `{"kind":"send","class":"delivered-steer","msg_id":"m-1","target":"a"}` + "\n" +
		`{"kind":"send","class":"delivered-start","msg_id":"m-2","target":"b","reply":{"text":"PONG"}}` + "\n"
	if err := os.MkdirAll(fs.Paths.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fs.Paths.ReceiptsFile(), []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runInProcess(t, fs.Getenv, "", "receipt", "--json", "m-2")
	if r.code != 0 || r.stdout != strings.SplitAfter(rows, "\n")[1] {
		t.Errorf("receipt --json m-2: exit %d %q", r.code, r.stdout)
	}
	r = runInProcess(t, fs.Getenv, "", "receipt", "m-2")
	if r.code != 0 || !strings.Contains(r.stdout, "class: delivered-start") || !strings.Contains(r.stdout, "PONG") {
		t.Errorf("receipt m-2: exit %d %q", r.code, r.stdout)
	}
	r = runInProcess(t, fs.Getenv, "", "receipt", "m-3")
	if r.code != 1 || !strings.Contains(r.stderr, "m-3") {
		t.Errorf("receipt m-3: exit %d %q", r.code, r.stderr)
	}
}
