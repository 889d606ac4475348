package claudeinbox_test

import (
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
)

func TestCheckFreshness(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return claudeinbox.FormatTime(now.Add(d)) }
	const sid = "017c3f59-43cc-4dc8-bfb6-5e9a5625a864"
	alive := func(pid int) bool { return pid == 42 }
	tests := []struct {
		name   string
		hb     claudeinbox.Heartbeat
		fresh  bool
		reason string
	}{
		{"fresh, v1 without state", claudeinbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(-2 * time.Second)}, true, ""},
		{"fresh, following", claudeinbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(-14 * time.Second), State: claudeinbox.StateFollowing}, true, ""},
		{"stale", claudeinbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(-16 * time.Second)}, false, claudeinbox.NotFreshStale},
		{"slightly ahead (clock jitter)", claudeinbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(3 * time.Second)}, true, ""},
		{"far in the future", claudeinbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(time.Hour)}, false, claudeinbox.NotFreshStale},
		{"unparseable last_seen", claudeinbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: "yesterday"}, false, claudeinbox.NotFreshStale},
		{"stopped", claudeinbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(0), State: claudeinbox.StateStopped}, false, claudeinbox.NotFreshState},
		{"standby", claudeinbox.Heartbeat{PID: 42, SessionID: sid, LastSeen: at(0), State: claudeinbox.StateStandby}, false, claudeinbox.NotFreshState},
		{"other session", claudeinbox.Heartbeat{PID: 42, SessionID: "aaaaaaaa-43cc-4dc8-bfb6-5e9a5625a864", LastSeen: at(0)}, false, claudeinbox.NotFreshOtherSession},
		{"pid gone", claudeinbox.Heartbeat{PID: 7, SessionID: sid, LastSeen: at(0)}, false, claudeinbox.NotFreshPIDGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := claudeinbox.CheckFreshness(tt.hb, now, sid, alive)
			if got.Fresh != tt.fresh || got.Reason != tt.reason {
				t.Errorf("CheckFreshness = %+v, want fresh %v reason %q", got, tt.fresh, tt.reason)
			}
		})
	}
}
