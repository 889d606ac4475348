package headless_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/oo-family/oo-claude/headless"
)

// FuzzParseTurns: any stdout (and any cost before the run) gives at most one turn per line, each with a
// cost that is not negative, and turns that marshal as JSON (the receipt
// and the result file carry them); the final turn agrees with ParseResult
// when that found a result event.
func FuzzParseTurns(f *testing.F) {
	// Shapes measured on 2.1.332 (trimmed): a prompt turn, a peer turn,
	// an error turn, and the lines around them.
	f.Add([]byte(`{"type":"system","subtype":"init","session_id":"s"}
{"type":"result","subtype":"success","is_error":false,"result":"first","session_id":"s","num_turns":1,"total_cost_usd":0.0003,"duration_ms":4110,"result_index":0}
{"type":"result","subtype":"success","is_error":false,"result":"second","session_id":"s","num_turns":1,"total_cost_usd":0.0006,"origin":{"kind":"peer","from":"e2e","msg_id":"8570fcd1-d107-4972-88f1-4a1180d596f2"},"result_index":1}
`), 0.0)
	f.Add([]byte(`{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","session_id":"s","num_turns":1,"total_cost_usd":0,"terminal_reason":"api_error"}`), 0.0)
	f.Add([]byte(`{"type":"result","total_cost_usd":5}`+"\n"+`{"type":"result","total_cost_usd":1,"origin":"x","result_index":-3}`), 0.5)
	f.Add([]byte("not json\n{\"type\":\"result\",\"result\":7}\n"), 0.0)
	// A result event whose keys are spelled with escapes is still one
	// (a substring prefilter once missed it).
	f.Add([]byte(`{"type":"system"}`+"\n"+`{"type":"\u0072esult","subtype":"success","total_cost_usd":1}`), 0.0)
	f.Fuzz(func(t *testing.T, stdout []byte, base float64) {
		turns := headless.ParseTurns(stdout, base)
		if n := bytes.Count(stdout, []byte("\n")) + 1; len(turns) > n {
			t.Fatalf("%d turns from %d lines", len(turns), n)
		}
		for i, tr := range turns {
			if tr.CostUSD < 0 || tr.Index < 0 {
				t.Fatalf("turn %d: %+v", i, tr)
			}
			if tr.StartedBy != "prompt" && tr.StartedBy != "peer" {
				t.Fatalf("turn %d started by %q", i, tr.StartedBy)
			}
		}
		if _, err := json.Marshal(turns); err != nil {
			t.Fatalf("turns do not marshal: %v", err)
		}
		if cr, ok := headless.ParseResult(stdout); ok && cr.Type == "result" && len(turns) > 0 && bytes.Count(bytes.TrimSpace(stdout), []byte("\n")) > 0 {
			last := turns[len(turns)-1]
			if last.Subtype != cr.Subtype || last.IsError != cr.IsError {
				t.Fatalf("final turn %+v, result %+v", last, cr)
			}
		}
	})
}
