package claudeinbox_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
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
