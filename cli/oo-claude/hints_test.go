package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/headless"
)

// cliWords are what only the CLI may say: a flag or an oo-claude verb.
var cliWords = regexp.MustCompile(`--[a-z]|oo-claude (send|read|resume|start|sessions|watch|doorman|lineage)`)

// TestHintsAreTheCLIs: the library's notes speak of the request's fields
// (the receipt carries them as the library wrote them); the CLI adds the
// flag or the verb when it prints them.
func TestHintsAreTheCLIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     func(fs *fakestation.Station) []string
		reason   string
		note     string // the receipt's note starts so
		printed  string // and stderr has this note
		noteHint string
	}{
		{"bad from", func(fs *fakestation.Station) []string {
			return []string{fs.AddSession(fakestation.Session{Name: "work-e9"}).SessionID, "hi", "--from", "a]b"}
		}, "bad-from", `From "a]b": `, `oo-claude: note: --from "a]b": `, ""},
		{"unknown target", func(fs *fakestation.Station) []string { return []string{"nobody-here", "hi"} },
			"unknown-target", `unknown target "nobody-here"`, `oo-claude: note: unknown target "nobody-here"`, " (oo-claude sessions lists them; a session that is not running is addressed by its full id)\n"},
		{"unknown session", func(fs *fakestation.Station) []string { return []string{"6c0d0000-1111-4222-8333-444455556666", "hi"} },
			"unknown-session", "no running session and no transcript on this station has the id 6c0d0000-1111-4222-8333-444455556666", "oo-claude: note: no running session",
			"queued with --expect-start (oo-claude start --session-id); oo-claude sessions lists the sessions\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := fakestation.New(t)
			r := runBinary(t, sendEnv(fs), "", append([]string{"send", "--json"}, tt.args(fs)...)...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\nstderr: %s", r.code, r.stderr)
			}
			row := jsonRow(t, r.stdout)
			var reason, note string
			json.Unmarshal(row["reason"], &reason)
			json.Unmarshal(row["note"], &note)
			if reason != tt.reason || !strings.HasPrefix(note, tt.note) || cliWords.MatchString(note) {
				t.Errorf("receipt reason %q note %q, want %q and a note starting %q without a flag or verb", reason, note, tt.reason, tt.note)
			}
			if !strings.Contains(r.stderr, tt.printed) || !strings.Contains(r.stderr, tt.noteHint) {
				t.Errorf("stderr %q, want %q…%q", r.stderr, tt.printed, tt.noteHint)
			}
		})
	}
}

func TestSendNote(t *testing.T) {
	t.Parallel()
	sid := uuid.NewString()
	no, yes := false, true
	tests := []struct {
		name string
		v    claudeinbox.Verdict
		want string
	}{
		{"none", claudeinbox.Verdict{SessionID: sid}, ""},
		{"not seen", claudeinbox.Verdict{SessionID: sid, Seen: &no, Note: "not seen within 1s"},
			"not seen within 1s; oo-claude read " + sid + " shows the line once the model takes it"},
		{"no reply, not seen", claudeinbox.Verdict{SessionID: sid, Seen: &no, ReplyWait: time.Second, Note: "no reply within 1s"},
			"no reply within 1s; oo-claude read " + sid + " shows the answer once the model gives it"},
		{"no reply, seen", claudeinbox.Verdict{SessionID: sid, Seen: &yes, ReplyWait: time.Second, Note: "no reply within 1s"},
			"no reply within 1s; oo-claude read " + sid + " shows the answer once it is written"},
		{"queued", claudeinbox.Verdict{SessionID: sid, Class: claudeinbox.QueuedOffline, Note: "waits"}, "waits"},
	}
	for _, tt := range tests {
		if got := sendNote(tt.v); got != tt.want {
			t.Errorf("%s: sendNote = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestResumeHints(t *testing.T) {
	t.Parallel()
	held := []struct {
		by   string
		want string
	}{
		{headless.HeldByRegistry, "held-by-session (registry-row): the session runs (pid 7); use oo-claude send"},
		{headless.HeldByLock, "held-by-session (lock): the session runs (pid 7)"},
	}
	for _, tt := range held {
		if got := heldMessage(headless.ResumeResult{HeldBy: tt.by, Reason: "the session runs (pid 7)"}); got != tt.want {
			t.Errorf("heldMessage(%s) = %q, want %q", tt.by, got, tt.want)
		}
	}
	refused := []struct {
		err  error
		want string
	}{
		{&headless.RefusedError{Op: "resume", Reason: "cwd-mismatch", Err: fmt.Errorf("%w: /a encodes to -a", headless.ErrCWDMismatch)},
			"resume refused (cwd-mismatch): " + headless.ErrCWDMismatch.Error() + ": /a encodes to -a (give --cwd the session's project directory, or leave it out for the one the transcript recorded)"},
		{&headless.RefusedError{Op: "start", Reason: "bad-out", Err: fmt.Errorf("result file %q: path must be absolute", "x")},
			`start refused (bad-out): result file "x": path must be absolute (--out names the result file)`},
	}
	for _, tt := range refused {
		if got := refusedMessage(tt.err, "", ""); got != tt.want {
			t.Errorf("refusedMessage = %q\nwant %q", got, tt.want)
		}
	}
}
