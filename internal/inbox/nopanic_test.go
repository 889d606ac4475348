package inbox_test

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
)

// TestNoPanic calls the file layer's readers, writers' guards and checks
// with zero values and hostile ones (empty, NUL, invalid UTF-8, traversal,
// 64 KiB strings; missing, FIFO, directory, /dev/null and symlink paths;
// durations at their bounds): they may refuse, never panic or hang. The
// public packages' table is internal/repocheck's TestNoPanic.
func TestNoPanic(t *testing.T) {
	// Relative paths land in a directory of the test's own.
	t.Chdir(t.TempDir())
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("{\"a\":1}\n\x00\xff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	strs := []string{"", "abc", "a\x00b", "\xff\xfe\xfd", "../../etc", "/", "-1", " \t\n",
		"00000000-0000-0000-0000-000000000000", strings.Repeat("x", 1<<16)}
	paths := []string{"", "a\x00b", "rel/x", "/nonexistent/oo-claude/x", empty, fifo, "/dev/null", link, file}
	durs := []time.Duration{0, -1, math.MinInt64, math.MaxInt64}
	bytes := [][]byte{nil, {}, []byte("\x00"), []byte("{"), []byte("{}"), []byte("null"), []byte("\xff\xfe"),
		[]byte(`{"v":1}`), []byte(`{"v":1,"line":null,"from":7}`), []byte(`{"v":"1","id":[],"line":"\u0000"}`)}
	alive := func(int) bool { return true }

	call := func(desc string, f func()) {
		t.Helper()
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			f()
		}()
		select {
		case p := <-done:
			if p != nil {
				t.Errorf("%s panicked: %v", desc, p)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not return", desc)
		}
	}
	ctx := func() context.Context {
		c, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		t.Cleanup(cancel)
		return c
	}
	for i, s := range strs {
		d := durs[i%len(durs)]
		call("ThrottleFor("+s[:min(len(s), 16)]+").Do", func() {
			inbox.ThrottleFor(s, d, nil).Do(ctx(), s, s, func() error { return nil })
			inbox.ThrottleFor(empty, d, time.Now).Do(ctx(), s, s, func() error { return io.EOF })
		})
		call("CheckFreshness, CheckLine, CheckFrom, Tagged", func() {
			inbox.FilesFor(empty, s)
			inbox.CheckFreshness(inbox.Heartbeat{SessionID: s, PID: -1, LastSeen: s, State: inbox.State(s)}, time.Unix(math.MaxInt32, 0), s, alive)
			inbox.CheckLine([]byte(s))
			inbox.CheckFrom(s)
			inbox.CheckPriority(s)
			inbox.SanitizeFrom(s)
			inbox.SenderTag(s)
			inbox.Tagged(s, s)
			jsonrow.ParseTime(s)
			inbox.ReadState(empty, s, time.Time{}, nil)
		})
	}
	for _, p := range paths {
		call("readers("+p+")", func() {
			inbox.FilesFor(p, p)
			inbox.ReadAcks(p, -1)
			inbox.ReadAcks(p, math.MaxInt64)
			inbox.ReadAttempt(p)
			inbox.ReadOffset(p)
			hb, _ := inbox.ReadHeartbeat(p)
			inbox.HeartbeatFreshness(p, time.Time{}, p, alive)
			inbox.CheckFreshness(hb, time.Time{}, p, alive)
			inbox.CheckTrust(inbox.FilesFor(p, p), -1)
			inbox.CheckTrust(inbox.Files{}, 0)
			inbox.ScanState(p, nil, time.Time{}, nil)
			inbox.ScanState(p, func(string) bool { return true }, time.Time{}, nil)
			for _, s := range strs[:4] {
				inbox.ReadState(p, s, time.Time{}, nil)
			}
		})
	}
	for _, b := range bytes {
		call("Decode", func() {
			inbox.Decode(b)
			inbox.ParseStructured(b)
			inbox.ScanAcks(strings.NewReader(string(b)), 0, func(inbox.Ack, int64) bool { return true })
			inbox.ScanMonitorEraAcks(strings.NewReader(string(b)), func(string) bool { return true })
		})
	}
	call("RemoveInbox(zero)", func() {
		inbox.RemoveInbox(inbox.Files{}, func() (bool, error) { return false, nil })
	})
}
