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
		hb     inbox.Heartbeat
		fresh  bool
		reason inboxv1.Reason
	}{
		{"fresh, v1 without state", inbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(-2 * time.Second)}, true, ""},
		{"fresh, following", inbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(-14 * time.Second), State: inbox.StateFollowing}, true, ""},
		{"stale", inbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(-16 * time.Second)}, false, inbox.NotFreshStale},
		{"slightly ahead (clock jitter)", inbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(3 * time.Second)}, true, ""},
		{"far in the future", inbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(time.Hour)}, false, inbox.NotFreshStale},
		{"unparseable last_seen", inbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: "yesterday"}, false, inbox.NotFreshStale},
		{"stopped", inbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(0), State: inbox.StateStopped}, false, inbox.NotFreshState},
		{"standby", inbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(0), State: inbox.StateStandby}, false, inbox.NotFreshState},
		{"other session", inbox.Heartbeat{PID: 42, SessionID: "aaaaaaaa-43cc-4dc8-bfb6-5e9a5625a864", LastSeen: at(0)}, false, inbox.NotFreshOtherSession},
		{"pid gone", inbox.Heartbeat{PID: 7, SessionID: sid, LastSeen: at(0)}, false, inbox.NotFreshPIDGone},
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
