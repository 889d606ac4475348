package inbox_test

import (
	"context"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/hostile"
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
	in := hostile.NewInputs(t)
	strs, paths, durs, bytes, empty := in.Strs, in.Paths, in.Durs, in.Bytes, in.Dir
	alive := func(int) bool { return true }

	call := func(desc string, f func()) {
		t.Helper()
		hostile.Call(t, desc, 30*time.Second, f)
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
			inboxv1.FilesFor(empty, s)
			inbox.CheckFreshness(inboxv1.Heartbeat{SessionID: s, PID: -1, LastSeen: s, State: inboxv1.State(s)}, time.Unix(math.MaxInt32, 0), s, alive)
			inbox.CheckLine([]byte(s))
			inbox.CheckFrom(s)
			inboxv1.CheckPriority(s)
			inbox.SanitizeFrom(s)
			inbox.SenderTag(s)
			inbox.Tagged(s, s)
			jsonrow.ParseTime(s)
			inbox.ReadState(empty, s, time.Time{}, nil)
		})
	}
	for _, p := range paths {
		call("readers("+p+")", func() {
			inboxv1.FilesFor(p, p)
			inbox.ReadAcks(p, -1)
			inbox.ReadAcks(p, math.MaxInt64)
			inbox.ReadAttempt(p)
			inbox.GenerationOf(p, 0)
			inbox.GenerationOf(p, math.MaxUint64)
			inbox.ReadOffset(p)
			hb, _ := inbox.ReadHeartbeat(p)
			inbox.HeartbeatFreshness(p, time.Time{}, p, alive)
			inbox.CheckFreshness(hb, time.Time{}, p, alive)
			inbox.CheckTrust(inboxv1.FilesFor(p, p), -1)
			inbox.CheckTrust(inboxv1.Files{}, 0)
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
			inbox.ScanAcks(strings.NewReader(string(b)), 0, func(inboxv1.Ack, int64) bool { return true })
			inbox.ScanMonitorEraAcks(strings.NewReader(string(b)), func(string) bool { return true })
		})
	}
	call("RemoveInbox(zero)", func() {
		inbox.RemoveInbox(inboxv1.Files{}, func() (bool, error) { return false, nil })
	})
}
