package observatory

import (
	"fmt"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// TestCostLookedMerge: a look back's result that comes after the follower
// read rows of its own is added to them, a request whose rows straddle
// the follower's start counted once (whether the follower read its
// rows before the result came or after); one that comes after a cost-state
// row the follower read is dropped; one for a session that ended, too.
func TestCostLookedMerge(t *testing.T) {
	request := func(id string, tokens int64) *transcriptfile.Row {
		return &transcriptfile.Row{Type: transcriptfile.RowAssistant, Message: &transcriptfile.Message{ID: id, Usage: &transcriptfile.Usage{InputTokens: tokens}}}
	}
	usd := 0.0026
	for _, c := range []struct {
		name   string
		rows   []*transcriptfile.Row // what the follower read before the result came
		ended  bool
		look   costLook
		want   string // the cost event's cost, "" for none
		tokens int64  // the session's tokens after one more request of 5 ("m9"), after rows
		after  []*transcriptfile.Row
	}{
		{"the last request straddles", []*transcriptfile.Row{request("m2", 100), request("m3", 40)},
			false, costLook{c: Cost{USD: &usd, Tokens: 1100}, known: true, lastMsg: "m2"}, "usd 0.0026 tokens 1140 bounded false", 1145, nil},
		{"nothing read meanwhile, the last request's rows go on", nil,
			false, costLook{c: Cost{USD: &usd, Tokens: 1100}, known: true, lastMsg: "m2"}, "usd 0.0026 tokens 1100 bounded false", 1105, []*transcriptfile.Row{request("m2", 100)}},
		{"bounded, no dollars", []*transcriptfile.Row{request("m7", 10)},
			false, costLook{c: Cost{Tokens: 4000, Bounded: true}, known: true, lastMsg: "m6"}, "usd nil tokens 4010 bounded true", 4015, nil},
		{"a cost-state row read meanwhile", []*transcriptfile.Row{request("m2", 100), {Type: transcriptfile.RowCostState, TotalCostUSD: &usd}},
			false, costLook{c: Cost{Tokens: 99}, known: true}, "", 5, nil},
		{"the session ended", nil, true, costLook{c: Cost{Tokens: 99}, known: true}, "", 5, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []Event
			w := &watcher{now: func() time.Time { return time.Unix(0, 0) }, byPID: map[int]*wsession{}}
			w.emitTo = func(e Event) { got = append(got, e) }
			s := &wsession{row: station.Row{PID: 7, SessionID: "s"}, turnRider: map[string]bool{}, costLooking: true}
			if !c.ended {
				w.byPID[7] = s
			}
			for _, r := range c.rows {
				s.addCost(r)
			}
			c.look.s = s
			w.costLooked(c.look)
			var cost string
			for _, e := range got {
				if e.Event == EventCost {
					usd := "nil"
					if e.Cost.USD != nil {
						usd = fmt.Sprint(*e.Cost.USD)
					}
					cost = fmt.Sprintf("usd %s tokens %d bounded %t", usd, e.Cost.Tokens, e.Cost.Bounded)
				}
			}
			if cost != c.want {
				t.Errorf("cost event %q, want %q", cost, c.want)
			}
			for _, r := range append(c.after, request("m9", 5)) {
				s.addCost(r)
			}
			if s.cost.Tokens != c.tokens {
				t.Errorf("after one more request: tokens %d, want %d", s.cost.Tokens, c.tokens)
			}
		})
	}
}
