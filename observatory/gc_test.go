package observatory_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/hostile"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/observatory"
)

// gcSession writes one kind of inbox for sid, its files last changed at
// mtime.
type gcKind struct {
	name    string
	inbox   string // content; "-" for no inbox file
	ack     string
	offset  string
	hb      string // heartbeat's last_seen: "" none, "old", "now"
	attempt string // .doorman.attempt's content; "" for none
	running bool
	// transcript: the session ran here (its transcript is there)
	transcript bool
	mtime      time.Duration // age of the files
	want       string
	kept       []string // suffixes that must remain ("" = the inbox)
}

// attemptRow is a .doorman.attempt file's content.
const attemptRow = `{"line_offset":0,"sha256":"00000000000000000000000000000000000000000000000000000000000000aa","msg_id":"m","at":"2026-11-01T00:00:00.000Z","writes":1}` + "\n"

func TestGCEveryKindOfInbox(t *testing.T) {
	const day = 24 * time.Hour
	ack := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"ts":"2026-11-01T00:00:00.000Z","sha256":"%064x","session_id":"x","peer_status":"idle","class":"delivered-start","msg_id":"m"}`+"\n", i)
		}
		return b.String()
	}
	kinds := []gcKind{
		{name: "running", inbox: "a\n", ack: ack(1), offset: "2", running: true, mtime: 30 * day, want: observatory.GCRunning, kept: []string{""}},
		{name: "pending", inbox: "a\nb\n", ack: ack(1), offset: "2", hb: "old", transcript: true, mtime: 30 * day, want: observatory.GCPending, kept: []string{"", ".ack", ".offset"}},
		// Lines for a session id that does not run and has no transcript
		// here (a mistyped id): nothing will ever deliver them. They were
		// kept as pending for good; they go once quiet, as any other.
		{name: "pending, no such session", inbox: "a\nb\n", ack: "-", offset: "-", mtime: 30 * day, want: observatory.GCRemoved},
		{name: "pending, no such session yet", inbox: "a\n", ack: "-", offset: "-", mtime: time.Minute, want: observatory.GCFresh, kept: []string{""}},
		{name: "stale", inbox: "a\n", ack: ack(1), offset: "2", hb: "old", mtime: 30 * day, want: observatory.GCRemoved},
		{name: "fresh", inbox: "a\n", ack: ack(1), offset: "2", hb: "old", mtime: time.Hour, want: observatory.GCFresh, kept: []string{""}},
		{name: "fresh doorman", inbox: "a\n", ack: ack(1), offset: "2", hb: "now", mtime: 30 * day, want: observatory.GCInUse, kept: []string{""}},
		{name: "monitor-era", inbox: "a\nb\n", ack: "2026-01-01T00:00:00Z read: a\n2026-01-01T00:00:01Z read: b\n", offset: "-", mtime: 30 * day, want: observatory.GCRemoved},
		{name: "monitor-era pending", inbox: "a\nb\n", ack: "2026-01-01T00:00:00Z read: a\n", offset: "-", transcript: true, mtime: 30 * day, want: observatory.GCPending, kept: []string{""}},
		{name: "empty", inbox: "", ack: "-", offset: "-", mtime: 30 * day, want: observatory.GCRemoved},
		{name: "empty but new", inbox: "", ack: "-", offset: "-", mtime: time.Minute, want: observatory.GCFresh, kept: []string{""}},
		{name: "leftovers without inbox", inbox: "-", ack: ack(1), offset: "2", mtime: 30 * day, want: observatory.GCRemoved},
		// The attempt file is one of the session's files: listed alone,
		// removed with the rest, its change is activity. Before, an
		// attempt-only leftover was never listed and a collected session
		// left its attempt file behind.
		{name: "attempt-only leftover", inbox: "-", ack: "-", offset: "-", attempt: attemptRow, mtime: 30 * day, want: observatory.GCRemoved},
		{name: "stale with an attempt", inbox: "a\n", ack: ack(1), offset: "2", attempt: attemptRow, mtime: 30 * day, want: observatory.GCRemoved},
		{name: "fresh attempt", inbox: "-", ack: "-", offset: "-", attempt: attemptRow, mtime: time.Hour, want: observatory.GCFresh, kept: []string{".doorman.attempt"}},
	}
	fs := fakestation.New(t)
	now := time.Now()
	sids := map[string]gcKind{}
	for i, k := range kinds {
		sid := fmt.Sprintf("9c0d%04d-1111-4222-8333-444455556666", i)
		sids[sid] = k
		if k.running {
			fs.AddSession(fakestation.Session{SessionID: sid})
		}
		if k.transcript {
			fs.AddTranscript(sid, "")
		}
		base := fs.InboxPath(sid)
		if err := os.MkdirAll(filepath.Dir(base), 0o700); err != nil {
			t.Fatal(err)
		}
		write := func(path, content string) {
			if content == "-" {
				return
			}
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			at := now.Add(-k.mtime)
			if err := os.Chtimes(path, at, at); err != nil {
				t.Fatal(err)
			}
		}
		write(base, k.inbox)
		write(base+".ack", k.ack)
		write(base+".offset", k.offset)
		if k.attempt != "" {
			write(base+".doorman.attempt", k.attempt)
		}
		switch k.hb {
		case "old":
			seen := now.Add(-k.mtime).UTC().Format("2006-01-02T15:04:05.000Z")
			write(base+".doorman.json", fmt.Sprintf(`{"pid":1,"session_id":%q,"since":%q,"last_seen":%q,"delivered":1,"offset":2,"state":"stopped"}`, sid, seen, seen))
		case "now":
			seen := now.UTC().Format("2006-01-02T15:04:05.000Z")
			hb := fmt.Sprintf(`{"pid":%d,"session_id":%q,"since":%q,"last_seen":%q,"delivered":1,"offset":2,"state":"following"}`, os.Getpid(), sid, seen, seen)
			if err := os.WriteFile(base+".doorman.json", []byte(hb), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	opts := observatory.GCOptions{Station: fs.Station(), Now: func() time.Time { return now }}

	// A dry run removes nothing and says what it would.
	dry := opts
	dry.DryRun = true
	items, err := observatory.GC(context.Background(), dry)
	if err != nil {
		t.Fatal(err)
	}
	gotDry := map[string]string{}
	for _, it := range items {
		gotDry[sids[it.Session].name] = it.Why
	}
	wantDry := map[string]string{}
	for _, k := range kinds {
		w := k.want
		if w == observatory.GCRemoved {
			w = observatory.GCWouldRm
		}
		wantDry[k.name] = w
	}
	if d := cmp.Diff(wantDry, gotDry); d != "" {
		t.Fatalf("dry run (-want +got):\n%s", d)
	}
	before := listDir(t, filepath.Dir(fs.InboxPath(kindsSID(sids, "stale"))))

	items, err = observatory.GC(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range items {
		got[sids[it.Session].name] = it.Why
	}
	want := map[string]string{}
	for _, k := range kinds {
		want[k.name] = k.want
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("gc (-want +got):\n%s", d)
	}
	after := listDir(t, filepath.Dir(fs.InboxPath(kindsSID(sids, "stale"))))
	for sid, k := range sids {
		base := fs.InboxPath(sid)
		for _, suffix := range k.kept {
			if _, err := os.Stat(base + suffix); err != nil {
				t.Errorf("%s: %s%s was removed: %v", k.name, filepath.Base(base), suffix, err)
			}
		}
		if k.want == observatory.GCRemoved {
			for _, f := range after {
				if strings.HasPrefix(f, sid) {
					t.Errorf("%s: %s left behind", k.name, f)
				}
			}
		}
	}
	if len(before) <= len(after) {
		t.Errorf("nothing removed: %v", after)
	}
}

func kindsSID(sids map[string]gcKind, name string) string {
	for sid, k := range sids {
		if k.name == name {
			return sid
		}
	}
	return ""
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// TestGCRacesSendersLosesNothing: gc collecting a quiet, drained inbox
// while a sender appends to it: every line sent is, afterwards, in the
// inbox file (never in a removed one), 1,000 times.
func TestGCRacesSendersLosesNothing(t *testing.T) {
	fs := fakestation.New(t)
	sid := "9c0dffff-1111-4222-8333-444455556666"
	fs.AddTranscript(sid, "") // a session that ran here: its lines are pending
	files := inboxv1.FilesFor(filepath.Dir(fs.InboxPath(sid)), sid)
	if err := os.MkdirAll(filepath.Dir(files.Inbox), 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	// Quiet for 30 days by the clock gc is given: every inbox it sees
	// without a pending line is removable.
	opts := observatory.GCOptions{Station: fs.Station(), Now: func() time.Time { return time.Now().Add(60 * 24 * time.Hour) }, OlderThan: 24 * time.Hour}
	n := 1000
	if testing.Short() {
		n = 200
	}
	removedRuns := 0
	for i := range n {
		// An empty, quiet inbox.
		if err := os.WriteFile(files.Inbox, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_ = os.Chtimes(files.Inbox, old, old)
		line := fmt.Sprintf("line %d", i)
		var wg sync.WaitGroup
		var sendErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, sendErr = inbox.AppendInbox(files.Inbox, []byte(line))
		}()
		go func() {
			defer wg.Done()
			items, err := observatory.GC(context.Background(), opts)
			if err == nil && len(items) == 1 && items[0].Why == observatory.GCRemoved {
				removedRuns++
			}
		}()
		wg.Wait()
		if sendErr != nil {
			t.Fatalf("run %d: send: %v", i, sendErr)
		}
		b, err := os.ReadFile(files.Inbox)
		if err != nil || string(b) != line+"\n" {
			t.Fatalf("run %d: the inbox holds %q (%v), want the line sent during gc", i, b, err)
		}
		for _, p := range []string{files.Inbox, files.Ack, files.Offset, files.Heartbeat, files.Lock} {
			os.Remove(p)
		}
	}
	t.Logf("%d runs: gc removed the inbox first in %d, the line always survived", n, removedRuns)
}

// TestGCKeepsWhatItCannotTrust: an old inbox one of whose files is a FIFO,
// socket, directory, symlink, another user's file or one others can write
// is kept as unreadable, the detail naming the file and the fix, and the
// planted file is left as it is. Before, a FIFO at .ack, .offset or
// .doorman.json of an old inbox was removed silently.
func TestGCKeepsWhatItCannotTrust(t *testing.T) {
	for _, suffix := range []string{"", ".ack", ".offset", ".doorman.json", ".doorman.attempt", ".doorman.lock"} {
		for _, k := range hostile.Kinds() {
			t.Run(strings.TrimPrefix(suffix, ".")+"/"+string(k), func(t *testing.T) {
				fs := fakestation.New(t)
				sid := "9c0d0000-1111-4222-8333-444455556666"
				base := fs.InboxPath(sid)
				if err := os.MkdirAll(filepath.Dir(base), 0o700); err != nil {
					t.Fatal(err)
				}
				for _, s := range []string{"", ".ack", ".offset"} {
					if s != suffix {
						content := map[string]string{"": "a\n", ".ack": "", ".offset": "2"}[s]
						if err := os.WriteFile(base+s, []byte(content), 0o600); err != nil {
							t.Fatal(err)
						}
					}
				}
				path := base + suffix
				decoy := filepath.Join(t.TempDir(), "decoy")
				if err := hostile.Plant(path, k, []byte("planted\n"), decoy); errors.Is(err, hostile.ErrNeedRoot) {
					t.Skip(err)
				} else if err != nil {
					t.Fatal(err)
				}
				before, _ := os.Lstat(path)
				later := time.Now().Add(30 * 24 * time.Hour)
				for _, dry := range []bool{true, false} {
					items, err := observatory.GC(context.Background(), observatory.GCOptions{Station: fs.Station(), Now: func() time.Time { return later }, DryRun: dry})
					if err != nil {
						t.Fatal(err)
					}
					if len(items) != 1 || items[0].Why != observatory.GCUnread || len(items[0].Files) != 0 {
						t.Fatalf("dry run %v: items %+v, want one unreadable", dry, items)
					}
					if d := items[0].Detail; !strings.Contains(d, path) || !strings.Contains(d, "fix:") {
						t.Errorf("the detail does not name %s and the fix: %q", path, d)
					}
				}
				after, err := os.Lstat(path)
				if err != nil || after.Mode() != before.Mode() {
					t.Errorf("the planted %s is gone or changed: %v %v", k, after, err)
				}
				if _, err := os.Lstat(base + ".ack"); suffix != ".ack" && err != nil {
					t.Errorf("the inbox's other files were removed: %v", err)
				}
			})
		}
	}
}

// TestGCStopsWithItsContext: a GC whose context has ended judges and
// removes nothing more, and says why.
func TestGCStopsWithItsContext(t *testing.T) {
	fs := fakestation.New(t)
	sid := "6c2b1c1e-4b7a-4f7e-9d2a-1a2b3c4d5e6f"
	if err := os.WriteFile(fs.InboxPath(sid), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	later := time.Now().Add(30 * 24 * time.Hour)
	items, err := observatory.GC(ctx, observatory.GCOptions{Station: fs.Station(), Now: func() time.Time { return later }})
	if !errors.Is(err, context.Canceled) || len(items) != 0 {
		t.Errorf("GC = %v, %v; want no items and context.Canceled", items, err)
	}
	if _, err := os.Stat(fs.InboxPath(sid)); err != nil {
		t.Errorf("the inbox went: %v", err)
	}
}
