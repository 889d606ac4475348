package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
)

func TestGCVerb(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	const gone = "6c0d0000-1111-4222-8333-444455556666"
	inbox := fs.InboxPath(gone)
	if err := os.MkdirAll(strings.TrimSuffix(inbox, gone+".inbox"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inbox, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * 24 * time.Hour)
	os.Chtimes(inbox, old, old)

	for _, args := range [][]string{
		{"gc", "--older-than", "soon"}, {"gc", "--older-than", "-1h"}, {"gc", "extra"},
		// 0 is refused, never read as the 7-day default.
		{"gc", "--older-than", "0d"}, {"gc", "--older-than", "0"}, {"gc", "--older-than", "0s"}, {"gc", "--older-than", "-0s"},
		{"gc", "--older-than", "+1_0d"}, {"gc", "--older-than", "1_0d"},
	} {
		if r := runBinary(t, fs.Env(), "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", args, r.code, r.stderr)
		}
	}
	r := runBinary(t, fs.Env(), "", "gc", "--older-than", "30d", "--json")
	var items []struct{ Why string }
	if err := json.Unmarshal([]byte(r.stdout), &items); r.code != 0 || err != nil || len(items) != 1 || items[0].Why != "fresh" {
		t.Errorf("--older-than 30d: exit %d items %v (%v)", r.code, r.stdout, err)
	}
	r = runBinary(t, fs.Env(), "", "gc", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "would-remove "+inbox) {
		t.Errorf("--dry-run: exit %d stdout %q", r.code, r.stdout)
	}
	if _, err := os.Stat(inbox); err != nil {
		t.Fatalf("--dry-run removed the inbox: %v", err)
	}
	r = runBinary(t, fs.Env(), "", "gc")
	if r.code != 0 || !strings.Contains(r.stdout, "removed "+inbox) {
		t.Errorf("gc: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(inbox); !os.IsNotExist(err) {
		t.Errorf("gc kept the empty inbox of a gone session: %v", err)
	}
}

// TestGCUnknownSessionInbox: `send --expect-start` to an id no session
// ever took, then gc: the pending inbox was kept as "pending" for good
// (and doctor said resume, which refuses it). Once quiet it is removed,
// and gc says how many lines went; a pending inbox of a session that ran
// here stays.
func TestGCUnknownSessionInbox(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	const nobody, ran = "6c0d0000-1111-4222-8333-444455550001", "6c0d0000-1111-4222-8333-444455550002"
	fs.AddTranscript(ran, "")
	for _, sid := range []string{nobody, ran} {
		r := runBinary(t, sendEnv(fs, "OO_CLAUDE_WAIT_S=0"), "", "send", "--expect-start", sid, "hello")
		if r.code != 3 {
			t.Fatalf("send --expect-start %s: exit %d: %s", sid, r.code, r.stderr)
		}
		old := time.Now().Add(-time.Hour)
		os.Chtimes(fs.InboxPath(sid), old, old)
	}
	r := runBinary(t, fs.Env(), "", "doctor", "--json")
	if !strings.Contains(r.stdout, `"kind":"unknown-session-inbox"`) || !strings.Contains(r.stdout, `"kind":"offline-inbox-waiting"`) {
		t.Errorf("doctor: %s", r.stdout)
	}
	r = runBinary(t, fs.Env(), "", "gc", "--older-than", "1m")
	if r.code != 0 || !strings.Contains(r.stdout, "removed "+fs.InboxPath(nobody)) || !strings.Contains(r.stderr, nobody+": 1 line(s) wait") {
		t.Errorf("gc: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(fs.InboxPath(nobody)); !os.IsNotExist(err) {
		t.Errorf("gc kept the inbox of an id nothing knows: %v", err)
	}
	if _, err := os.Stat(fs.InboxPath(ran)); err != nil {
		t.Errorf("gc removed the pending inbox of a session that ran here: %v", err)
	}
}
