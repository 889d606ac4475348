package claudeinbox_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
)

// BenchmarkSend is a whole send against the fake doorman: append, read the
// heartbeat, wait for the ack (woken by its file event), write the receipt.
// ack-µs/op is the ack latency alone (append to ack seen).
func BenchmarkSend(b *testing.B) {
	w := newWorld(b)
	r := w.session(b, "bench")
	w.doorman(b, r.SessionID, fakedoorman.Options{})
	req := claudeinbox.Request{Target: r.SessionID, Line: "benchmark line: what is the status of the build?", From: "bench"}
	var waited time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v, err := w.sender.Send(context.Background(), req)
		if err != nil || !v.Class.Delivered() {
			b.Fatalf("%s %v", v.Class, err)
		}
		waited += v.Waited
	}
	b.ReportMetric(float64(waited.Microseconds())/float64(b.N), "ack-µs/op")
}

// BenchmarkAppend is the append alone: one typical tagged line, one
// O_APPEND write (open, write, seek, close), as Send does it.
func BenchmarkAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.inbox")
	line := []byte(inbox.Tagged("benchmark line: what is the status of the build? please answer briefly.", "mama"))
	b.SetBytes(int64(len(line) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fsx.AppendLine(path, line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendInbox is the append as Send does it now: BenchmarkAppend
// plus the removal protocol's shared flock and the check that the path
// still names the file (one lstat).
func BenchmarkAppendInbox(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.inbox")
	line := []byte(inbox.Tagged("benchmark line: what is the status of the build? please answer briefly.", "mama"))
	b.SetBytes(int64(len(line) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inbox.AppendInbox(path, line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendNoDoorman is a whole send to a running session with no
// heartbeat (queued-no-doorman, Wait 0): since the sender looks for the
// session's doorman in the process table before it writes (does it follow
// another inbox directory?), this is the send that pays for that look-up;
// the session process has no child.
func BenchmarkSendNoDoorman(b *testing.B) {
	w := newWorld(b)
	w.sender.Wait = 0
	r := w.session(b, "bench")
	req := claudeinbox.Request{Target: r.SessionID, Line: "benchmark line: what is the status of the build?", From: "bench"}
	b.ReportAllocs()
	for b.Loop() {
		if v, _ := w.sender.Send(context.Background(), req); v.Class != claudeinbox.QueuedNoDoorman {
			b.Fatalf("%s (%s)", v.Class, v.Note)
		}
	}
}

// BenchmarkFollowedInbox is the look-up alone for a session whose
// process has one child, a doorman holding its lock open: the children
// lists of the claude pid, then the open-file links of the child.
func BenchmarkFollowedInbox(b *testing.B) {
	w := newWorld(b)
	r := w.fs.AddSession(fakestation.Session{Name: "bench", DoormanInbox: filepath.Join(w.fs.Root, "theirs")})
	sess := station.Session{Row: r}
	b.ReportAllocs()
	for b.Loop() {
		if f := claudeinbox.FollowedInbox(station.Proc{}, sess, w.fs.Paths.InboxDir); !f.Elsewhere {
			b.Fatalf("%+v", f)
		}
	}
}

// BenchmarkDoormanEnviron is the alternative weighed and not taken: find
// the same child, then read its environment (/proc/<pid>/environ, 64 KiB
// at most) for OO_CLAUDE_INBOX_DIR and HOME, the inputs of its path rule.
func BenchmarkDoormanEnviron(b *testing.B) {
	w := newWorld(b)
	r := w.fs.AddSession(fakestation.Session{Name: "bench", DoormanInbox: filepath.Join(w.fs.Root, "theirs")})
	p := station.Proc{}
	b.ReportAllocs()
	for b.Loop() {
		kids, err := p.Children(r.PID)
		if err != nil || len(kids) != 1 {
			b.Fatalf("%v %v", kids, err)
		}
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(kids[0]), "environ"))
		if err != nil {
			b.Fatal(err)
		}
		env, _ := io.ReadAll(io.LimitReader(f, 64<<10))
		f.Close()
		found := false
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.HasPrefix(kv, []byte("OO_CLAUDE_INBOX_DIR=")) || bytes.HasPrefix(kv, []byte("HOME=")) {
				found = true
			}
		}
		_ = found
	}
}

// BenchmarkSendRows is a whole send against the fake doorman on a station
// of 1 and 500 registry rows (the others of processes that do not run),
// by full id (the doorman's heartbeat names its owner: one row read) and
// by name (every row read).
func BenchmarkSendRows(b *testing.B) {
	for _, rows := range []int{1, 500} {
		w := newWorld(b)
		w.sender.MinInterval = 0
		r := w.fs.AddSession(fakestation.Session{PID: os.Getpid(), Name: "bench-rows"})
		for i := 1; i < rows; i++ {
			w.fs.AddSession(fakestation.Session{PID: 4_000_000 + i, ProcStart: "1", Name: "other-" + strconv.Itoa(i)})
		}
		w.doorman(b, r.SessionID, fakedoorman.Options{})
		for _, by := range []struct{ name, target string }{{"id", r.SessionID}, {"name", r.Name}} {
			b.Run("rows="+strconv.Itoa(rows)+"/"+by.name, func(b *testing.B) {
				req := claudeinbox.Request{Target: by.target, Line: "benchmark line", From: "bench"}
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					if v, err := w.sender.Send(context.Background(), req); err != nil || !v.Class.Delivered() {
						b.Fatalf("%s %v", v.Class, err)
					}
				}
				// The process's CPU time, the fake doorman's included: less
				// noisy than the wall time on a loaded machine.
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
