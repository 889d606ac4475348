package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/observatory"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatchVerb: watch --json prints one event object per line as sessions
// come and go, and stops cleanly when its context ends; the human form is
// one line per event; a second argument is a usage error.
func TestWatchVerb(t *testing.T) {
	t.Parallel()
	for _, asJSON := range []bool{true, false} {
		fs := fakestation.New(t)
		old := fs.AddSession(fakestation.Session{Name: "old-a1"})
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb syncBuffer
		args := []string{"watch"}
		if asJSON {
			args = append(args, "--json")
		}
		done := make(chan error, 1)
		go func() { done <- run(ctx, args, strings.NewReader(""), &out, &errb, testProc(fs.Getenv)) }()
		waitFor := func(what string) {
			t.Helper()
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if strings.Contains(out.String(), what) {
					return
				}
			}
			t.Fatalf("no %q in %q", what, out.String())
		}
		waitFor(old.SessionID[:8])
		row := fs.AddSession(fakestation.Session{Name: "new-b2"})
		waitFor("new-b2")
		fs.RemoveSession(row.PID)
		waitFor("session-ended")
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("watch: %v (stderr %s)", err, errb.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if !asJSON {
			if !strings.Contains(lines[0], " session-started "+old.SessionID[:8]+"… name=old-a1") || !strings.HasSuffix(lines[0], "(already so)") {
				t.Errorf("human line %q", lines[0])
			}
			continue
		}
		var kinds []string
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			if m["event"] == nil || m["ts"] == nil || m["session"] == nil {
				t.Errorf("line %q lacks event, ts or session", l)
			}
			if m["session"] == row.SessionID {
				kinds = append(kinds, m["event"].(string))
			}
		}
		if got := strings.Join(kinds, " "); got != "session-started doorman session-ended" {
			t.Errorf("events of the new session: %s", got)
		}
	}
	if r := runInProcess(t, fakestation.New(t).Getenv, "", "watch", "a", "b"); r.code != exitUsage {
		t.Errorf("watch a b: exit %d, want usage", r.code)
	}
}

// TestHumanCostEvent: watch's readable line of a cost event carries the
// dollars exactly as Claude Code wrote them, the tokens since and the marks.
func TestHumanCostEvent(t *testing.T) {
	usd := 0.0026253
	for _, c := range []struct {
		cost observatory.Cost
		want string
	}{
		{observatory.Cost{USD: &usd, Tokens: 1234}, " usd=0.0026253 tokens=1234"},
		{observatory.Cost{USD: &usd, UnknownModelCost: true}, " usd=0.0026253 tokens=0 unknown_model_cost=true"},
		{observatory.Cost{Tokens: 4100, Bounded: true}, " tokens=4100 bounded=true"},
	} {
		ev := observatory.Event{Event: observatory.EventCost, TS: "2026-12-01T20:30:00.000Z", Session: "aaaaaaaa-1111-4111-8111-111111111111", Cost: &c.cost}
		if got := humanEvent(ev); !strings.HasSuffix(got, c.want) {
			t.Errorf("humanEvent = %q, want it to end %q", got, c.want)
		}
	}
}
