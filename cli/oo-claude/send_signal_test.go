package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// waitUntil checks cond each few milliseconds until it holds; a minute
// without is a failure of what.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute", what)
		}
		time.Sleep(5 * time.Millisecond) // a poll of files, not a synchronisation by duration
	}
}

func fileHas(path, frag string) func() bool {
	return func() bool {
		b, _ := os.ReadFile(path)
		return len(b) > 0 && strings.Contains(string(b), frag)
	}
}

// startSend starts `oo-claude send` as a child process.
func startSend(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := command(ctx, t, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out, &errb
}

func exitOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// sendStation is a fake station with a session, its transcript and a
// doorman (which acks unless noAck); with absorb, the "session" writes the
// row that shows the line went to the model, and no answer.
func sendStation(t *testing.T, noAck, absorb bool) (*fakestation.Station, *fakedoorman.Doorman, string, string) {
	t.Helper()
	fs := fakestation.New(t)
	r := fs.AddSession(fakestation.Session{Name: "work-e9"})
	tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(r.CWD), r.SessionID+transcriptfile.Ext)
	if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(tp, []byte(`{"type":"user","message":{"role":"user","content":"work"}}`+"\n"), 0o600)
	d := fakedoorman.Start(t, fs.Paths.InboxDir, r.SessionID, fakedoorman.Options{NoAck: noAck})
	if absorb {
		absorbRows(t, d, tp, false)
	}
	return fs, d, r.SessionID, tp
}

// TestSendSignalBinary: SIGINT or SIGTERM during `send --reply 60` (in the
// ack wait, the seen wait, the reply wait) exits 130 or 143; the verdict
// line, the --json row and the receipt say interrupted, naming the signal,
// never a timeout; what the ack said stays (delivered, or the line waits:
// the class interrupted).
func TestSendSignalBinary(t *testing.T) {
	t.Parallel()
	stages := []struct {
		name          string
		noAck, absorb bool
		class         string
		delivered     string
		waitEnd, seen string
		human         string // regexp of the verdict line; %s is the signal
		note          string
	}{
		{"ack wait", true, false, "interrupted", "false", "null", "null",
			`^interrupted [0-9a-f]{8}… line_offset=0 interrupted \(%s\) \d+\.\ds into the ack wait$`, "into the wait for the doorman's ack: the line is in the inbox and waits for the doorman; do not resend it"},
		{"seen wait", false, false, "delivered-steer", "true", `"interrupted"`, "false",
			`^delivered-steer [0-9a-f]{8}… msg_id=[0-9a-f-]{36} after \d+\.\ds, interrupted \(%s\) after \d+\.\ds, not seen$`, "the door took the line, but the transcript has no row with its msg_id yet"},
		{"reply wait", false, true, "delivered-steer", "true", `"interrupted"`, "true",
			`^delivered-steer [0-9a-f]{8}… msg_id=[0-9a-f-]{36} after \d+\.\ds, seen after \d+\.\ds, interrupted \(%s\) after \d+\.\ds, no reply$`, "the model took the line (seen after"},
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
		for _, st := range stages {
			for _, asJSON := range []bool{true, false} {
				t.Run(name+"/"+st.name+"/json="+strconv.FormatBool(asJSON), func(t *testing.T) {
					t.Parallel()
					fs, d, sid, tp := sendStation(t, st.noAck, st.absorb)
					args := []string{"send", sid, "ping", "--wait", "60", "--reply", "60"}
					if asJSON {
						args = append(args, "--json")
					}
					cmd, out, errb := startSend(t, sendEnv(fs), args...)
					switch {
					case st.noAck:
						waitUntil(t, "line in the inbox", fileHas(d.Files.Inbox, "ping"))
					case st.absorb:
						waitUntil(t, "row in the transcript", fileHas(tp, "queued_command"))
					default:
						waitUntil(t, "ack", fileHas(d.Files.Ack, "msg_id"))
					}
					cmd.Process.Signal(sig)
					code := exitOf(t, cmd)
					if want := 128 + int(sig); code != want {
						t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, want, out, errb)
					}
					stderr := errb.String()
					if !strings.Contains(stderr, "oo-claude: note: interrupted ("+name+") ") || !strings.Contains(stderr, st.note) || strings.Contains(stderr, "within") {
						t.Errorf("stderr %q: want the note to say interrupted by %s (%q), never a timeout", stderr, name, st.note)
					}
					if strings.Contains(stderr, "context canceled") {
						t.Errorf("stderr %q: the cancellation is the note's to say", stderr)
					}
					rec := receiptRows(t, fs.Paths.ReceiptsFile())
					if len(rec) != 1 {
						t.Fatalf("%d receipt rows, want 1", len(rec))
					}
					if !asJSON {
						human := regexp.MustCompile(strings.Replace(st.human, "%s", name, 1))
						if line := strings.TrimSuffix(out.String(), "\n"); !human.MatchString(line) {
							t.Errorf("stdout %q does not match %s", line, human)
						}
					} else if got := strings.TrimSpace(out.String()); !bytes.Equal(mustJSON(t, verdictRow(t, out.String(), !st.noAck)), mustJSON(t, rec[0])) {
						t.Errorf("--json row %s is not the receipt's", got)
					}
					for k, want := range map[string]string{"class": `"` + st.class + `"`, "delivered": st.delivered, "interrupted": `"` + name + `"`, "wait_end": st.waitEnd, "seen": st.seen, "line_offset": "0"} {
						if got := string(rec[0][k]); got != want {
							t.Errorf("receipt %s = %s, want %s", k, got, want)
						}
					}
				})
			}
		}
	}
}

// TestSendSessionEndsBinary: a session killed after the ack of a line sent
// with --reply 60 ends the wait at once: exit 0 (the class's), the
// outcome session-ended in the row and the note, not a timeout.
func TestSendSessionEndsBinary(t *testing.T) {
	t.Parallel()
	for _, asJSON := range []bool{true, false} {
		t.Run("json="+strconv.FormatBool(asJSON), func(t *testing.T) {
			t.Parallel()
			fs, d, sid, _ := sendStation(t, false, false)
			r, _, _ := fs.Station().LiveBySessionID(sid)
			args := []string{"send", sid, "ping", "--reply", "60"}
			if asJSON {
				args = append(args, "--json")
			}
			cmd, out, errb := startSend(t, sendEnv(fs), args...)
			waitUntil(t, "ack", fileHas(d.Files.Ack, "msg_id"))
			killed := time.Now()
			fs.Crash(r.PID)
			code := exitOf(t, cmd)
			took := time.Since(killed)
			t.Logf("send returned %v after the session's process was killed: %s", took, out)
			if code != 0 {
				t.Fatalf("exit %d, want 0 (the class's)\nstdout: %s\nstderr: %s", code, out, errb)
			}
			if took > 20*time.Second { // generous under load; the wait was 60 s
				t.Errorf("send returned %v after the session ended", took)
			}
			want := "oo-claude: note: the session ended (its process " + strconv.Itoa(r.PID) + " exited) "
			if !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), "within") {
				t.Errorf("stderr %q, want %q and no timeout", errb, want)
			}
			rec := receiptRows(t, fs.Paths.ReceiptsFile())
			if string(rec[0]["wait_end"]) != `"session-ended"` || string(rec[0]["class"]) != `"delivered-steer"` || string(rec[0]["interrupted"]) != "null" {
				t.Errorf("receipt class %s wait_end %s interrupted %s", rec[0]["class"], rec[0]["wait_end"], rec[0]["interrupted"])
			}
			if !asJSON {
				human := regexp.MustCompile(`^delivered-steer [0-9a-f]{8}… msg_id=[0-9a-f-]{36} after \d+\.\ds, session ended after \d+\.\ds, not seen$`)
				if line := strings.TrimSuffix(out.String(), "\n"); !human.MatchString(line) {
					t.Errorf("stdout %q does not match %s", line, human)
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// receiptRows reads the receipts file, one JSON object a line.
func receiptRows(t *testing.T, path string) []map[string]json.RawMessage {
	t.Helper()
	var rows []map[string]json.RawMessage
	for _, l := range strings.Split(strings.TrimSpace(readOrEmpty(t, path)), "\n") {
		if l == "" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("receipt line %q: %v", l, err)
		}
		rows = append(rows, m)
	}
	return rows
}
