package inbox_test

import (
	"testing"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
)

func TestCheckFreshness(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return jsonrow.FormatTime(now.Add(d)) }
	const sid = "017c3f59-43cc-4dc8-bfb6-5e9a5625a864"
	alive := func(pid int) bool { return pid == 42 }
	tests := []struct {
		name   string
		hb     inboxv1.Heartbeat
		fresh  bool
		reason inboxv1.Reason
	}{
		{"fresh, v1 without state", inboxv1.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(-2 * time.Second)}, true, ""},
		{"fresh, following", inboxv1.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(-14 * time.Second), State: inboxv1.StateFollowing}, true, ""},
		{"stale", inboxv1.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(-16 * time.Second)}, false, inboxv1.ReasonHeartbeatStale},
		{"slightly ahead (clock jitter)", inboxv1.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(3 * time.Second)}, true, ""},
		{"far in the future", inboxv1.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(time.Hour)}, false, inboxv1.ReasonHeartbeatStale},
		{"unparseable last_seen", inboxv1.Heartbeat{PID: 42, SessionID: sid, LastSeen: "yesterday"}, false, inboxv1.ReasonHeartbeatStale},
		{"stopped", inboxv1.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(0), State: inboxv1.StateStopped}, false, inboxv1.ReasonDoormanState},
		{"standby", inboxv1.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(0), State: inboxv1.StateStandby}, false, inboxv1.ReasonDoormanState},
		{"other session", inboxv1.Heartbeat{PID: 42, SessionID: "aaaaaaaa-43cc-4dc8-bfb6-5e9a5625a864", LastSeen: at(0)}, false, inboxv1.ReasonOtherSession},
		{"pid gone", inboxv1.Heartbeat{PID: 7, SessionID: sid, LastSeen: at(0)}, false, inboxv1.ReasonDoormanGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := inbox.CheckFreshness(tt.hb, now, sid, alive)
			if got.Fresh != tt.fresh || got.Reason != tt.reason {
				t.Errorf("CheckFreshness = %+v, want fresh %v reason %q", got, tt.fresh, tt.reason)
			}
		})
	}
}
