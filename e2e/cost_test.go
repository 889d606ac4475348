package e2e

import (
	"math"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// costState is what a transcript's cost-state rows say, in order: the
// totalCostUSD of each and its input+output tokens over every model; and
// the input+output tokens of the assistant rows before each.
type costState struct {
	usd          float64
	tokens, rows float64
}

func costStates(t *testing.T, path string) []costState {
	t.Helper()
	var out []costState
	rows := 0.0
	for _, r := range readJSONL(t, path) {
		switch r["type"] {
		case "assistant":
			msg, _ := r["message"].(map[string]any)
			u, _ := msg["usage"].(map[string]any)
			in, _ := u["input_tokens"].(float64)
			o, _ := u["output_tokens"].(float64)
			rows += in + o
		case "cost-state":
			c := costState{rows: rows}
			c.usd, _ = r["totalCostUSD"].(float64)
			mu, _ := r["modelUsage"].(map[string]any)
			for _, m := range mu {
				m, _ := m.(map[string]any)
				in, _ := m["inputTokens"].(float64)
				o, _ := m["outputTokens"].(float64)
				c.tokens += in + o
			}
			out = append(out, c)
		}
	}
	return out
}

// TestCostState: what the cost column of `oo-claude top` relies on. Each
// claude process writes one cost-state row when it exits; a resumed
// process's row is the session's total (its tokens are every process's),
// and the result's total_cost_usd is its cost-state's totalCostUSD, so a
// resumed run's total_cost_usd counts the earlier processes too.
func TestCostState(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Text("first answer"), fakemodel.Text("second answer"), fakemodel.Text("third answer")}})
	first := w.start(pargs("first prompt")).mustSucceed(60 * time.Second)
	sid, _ := first["session_id"].(string)
	path := w.transcriptPath(w.cwd, sid)
	c1 := costStates(t, path)
	second := w.start(pargs("second prompt", "--resume", sid)).mustSucceed(60 * time.Second)
	c2 := costStates(t, path)
	t.Logf("first: result %v, cost-states %+v; second: result %v, cost-states %+v", first["total_cost_usd"], c1, second["total_cost_usd"], c2)
	if len(c1) != 1 || len(c2) != 2 || c2[0] != c1[0] {
		t.Fatalf("cost-state rows %+v after the first process, %+v after the second: want one per process exit", c1, c2)
	}
	if first["total_cost_usd"] != c1[0].usd || second["total_cost_usd"] != c2[1].usd {
		t.Errorf("total_cost_usd %v, %v; the cost-states' totalCostUSD %v, %v", first["total_cost_usd"], second["total_cost_usd"], c1[0].usd, c2[1].usd)
	}
	if c2[1].tokens != c2[1].rows || c2[1].rows <= c1[0].rows || c2[1].usd <= c1[0].usd {
		t.Errorf("the resumed process's cost-state %+v is not the session's total (the first's %+v)", c2[1], c1[0])
	}
	// oo-claude resume's receipt: total_cost_usd is the session's, as
	// claude's own, and the turn's cost_usd what this process added.
	rc, r := w.ooJSON([]string{"resume", sid, "third line"})
	c3 := costStates(t, path)
	if r.code != 0 || len(c3) != 3 {
		t.Fatalf("resume: exit %d, cost-states %+v\n%s", r.code, c3, r)
	}
	turns, _ := rc["turns"].([]any)
	var turn map[string]any
	if len(turns) == 1 {
		turn, _ = turns[0].(map[string]any)
	}
	cost, _ := turn["cost_usd"].(float64)
	t.Logf("resume: total_cost_usd %v, turns %v; cost-state %+v", rc["total_cost_usd"], turns, c3[2])
	if rc["total_cost_usd"] != c3[2].usd || math.Abs(cost-(c3[2].usd-c2[1].usd)) > 1e-12 || cost <= 0 {
		t.Errorf("resume receipt: total_cost_usd %v, the turn's cost_usd %v; want %v and %v (the session's before the run: %v)",
			rc["total_cost_usd"], cost, c3[2].usd, c3[2].usd-c2[1].usd, c2[1].usd)
	}
}
