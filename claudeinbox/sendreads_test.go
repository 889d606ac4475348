package claudeinbox_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
)

// syscr is this process's read system calls so far (/proc/self/io).
func syscr(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io")
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "syscr: "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Skip("no syscr in /proc/self/io")
	return 0
}

// TestSendReadsOnce holds one send by full id to the reads it needs:
// the heartbeat is read once before the append whether or not its
// owner_pid names the target's registry row (the owner of a doorman that
// is no session's claude process sends the id through the registry),
// each process it names is looked up once, and the heartbeat is read
// again after the append (the verdict's) and at the end of the wait. The
// send waits for no ack (Wait 0, a fresh heartbeat and no doorman), so
// the count is exact: nothing else in the process reads meanwhile (the
// test is not parallel). The ack file is read once, up to the size its
// fstat saw: no read is spent to see its end.
func TestSendReadsOnce(t *testing.T) {
	for _, tt := range []struct {
		name     string
		ownerRow bool // the heartbeat's owner_pid is the target's row
		acks     bool // the ack file holds earlier lines' acks (read once, up to its size)
		// max is this code's count: the heartbeat, the registry row,
		// the claude and the doorman processes (two reads each: to
		// the end), the inbox's last byte; after the append the
		// heartbeat, the doorman's process, the ack file and the
		// heartbeat at the wait's end. A sender that reads the
		// heartbeat twice before the append, or the ack file on to
		// see its end, reads 14.
		max int
	}{
		{"owner is the row", true, false, 13},
		{"owner has no row", false, false, 13},
		{"an ack file of earlier lines", true, true, 13},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			row := w.session(t, "reads-target")
			owner := os.Getpid() // a process without a registry row
			if tt.ownerRow {
				owner = row.PID
			}
			now := time.Now()
			hb := inboxv1.Heartbeat{PID: os.Getpid(), SessionID: row.SessionID, Since: jsonrow.FormatTime(now), LastSeen: jsonrow.FormatTime(now),
				State: inboxv1.StateFollowing, OwnerPID: owner, Mode: "test", Version: "test"}
			if err := inbox.WriteHeartbeat(inboxv1.FilesFor(w.fs.Paths.InboxDir, row.SessionID).Heartbeat, hb); err != nil {
				t.Fatal(err)
			}
			if tt.acks {
				a := inboxv1.Ack{TS: jsonrow.FormatTime(now), SHA256: inbox.SHA256([]byte("an earlier line")), SessionID: row.SessionID, Class: inboxv1.AckDeliveredSteer, V: inboxv1.Version}
				if err := inbox.AppendAck(inboxv1.FilesFor(w.fs.Paths.InboxDir, row.SessionID).Ack, a); err != nil {
					t.Fatal(err)
				}
			}
			s := *w.sender
			s.Wait, s.MinInterval, s.Receipts = 0, 0, nil
			send := func(i int) (reads int, bytes uint64) {
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				before := syscr(t)
				v, err := s.Send(context.Background(), claudeinbox.Request{Target: row.SessionID, Line: fmt.Sprintf("reads %d", i), From: "reads"})
				after := syscr(t)
				runtime.ReadMemStats(&m1)
				if err != nil || v.Class != claudeinbox.Timeout {
					t.Fatalf("send: %v %v (%s), want a timeout", v.Class, err, v.Note)
				}
				return after - before, m1.TotalAlloc - m0.TotalAlloc
			}
			send(0) // the first makes the inbox and the throttle's files
			n, b := send(1)
			t.Logf("a send by full id: %d read system calls, %d heap bytes", n, b)
			if n > tt.max {
				t.Errorf("a send by full id: %d read system calls, want ≤ %d (the heartbeat and each process read once before the append)", n, tt.max)
			}
			// The look at the ack file takes a buffer of what it reads
			// (one ack line), not 64 KiB: a send allocates about 31 KiB
			// (42 KiB under -race); a 64 KiB buffer alone is over the bound.
			const maxBytes = 48 << 10
			if b > maxBytes {
				t.Errorf("a send by full id: %d heap bytes, want ≤ %d", b, maxBytes)
			}
		})
	}
}
