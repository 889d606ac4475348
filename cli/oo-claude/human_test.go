package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/transcript"
)

func TestWriteTree(t *testing.T) {
	t.Parallel()
	// A parent with a child, and an inbox of a session that does not run.
	doc := &observatory.Document{
		Sessions: []observatory.Session{
			{Session: "aaaaaaaa-0000-4000-8000-000000000002", Name: "other-01", PID: 1002, Status: "idle",
				StartedMS:     time.Date(2026, 11, 30, 11, 30, 0, 0, time.UTC).UnixMilli(),
				ParentSession: "aaaaaaaa-0000-4000-8000-000000000001", Inbox: inboxv1.Inbox{Pending: 1}},
			{Session: "aaaaaaaa-0000-4000-8000-000000000001", Name: "work-e9", PID: 1001, Status: "busy",
				StartedMS: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC).UnixMilli(), RidersRiding: 2, RidersTotal: 4,
				Inbox: inboxv1.Inbox{Pending: 2, Doorman: &inboxv1.Doorman{Fresh: true, State: "following"}}},
		},
		OfflineInboxes: []observatory.OfflineInbox{{Session: "aaaaaaaa-0000-4000-8000-000000000003", Pending: 1, LastLine: "[x 📡] second"}},
	}
	var buf bytes.Buffer
	if err := writeTree(&buf, doc); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"SESSION                                 NAME      PID   STATUS  RIDERS  DOORMAN    PENDING  STARTED",
		"aaaaaaaa-0000-4000-8000-000000000001    work-e9   1001  busy    2/4     following  2        2026-11-30 11:00:00Z",
		"  aaaaaaaa-0000-4000-8000-000000000002  other-01  1002  idle    0/0     none       1        2026-11-30 11:30:00Z",
		"",
		"Inboxes of sessions not running, with waiting lines (they wait for the session's next doorman):",
		"  aaaaaaaa-0000-4000-8000-000000000003  pending 1  [x 📡] second",
		"",
	}, "\n")
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWriteRiders(t *testing.T) {
	t.Parallel()
	rider := func(agent string, state transcript.RiderState, reason string, ago int64, step, text string) transcript.Rider {
		return transcript.Rider{Agent: agent, State: state, StateReason: reason, LastActivityS: ago, Rows: 4,
			AgentType: "general-purpose", Description: "task " + agent, LastStep: step, LastText: text}
	}
	doc := &observatory.Document{
		IncludeFinished: true,
		Sessions: []observatory.Session{{
			Session: "aaaaaaaa-0000-4000-8000-000000000001", Name: "work-e9", PID: 1001, Status: "busy", RidersRiding: 2, RidersTotal: 4,
			Riders: []transcript.Rider{
				rider("a3", transcript.QuietFinished, transcript.ReasonStale, 1200, "", ""),
				rider("a2", transcript.QuietFinished, transcript.ReasonFinalText, 20, "Bash: ls", "All done."),
				rider("a1", transcript.Riding, "", 10, "Read: /x/y.go", "Reading."),
			},
		}},
	}
	var buf bytes.Buffer
	if err := writeRiders(&buf, doc); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{
		"aaaaaaaa-0000-4000-8000-000000000001 work-e9 pid 1001 (busy)  riders 2/4 riding\n",
		"  a3  quiet/finished (stale)       1200s ago  4 rows  general-purpose  task a3\n",
		"  a2  quiet/finished (final-text)  20s ago    4 rows  general-purpose  task a2\n",
		"  a1  riding                       10s ago    4 rows  general-purpose  task a1\n",
		"    a1: Read: /x/y.go\n",
		"    a2: All done.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("riders output lacks %q:\n%s", want, got)
		}
	}
}

func TestDoormanState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		d    *inboxv1.Doorman
		want string
	}{
		{"none", nil, "none"},
		{"fresh following", &inboxv1.Doorman{Fresh: true, State: "following"}, "following"},
		{"fresh v1", &inboxv1.Doorman{Fresh: true}, "fresh"},
		{"stopped", &inboxv1.Doorman{State: "stopped", NotFreshBecause: "state"}, "stopped"},
		{"stale", &inboxv1.Doorman{State: "following", NotFreshBecause: "stale"}, "stale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := doormanState(tt.d); got != tt.want {
				t.Errorf("%q, want %q", got, tt.want)
			}
		})
	}
}
