package inbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
)

func TestInboxState(t *testing.T) {
	const sid = "cccccccc-0000-4000-8000-000000000001"
	long := strings.Repeat("é", 300)
	type files struct {
		inbox, ack, offset string
		hb                 *inboxv1.Heartbeat
		noInbox            bool
	}
	type want struct {
		exists            bool
		lines, acks, pend int64
		source            inboxv1.PendingSource
		offset, pendBytes *int64
		lastLine          inboxv1.NullString
		doorman, fresh    bool
		notFresh          inboxv1.NullString
	}
	hb := func(offset int64, inode uint64) *inboxv1.Heartbeat {
		return &inboxv1.Heartbeat{PID: 7, SessionID: sid, LastSeen: "2026-11-30T11:59:59.000Z", Offset: offset, Inode: inode, State: inboxv1.StateFollowing}
	}
	tests := []struct {
		name string
		in   files
		want want
	}{
		{"no inbox", files{noInbox: true}, want{source: "none"}},
		{"empty inbox", files{}, want{exists: true, source: "lines-acks"}},
		{"lines minus acks", files{inbox: "a\nb\nc\n", ack: "{\"sha256\":\"1\"}\n{\"sha256\":\"2\"}\n"},
			want{exists: true, lines: 3, acks: 2, pend: 1, source: "lines-acks", lastLine: "c"}},
		{"more acks than lines never goes negative", files{inbox: "a\n", ack: "x read: a\ny read: a\n"},
			want{exists: true, lines: 1, acks: 2, source: "lines-acks", lastLine: "a"}},
		{"blank and whitespace lines do not count", files{inbox: "a\n\n \t\r\nb\r\n"},
			want{exists: true, lines: 2, pend: 2, source: "lines-acks", lastLine: "b"}},
		{"a torn last line is not counted", files{inbox: "a\nb\nhalf"},
			want{exists: true, lines: 2, pend: 2, source: "lines-acks", lastLine: "b"}},
		{"offset file", files{inbox: "a\nb\nc\n", offset: "2\n", ack: "{}\n"},
			want{exists: true, lines: 3, acks: 1, pend: 2, source: "offset", offset: ptr(int64(2)), pendBytes: ptr(int64(4)), lastLine: "c"}},
		{"offset at the end", files{inbox: "a\nb\n", offset: "4"},
			want{exists: true, lines: 2, source: "offset", offset: ptr(int64(4)), pendBytes: ptr(int64(0)), lastLine: "b"}},
		{"offset beyond the end is not used", files{inbox: "a\nb\n", offset: "99"},
			want{exists: true, lines: 2, pend: 2, source: "lines-acks", lastLine: "b"}},
		{"bad offset file falls back to the heartbeat", files{inbox: "a\nb\n", offset: "x", hb: hb(2, 0)},
			want{exists: true, lines: 2, pend: 1, source: "offset", offset: ptr(int64(2)), pendBytes: ptr(int64(2)), lastLine: "b", doorman: true, fresh: true}},
		{"heartbeat of another inode is not used", files{inbox: "a\nb\n", hb: hb(2, 1)},
			want{exists: true, lines: 2, pend: 2, source: "lines-acks", lastLine: "b", doorman: true, fresh: true}},
		{"long last line is cut to 200 characters", files{inbox: "a\n" + long + "\n"},
			want{exists: true, lines: 2, pend: 2, source: "lines-acks", lastLine: inboxv1.NullString(strings.Repeat("é", 199) + "…")}},
		{"invalid UTF-8 in the last line is replaced", files{inbox: "a\xff\n"},
			want{exists: true, lines: 1, pend: 1, source: "lines-acks", lastLine: "a\uFFFD"}},
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := inboxv1.FilesFor(dir, sid)
			if !tt.in.noInbox {
				writeFile(t, f.Inbox, tt.in.inbox, time.Time{})
			}
			if tt.in.ack != "" {
				writeFile(t, f.Ack, tt.in.ack, time.Time{})
			}
			if tt.in.offset != "" {
				writeFile(t, f.Offset, tt.in.offset, time.Time{})
			}
			if tt.in.hb != nil {
				writeHeartbeat(t, dir, sid, *tt.in.hb)
			}
			in, err := inbox.ReadState(dir, sid, now, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := want{
				exists: in.Exists, lines: in.Lines, acks: in.Acks, pend: in.Pending, source: in.PendingSource,
				offset: in.Offset, pendBytes: in.PendingBytes, lastLine: in.LastLine, doorman: in.Doorman != nil,
			}
			if in.Doorman != nil {
				got.fresh, got.notFresh = in.Doorman.Fresh, in.Doorman.NotFreshBecause
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if in.Path != f.Inbox {
				t.Errorf("path %q, want %q", in.Path, f.Inbox)
			}
			// The listing's reader (the observatory's) reads the same.
			l, err := inbox.List(dir)
			if err != nil {
				t.Fatal(err)
			}
			listed, err := l.ReadState(sid, now, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(in, listed); diff != "" {
				t.Errorf("Listing.ReadState differs from ReadState (-ReadState +listing):\n%s", diff)
			}
		})
	}
}

// TestListingScan: a listing's Scan finds what ScanState finds, the
// listing's files read from their entries, a symlinked inbox refused as
// ReadState refuses it, and a missing directory is an empty listing.
func TestListingScan(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i, content := range []string{"a\n", "a\nb\n" + strings.Repeat("x", 70<<10) + "\nlast\n", ""} {
		sid := "cccccccc-0000-4000-8000-00000000001" + strconv.Itoa(i)
		f := inboxv1.FilesFor(dir, sid)
		writeFile(t, f.Inbox, content, time.Time{})
		if i == 1 {
			writeFile(t, f.Offset, "2\n", time.Time{})
			writeFile(t, f.Ack, "{}\n", time.Time{})
			writeHeartbeat(t, dir, sid, inboxv1.Heartbeat{PID: 7, SessionID: sid, LastSeen: "2026-11-30T11:59:59.000Z", State: inboxv1.StateFollowing})
		}
	}
	writeFile(t, dir+"/target", "a\n", time.Time{})
	if err := os.Symlink(dir+"/target", inboxv1.FilesFor(dir, "cccccccc-0000-4000-8000-000000000019").Heartbeat); err != nil {
		t.Fatal(err)
	}
	writeFile(t, inboxv1.FilesFor(dir, "cccccccc-0000-4000-8000-000000000019").Inbox, "z\n", time.Time{})
	all := func(string) bool { return true }
	want, werr := inbox.ScanState(dir, all, now, nil)
	l, err := inbox.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, gerr := l.Scan(all, now, nil)
	if diff := cmp.Diff(want, got); diff != "" || fmt.Sprint(werr) != fmt.Sprint(gerr) {
		t.Errorf("Scan differs from ScanState (-ScanState +Scan):\n%s\nerrors %v, %v", diff, werr, gerr)
	}
	if len(got) != 4 || got[1].Inbox.LastLine != "last" || got[1].Inbox.Acks != 1 || got[1].Inbox.Doorman == nil {
		t.Errorf("Scan: %+v", got)
	}
	if d := got[3].Inbox.Doorman; d == nil || d.NotFreshBecause != inboxv1.NullString(inboxv1.ReasonHeartbeatUnreadable) {
		t.Errorf("a symlinked heartbeat: doorman %+v, want unreadable", d)
	}
	empty, err := inbox.List(dir + "/missing")
	if err != nil {
		t.Fatal(err)
	}
	if ents, err := empty.Scan(all, now, nil); len(ents) != 0 || err != nil {
		t.Errorf("missing dir: %v, %v", ents, err)
	}
	if in, err := empty.ReadState("cccccccc-0000-4000-8000-000000000010", now, nil); err != nil || in.Exists || in.Doorman != nil {
		t.Errorf("missing dir: %+v, %v", in, err)
	}
}

func TestInboxStateDoorman(t *testing.T) {
	const sid = "cccccccc-0000-4000-8000-000000000002"
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	alive := func(pid int) bool { return pid == 7 }
	tests := []struct {
		name string
		hb   string // the heartbeat file; "" for none
		want *inboxv1.Doorman
	}{
		{"no heartbeat", "", nil},
		{"unreadable", "{not json", &inboxv1.Doorman{NotFreshBecause: "unreadable"}},
		{"fresh contract-v1 doorman (no state)",
			`{"pid":7,"session_id":"` + sid + `","since":"2026-11-30T11:00:00Z","last_seen":"2026-11-30T11:59:55.04Z","delivered":3,"offset":0}`,
			&inboxv1.Doorman{PID: 7, LastSeenS: ptr(5.0), Fresh: true, Delivered: 3, PIDAlive: true, Since: "2026-11-30T11:00:00Z", LastSeen: "2026-11-30T11:59:55.04Z"}},
		{"stale",
			`{"pid":7,"session_id":"` + sid + `","last_seen":"2026-11-30T11:59:00Z","state":"following"}`,
			&inboxv1.Doorman{PID: 7, LastSeenS: ptr(60.0), State: "following", PIDAlive: true, LastSeen: "2026-11-30T11:59:00Z", NotFreshBecause: "stale"}},
		{"switched",
			`{"pid":7,"session_id":"` + sid + `","last_seen":"2026-11-30T11:59:59Z","state":"switched"}`,
			&inboxv1.Doorman{PID: 7, LastSeenS: ptr(1.0), State: "switched", PIDAlive: true, LastSeen: "2026-11-30T11:59:59Z", NotFreshBecause: "state"}},
		{"pid gone",
			`{"pid":8,"session_id":"` + sid + `","last_seen":"2026-11-30T11:59:59Z","state":"following"}`,
			&inboxv1.Doorman{PID: 8, LastSeenS: ptr(1.0), State: "following", LastSeen: "2026-11-30T11:59:59Z", NotFreshBecause: "pid-gone"}},
		{"another session",
			`{"pid":7,"session_id":"other","last_seen":"2026-11-30T11:59:59Z","state":"following"}`,
			&inboxv1.Doorman{PID: 7, LastSeenS: ptr(1.0), State: "following", PIDAlive: true, LastSeen: "2026-11-30T11:59:59Z", NotFreshBecause: "other-session"}},
		{"unparseable last_seen",
			`{"pid":7,"session_id":"` + sid + `","last_seen":"yesterday"}`,
			&inboxv1.Doorman{PID: 7, PIDAlive: true, LastSeen: "yesterday", NotFreshBecause: "stale"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.hb != "" {
				writeFile(t, inboxv1.FilesFor(dir, sid).Heartbeat, tt.hb, time.Time{})
			}
			in, err := inbox.ReadState(dir, sid, now, alive)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, in.Doorman); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestInboxStateRefusesSymlink(t *testing.T) {
	const sid = "cccccccc-0000-4000-8000-000000000003"
	dir := t.TempDir()
	writeFile(t, dir+"/target", "a\n", time.Time{})
	if err := os.Symlink(dir+"/target", inboxv1.FilesFor(dir, sid).Inbox); err != nil {
		t.Fatal(err)
	}
	if _, err := inbox.ReadState(dir, sid, time.Now(), nil); err == nil {
		t.Error("a symlinked inbox was read")
	}
}

// FuzzInboxCount checks the one-pass counter against a naive split.
func FuzzInboxCount(f *testing.F) {
	for _, s := range []string{"", "a\n", "a\nb", "\n\n", " \t\r\n x\n", "a\r\nb\r\n", strings.Repeat("x\n", 40000)} {
		f.Add(s, int64(0))
	}
	const sid = "cccccccc-0000-4000-8000-000000000004"
	f.Fuzz(func(t *testing.T, content string, offset int64) {
		dir := t.TempDir()
		fl := inboxv1.FilesFor(dir, sid)
		writeFile(t, fl.Inbox, content, time.Time{})
		useOffset := offset >= 0 && offset <= int64(len(content))
		if useOffset {
			writeFile(t, fl.Offset, strconv.FormatInt(offset, 10), time.Time{})
		}
		in, err := inbox.ReadState(dir, sid, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var lines, after int64
		pos := int64(0)
		parts := strings.Split(content, "\n")
		for i, l := range parts {
			if i == len(parts)-1 {
				break // the text after the last newline is not a complete line
			}
			if strings.Trim(l, " \t\r") != "" {
				lines++
				if pos >= offset {
					after++
				}
			}
			pos += int64(len(l)) + 1
		}
		if in.Lines != lines {
			t.Errorf("lines %d, want %d", in.Lines, lines)
		}
		wantPending := lines
		if useOffset {
			wantPending = after
		}
		if in.Pending != wantPending {
			t.Errorf("pending %d, want %d (offset %d, used %v)", in.Pending, wantPending, offset, useOffset)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func writeFile(tb testing.TB, path, content string, _ time.Time) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func writeHeartbeat(tb testing.TB, dir, sid string, hb inboxv1.Heartbeat) {
	tb.Helper()
	b, err := json.Marshal(hb)
	if err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, inboxv1.FilesFor(dir, sid).Heartbeat, string(b), time.Time{})
}
