package fakedoorman_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakeowner"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
)

// realDoormanEnv makes the test binary the real doorman (TestMain).
const realDoormanEnv = "FAKEDOORMAN_TEST_REAL_DOORMAN"

// runRealDoorman is the real doorman of the owner that started this
// process, replaying the inbox once (the foreground --once).
func runRealDoorman() int {
	cfg, err := station.ConfigFromEnv(os.Getenv)
	if err != nil {
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dm := doorman.New(doorman.Options{Host: doorman.ThisProcess(cfg, os.Getenv), Config: cfg, Mode: doorman.ModeMCP, Once: true, Log: os.Stderr, Version: "conformance"})
	if err := dm.Run(ctx); err != nil {
		return 3
	}
	return 0
}

// conformanceLines are inbox lines a sender writes: plain, tagged,
// structured with a from and a priority, and another priority.
var conformanceLines = []string{
	"[chatgpt 📡] a tagged line",
	"an untagged line",
	`{"v":1,"line":"structured, now","from":"mama","priority":"now"}`,
	`{"v":1,"line":"structured, later","from":"papa","priority":"later"}`,
}

// shape is what a sender can read of a run: each ack's keys and the values
// that do not vary from run to run, the user frames the door got, and the
// stopped heartbeat's keys.
type shape struct {
	Acks      []map[string]any
	Frames    []frame
	Heartbeat []string
	State     inboxv1.State
	Delivered int
}

type frame struct{ SessionID, From, Priority, Content string }

// varying are the ack and heartbeat values that differ between any two
// runs (times, ids, pids, inodes): their keys are compared, not their values.
var varying = []string{"ts", "msg_id", "doorman_pid", "queued_at", "inode", "since", "last_seen", "stopped_at", "pid", "owner_pid", "peer_pid", "socket", "session_id", "mode", "version", "paced_ms"}

// mask replaces the varying values that are set (not "" or null) by "…".
func mask(m map[string]any) {
	for _, k := range varying {
		if v, ok := m[k]; ok && v != nil && v != "" {
			m[k] = "…"
		}
	}
}

// doorKeys are the heartbeat keys only a doorman with a door writes.
var doorKeys = []string{"peer_pid", "socket"}

func shapeOf(t *testing.T, o *fakeowner.Owner, withDoor bool) shape {
	t.Helper()
	var s shape
	for _, a := range o.Acks() {
		b, _ := json.Marshal(a)
		var m map[string]any
		json.Unmarshal(b, &m)
		mask(m)
		s.Acks = append(s.Acks, m)
	}
	frames := o.Door.Frames()
	// With no settle the door may read two connections out of order;
	// accept order is the delivery order.
	sort.SliceStable(frames, func(i, j int) bool { return frames[i].Conn < frames[j].Conn })
	for _, f := range frames {
		if f.Type == "user" {
			sid := "other"
			if f.SessionID == o.SessionID() {
				sid = "the session's"
			}
			s.Frames = append(s.Frames, frame{sid, f.From, f.Priority, f.Content})
		}
	}
	h, err := inbox.ReadHeartbeat(o.Files().Heartbeat)
	if err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	b, _ := json.Marshal(h)
	var m map[string]any
	json.Unmarshal(b, &m)
	if !withDoor {
		for _, k := range doorKeys {
			delete(m, k)
		}
	}
	s.Heartbeat = slices.Sorted(maps.Keys(m))
	s.State, s.Delivered = h.State, h.Delivered
	return s
}

// TestConformsToTheRealDoorman holds fakedoorman to the real doorman, as
// fakedoor's conformance test holds the fake door to the real one: for the
// same inbox lines both write the same acks (the same keys; the same
// class, reason, sha256, line_offset, from, priority, peer status and
// confirm), carry the same user frames through the door, and leave a
// stopped heartbeat with the same keys. A delivering fake (with a Door) is
// compared on lines the doorman delivers, a refusing one (Refuse) on a
// line it refuses. It fails when either drifts.
func TestConformsToTheRealDoorman(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		status string
		lines  []string
		fake   func(door string) fakedoorman.Options
		// noDoor: the fake is given no door, so its heartbeat names none
		// (the real one's peer_pid and socket are not compared).
		noDoor bool
	}{
		{"delivered busy", station.StatusBusy, conformanceLines, func(door string) fakedoorman.Options {
			return fakedoorman.Options{PeerStatus: station.StatusBusy, Door: door}
		}, false},
		{"delivered idle", station.StatusIdle, conformanceLines, func(door string) fakedoorman.Options {
			return fakedoorman.Options{PeerStatus: station.StatusIdle, Door: door}
		}, false},
		{"refused", station.StatusBusy, []string{"a NUL \x00 in the line"}, func(string) fakedoorman.Options {
			return fakedoorman.Options{Refuse: inboxv1.ReasonNUL}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			owner := fakeowner.Options{Status: tt.status, Door: fakedoor.Options{Guard: &fakedoor.Guard{}}}

			real := fakeowner.New(t, owner)
			for _, l := range tt.lines {
				real.Append(l)
			}
			cmd := exec.Command(self)
			cmd.Env = []string{realDoormanEnv + "=1", "OO_CLAUDE_DOOR_SETTLE_S=0"}
			child := real.Start(cmd)
			if code, err := child.Wait(ctx); err != nil || code != 0 {
				t.Fatalf("real doorman: exit %d %v\n%s", code, err, child.Stderr())
			}

			fake := fakeowner.New(t, owner)
			for _, l := range tt.lines {
				fake.Append(l)
			}
			opts := tt.fake(fake.Door.Path())
			if opts.Door != "" {
				opts.Transcript = fake.Transcript // acks wait for the enqueue row, as the real one's
			}
			d := fakedoorman.Start(t, fake.Station.Paths.InboxDir, fake.SessionID(), opts)
			if _, err := fake.WaitAcks(ctx, len(tt.lines)); err != nil {
				t.Fatalf("fake doorman: %v (%v)", err, d.Err())
			}
			d.Stop()
			if err := d.Err(); err != nil {
				t.Fatal(err)
			}

			want, got := shapeOf(t, real, !tt.noDoor), shapeOf(t, fake, !tt.noDoor)
			if len(want.Acks) != len(tt.lines) {
				t.Fatalf("the real doorman wrote %d acks, want %d", len(want.Acks), len(tt.lines))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fakedoorman differs from the real doorman (-real +fake):\n%s", diff)
			}
		})
	}
}
