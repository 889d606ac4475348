package observatory_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/observatory"
)

func TestTree(t *testing.T) {
	s := func(id, parent string) observatory.Session {
		return observatory.Session{Session: id, ParentSession: observatory.NullString(parent)}
	}
	tests := []struct {
		name     string
		sessions []observatory.Session
		want     []observatory.Node
	}{
		{"flat", []observatory.Session{s("a", ""), s("b", "")}, []observatory.Node{{0, 0}, {1, 0}}},
		{"child after its parent, whatever the order",
			[]observatory.Session{s("c", "a"), s("a", ""), s("b", ""), s("d", "c")},
			[]observatory.Node{{1, 0}, {0, 1}, {3, 2}, {2, 0}}},
		{"parent not running: a root", []observatory.Session{s("a", "gone")}, []observatory.Node{{0, 0}}},
		{"own parent: a root", []observatory.Session{s("a", "a")}, []observatory.Node{{0, 0}}},
		{"cycle shown flat", []observatory.Session{s("a", "b"), s("b", "a"), s("c", "")},
			[]observatory.Node{{2, 0}, {0, 0}, {1, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, observatory.Tree(tt.sessions)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteTree(t *testing.T) {
	_, st := synthetic(t)
	doc, err := observatory.Build(context.Background(), observatory.Options{Station: st})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := observatory.WriteTree(&buf, doc); err != nil {
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
	_, st := synthetic(t)
	doc, err := observatory.Build(context.Background(), observatory.Options{Station: st, Only: sidA, IncludeFinished: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := observatory.WriteRiders(&buf, doc); err != nil {
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
	tests := []struct {
		name string
		d    *observatory.Doorman
		want string
	}{
		{"none", nil, "none"},
		{"fresh following", &observatory.Doorman{Fresh: true, State: "following"}, "following"},
		{"fresh v1", &observatory.Doorman{Fresh: true}, "fresh"},
		{"stopped", &observatory.Doorman{State: "stopped", NotFreshBecause: "state"}, "stopped"},
		{"stale", &observatory.Doorman{State: "following", NotFreshBecause: "stale"}, "stale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := observatory.DoormanState(tt.d); got != tt.want {
				t.Errorf("%q, want %q", got, tt.want)
			}
		})
	}
}
