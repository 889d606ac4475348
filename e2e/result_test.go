package e2e

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestResultJSON: the result object `claude -p --output-format json` prints,
// for a success, a run out of turns and an API error: the fields headless
// Resume and Start read, with their JSON types.
func TestResultJSON(t *testing.T) {
	t.Parallel()
	const sid = "5b1e0d6c-3f0a-4c47-9a54-0d1e6f7c8a90"
	tests := []struct {
		name     string
		replies  []fakemodel.Reply
		args     []string
		wantExit int
		want     map[string]any // exact values
		types    map[string]string
	}{
		{
			name:    "success",
			replies: []fakemodel.Reply{fakemodel.Bash("echo one"), fakemodel.Text("all done")},
			args:    []string{"--allowedTools", "Bash", "--session-id", sid},
			want: map[string]any{
				"type": "result", "subtype": "success", "is_error": false, "result": "all done",
				"session_id": sid, "num_turns": 2.0, "stop_reason": "end_turn",
				"terminal_reason": "completed", "result_index": 0.0,
			},
		},
		{
			name:     "max turns",
			replies:  []fakemodel.Reply{fakemodel.Bash("echo one"), fakemodel.Bash("echo two")},
			args:     []string{"--allowedTools", "Bash", "--max-turns", "1"},
			wantExit: 1,
			want: map[string]any{
				"type": "result", "subtype": "error_max_turns", "is_error": true,
				"terminal_reason": "max_turns", "errors": []any{"Reached maximum number of turns (1)"},
			},
		},
		{
			name:     "api error",
			replies:  []fakemodel.Reply{fakemodel.Error(529, "overloaded")},
			wantExit: 1,
			want: map[string]any{
				"type": "result", "is_error": true, "terminal_reason": "api_error",
				"api_error_status": 529.0, "api_error_type": "overloaded_error",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, fakemodel.Options{Replies: tt.replies})
			s := w.start(pargs("do the thing", tt.args...))
			err := s.wait(90 * time.Second)
			if got := s.cmd.ProcessState.ExitCode(); got != tt.wantExit {
				s.fatalf("exit code = %d (%v), want %d", got, err, tt.wantExit)
			}
			res := s.result()
			got := map[string]any{}
			for k := range tt.want {
				got[k] = res[k]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				s.errorf("result fields (-want +got):\n%s", diff)
			}
			types := map[string]string{
				"session_id": "string", "num_turns": "number", "total_cost_usd": "number",
				"duration_ms": "number", "usage": "object", "modelUsage": "object",
				"permission_denials": "array", "result_index": "number", "is_error": "bool",
			}
			for k, want := range types {
				if got := jsonType(res[k]); got != want {
					s.errorf("result %q is %s (%v), want %s", k, got, res[k], want)
				}
			}
			if tt.want["subtype"] == "success" && tt.want["is_error"] == false {
				// The fake claude other projects' tests use prints the
				// keys oo-claude reads with the real CLI's JSON types.
				b, _ := json.Marshal(fakeclaude.ResultObject(fakeclaude.Script{Result: "hi"}, "017c3f59-43cc-4dc8-bfb6-5e9a5625a864"))
				fake := map[string]any{}
				if err := json.Unmarshal(b, &fake); err != nil {
					s.fatalf("fakeclaude result: %v", err)
				}
				for k, v := range fake {
					if jsonType(v) != jsonType(res[k]) {
						s.errorf("fakeclaude result %q is %s, the real CLI's is %s (%v)", k, jsonType(v), jsonType(res[k]), res[k])
					}
				}
			}
			if id, _ := res["session_id"].(string); !uuidRE.MatchString(id) {
				s.errorf("session_id %q is not a UUID", id)
			}
			if tt.want["is_error"] == true && res["result"] != nil && tt.want["subtype"] == "error_max_turns" {
				s.errorf("result = %v on error_max_turns, want null", res["result"])
			}
			// Offline: the fake model is the only server the CLI talked to,
			// and only about messages.
			for _, c := range w.model.Calls() {
				if c.Method != "POST" || c.Path != "/v1/messages" {
					s.errorf("the CLI called %s %s %s; the suite assumes it calls only POST /v1/messages", c.Method, c.Path, c.Query)
				}
			}
		})
	}
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}
