package top

import (
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/observatory"
)

func usd(v float64) *float64 { return &v }

// costEvent is a cost event of sid at d after the fake clock.
func costEvent(sid string, d time.Duration, c observatory.Cost) observatory.Event {
	return observatory.Event{Event: observatory.EventCost, TS: ts(d), Session: sid, Cost: &c}
}

// TestCostColumn: each session's line shows the cost its stream told, as
// Claude Code's dollars as of its last exit and the tokens since, "-" when
// nothing is known; a later cost event moves the figure; at 80×24 the
// column survives the cut of a long line, and without UTF-8 it is ASCII.
func TestCostColumn(t *testing.T) {
	for _, utf := range []bool{true, false} {
		m := newModel(t, Options{UTF8: utf, Station: "box"}, 80, 24)
		station3(m)
		m.Update(eventsMsg{evs: []observatory.Event{
			costEvent(idA, 0, observatory.Cost{USD: usd(0.0026253), Tokens: 1234}),
			costEvent(idC, 0, observatory.Cost{Tokens: 12345}),
			{Event: observatory.EventLineQueued, TS: ts(time.Second), Session: idA, Line: strings.Repeat("a long line ", 20)},
		}})
		ls := lines(t, m)
		ge := "≥"
		if !utf {
			ge = ">="
		}
		for _, c := range []struct{ name, want string }{
			{"alpha", "pend 3     1h $0.0026+1.2k tok  in"},
			{"gamma", "pend 0    45s 12.3k tok"},
			{"beta", "pend 0     3d -"},
		} {
			if _, l := lineWith(ls, c.name); !strings.Contains(l, c.want) {
				t.Errorf("utf8 %t: %s's line %q lacks %q", utf, c.name, l, c.want)
			}
		}
		m.Update(eventsMsg{evs: []observatory.Event{
			costEvent(idA, 2*time.Second, observatory.Cost{USD: usd(0.0051)}),
			costEvent(idC, 2*time.Second, observatory.Cost{Tokens: 4100, Bounded: true}),
			costEvent(idB, 2*time.Second, observatory.Cost{USD: usd(1.5), UnknownModelCost: true, Tokens: 999}),
		}})
		ls = lines(t, m)
		for _, c := range []struct{ name, want string }{
			{"alpha", "pend 3     1h $0.0051    in "},
			{"gamma", "pend 0    45s " + ge + "4.1k tok"},
			{"beta", "pend 0     3d " + ge + "$1.50+999 tok"},
		} {
			if _, l := lineWith(ls, c.name); !strings.Contains(l, c.want) {
				t.Errorf("utf8 %t, after the second events: %s's line %q lacks %q", utf, c.name, l, c.want)
			}
		}
	}
}

// TestDollars: a dollar figure is rounded for a person, never to a forged $0.
func TestDollars(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "$0.0000"}, {1.05e-05, "<$0.0001"}, {0.0026253, "$0.0026"}, {0.5, "$0.5000"}, {12.3456, "$12.35"}, {250.4, "$250"}} {
		if got := dollars(c.v); got != c.want {
			t.Errorf("dollars(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
