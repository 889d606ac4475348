package claudeinbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/hostile"
)

// TestSendRefusesHostileInbox: a send to an inbox that is not a regular
// file, or that another user could have written (a world-writable inbox
// directory, an inbox file of another uid or writable by others), is refused
// at once with a reason naming the problem, and nothing is appended. Before,
// a FIFO hung the send while it held the throttle lock, and a line went into
// an inbox another user could write.
func TestSendRefusesHostileInbox(t *testing.T) {
	cases := []struct {
		name   string
		plant  func(t *testing.T, inboxDir, inbox string) error
		reason inboxv1.Reason
		inNote string
	}{
		{"fifo", func(t *testing.T, _, in string) error { return hostile.Plant(in, hostile.FIFO, nil, "") }, inboxv1.ReasonNotRegular, "not a regular file"},
		{"socket", func(t *testing.T, _, in string) error { return hostile.Plant(in, hostile.Socket, nil, "") }, inboxv1.ReasonNotRegular, "not a regular file"},
		{"dir", func(t *testing.T, _, in string) error { return hostile.Plant(in, hostile.Dir, nil, "") }, inboxv1.ReasonNotRegular, "not a regular file"},
		{"chardev", func(t *testing.T, _, in string) error { return hostile.Plant(in, hostile.CharDev, nil, "") }, inboxv1.ReasonNotRegular, "not a regular file"},
		{"symlink", func(t *testing.T, _, in string) error {
			return hostile.Plant(in, hostile.Symlink, nil, filepath.Join(t.TempDir(), "decoy"))
		}, inboxv1.ReasonSymlink, "symlink"},
		{"foreign inbox", func(t *testing.T, _, in string) error {
			return hostile.Plant(in, hostile.Foreign, []byte("planted\n"), "")
		}, inboxv1.ReasonUntrusted, "owned by uid 65534"},
		{"world-writable inbox", func(t *testing.T, _, in string) error {
			return hostile.Plant(in, hostile.WorldWritable, []byte("planted\n"), "")
		}, inboxv1.ReasonUntrusted, "chmod o-w"},
		{"world-writable inbox dir", func(t *testing.T, dir, _ string) error { return os.Chmod(dir, 0o777) }, inboxv1.ReasonUntrusted, "chmod go-w"},
		{"group-writable inbox dir", func(t *testing.T, dir, _ string) error { return os.Chmod(dir, 0o770) }, inboxv1.ReasonUntrusted, "group or others"},
		{"foreign inbox dir", func(t *testing.T, dir, _ string) error {
			if os.Geteuid() != 0 {
				return hostile.ErrNeedRoot
			}
			return os.Chown(dir, hostile.ForeignUID, hostile.ForeignUID)
		}, inboxv1.ReasonUntrusted, "owned by uid 65534"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.sender.Wait = 0
			sid := w.offline(t)
			in := w.fs.InboxPath(sid)
			if err := c.plant(t, w.fs.Paths.InboxDir, in); errors.Is(err, hostile.ErrNeedRoot) {
				t.Skip(err)
			} else if err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(in)
			start := time.Now()
			v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "hello", From: "t"})
			// Milliseconds: a planted file is refused, never waited on
			// (a FIFO would block forever). Generous for a loaded machine.
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("send took %v", d)
			}
			if v.Class != claudeinbox.Refused || v.Reason != c.reason || err == nil {
				t.Fatalf("verdict %s (%s) err %v, want refused (%s) with an error", v.Class, v.Reason, err, c.reason)
			}
			if !strings.Contains(v.Note, c.inNote) {
				t.Errorf("note %q does not name %q", v.Note, c.inNote)
			}
			if v.Written {
				t.Error("the line was written")
			}
			after, _ := os.Lstat(in)
			if (before == nil) != (after == nil) || (before != nil && (before.Mode() != after.Mode() || before.Size() != after.Size())) {
				t.Errorf("the inbox changed: %v -> %v", before, after)
			}
		})
	}
}

// TestSendTrustsTheStationsUID: the trust check demands the station's uid
// (station.Station.EUID), not the process's: a Sender whose station is
// another user's refuses an inbox this process owns, as untrusted, and
// writes nothing. Before, the check read os.Geteuid() and took the inbox.
func TestSendTrustsTheStationsUID(t *testing.T) {
	w := newWorld(t)
	w.sender.Wait = 0
	other := os.Geteuid() + 1
	w.sender.Station.EUID = func() int { return other }
	sid := w.offline(t)
	in := w.fs.InboxPath(sid)
	if err := os.WriteFile(in, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "hello", From: "t"})
	if v.Class != claudeinbox.Refused || v.Reason != inboxv1.ReasonUntrusted || err == nil {
		t.Fatalf("verdict %s (%s) err %v, want refused (untrusted) with an error", v.Class, v.Reason, err)
	}
	if want := fmt.Sprintf("owned by uid %d", os.Geteuid()); !strings.Contains(v.Note, want) {
		t.Errorf("note %q does not name %q", v.Note, want)
	}
	if v.Written {
		t.Error("the line was written")
	}
	if fi, err := os.Stat(in); err != nil || fi.Size() != 0 {
		t.Errorf("the inbox changed: %v %v", fi, err)
	}
}
