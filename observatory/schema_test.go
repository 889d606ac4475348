package observatory_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/observatory"
)

// v0Fields is v0.1's list of the oo-claude/sessions/v0 fields, transcribed
// from the design's schema block (the reference reader's fields, then the
// "+" additions), with the JSON kind each must have: s string, n number,
// b bool, a array, o object; "?" allows null. "x[]" is an element of the
// array x (children are session ids: v0.1 does not spell their shape).
var v0Fields = map[string]string{
	"schema": "s", "generated_at": "s", "station": "s", "sessions": "a", "sessions[]": "o",
	"sessions[].session": "s", "sessions[].name": "s", "sessions[].pid": "n", "sessions[].status": "s",
	"sessions[].cwd": "s", "sessions[].version": "s", "sessions[].started_ms": "n",
	"sessions[].riders": "a", "sessions[].riders[]": "o",
	"sessions[].riders[].agent": "s", "sessions[].riders[].started": "s?", "sessions[].riders[].last_activity_s": "n",
	"sessions[].riders[].rows": "n", "sessions[].riders[].state": "s", "sessions[].riders[].last_step": "s",
	"sessions[].riders[].last_text":   "s",
	"sessions[].riders[].description": "s", "sessions[].riders[].agent_type": "s", "sessions[].riders[].model": "s",
	"sessions[].riders[].state_reason": "s", "sessions[].riders[].path": "s", "sessions[].riders[].bytes": "n",
	"sessions[].inbox":      "o",
	"sessions[].inbox.path": "s", "sessions[].inbox.exists": "b", "sessions[].inbox.lines": "n",
	"sessions[].inbox.acks": "n", "sessions[].inbox.pending": "n",
	"sessions[].inbox.doorman":     "o?",
	"sessions[].inbox.doorman.pid": "n", "sessions[].inbox.doorman.last_seen_s": "n?",
	"sessions[].inbox.doorman.fresh": "b", "sessions[].inbox.doorman.delivered": "n",
	"sessions[].inbox.doorman.state": "s?", "sessions[].inbox.doorman.pid_alive": "b",
	"sessions[].inbox.doorman.since": "s?", "sessions[].inbox.doorman.last_seen": "s?",
	"sessions[].inbox.doorman.mode": "s?", "sessions[].inbox.doorman.version": "s?",
	"sessions[].inbox.doorman.not_fresh_because": "s?",
	"sessions[].inbox.last_line":                 "s?",
	"sessions[].inbox.offset":                    "n?", "sessions[].inbox.pending_bytes": "n?", "sessions[].inbox.pending_source": "s",
	"sessions[].host_session": "s?", "sessions[].parent_host": "s?", "sessions[].parent_session": "s?",
	"sessions[].children": "a", "sessions[].children[]": "s", "sessions[].since": "s?", "sessions[].kind": "s", "sessions[].entrypoint": "s",
	"sessions[].riders_riding": "n", "sessions[].riders_total": "n", "sessions[].status_updated_ms": "n",
	"generator": "s", "riding_window_s": "n", "include_finished": "b",
	"offline_inboxes": "a", "offline_inboxes[]": "o",
	"offline_inboxes[].session": "s", "offline_inboxes[].pending": "n", "offline_inboxes[].lines": "n",
	"offline_inboxes[].last_line": "s?", "offline_inboxes[].doorman": "o?", "offline_inboxes[].path": "s",
	"offline_inboxes[].doorman.pid": "n", "offline_inboxes[].doorman.last_seen_s": "n?",
	"offline_inboxes[].doorman.fresh": "b", "offline_inboxes[].doorman.delivered": "n",
	"offline_inboxes[].doorman.state": "s?", "offline_inboxes[].doorman.pid_alive": "b",
	"offline_inboxes[].doorman.since": "s?", "offline_inboxes[].doorman.last_seen": "s?",
	"offline_inboxes[].doorman.mode": "s?", "offline_inboxes[].doorman.version": "s?",
	"offline_inboxes[].doorman.not_fresh_because": "s?",
}

// v0Extras are fields oo-claude adds beyond v0.1's list (additions are
// allowed; listing them here keeps every addition deliberate).
var v0Extras = map[string]string{"warnings": "a", "sessions[].station": "s",
	"starts": "a", "starts[]": "o", "starts[].session": "s", "starts[].state": "s", "starts[].result_file": "s",
	"starts[].unit": "s?", "starts[].pid": "n?", "starts[].supervisor_pid": "n?", "starts[].started_at": "s?",
	"starts[].ended_at": "s?", "starts[].reason": "s?", "starts[].finalized": "b"}

// jsonKinds walks a decoded JSON value and records, for every object key
// path (arrays as "[]"), the kinds seen there.
func jsonKinds(v any, path string, out map[string]map[string]bool) {
	add := func(k string) {
		if out[path] == nil {
			out[path] = map[string]bool{}
		}
		out[path][k] = true
	}
	switch x := v.(type) {
	case map[string]any:
		if path != "" {
			add("o")
		}
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			jsonKinds(e, p, out)
		}
	case []any:
		add("a")
		for _, e := range x {
			jsonKinds(e, path+"[]", out)
		}
	case string:
		add("s")
	case float64:
		add("n")
	case bool:
		add("b")
	case nil:
		add("null")
	}
}

// checkV0Fields reports every v0.1 field that is missing or of the wrong
// kind, and every field that is neither v0.1's nor a listed extra. doc must
// hold at least one of everything (a session with a rider and a doorman,
// an offline inbox with a doorman) for the nested fields to be seen.
func checkV0Fields(t *testing.T, raw []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	seen := map[string]map[string]bool{}
	jsonKinds(v, "", seen)
	var problems []string
	for path, kind := range v0Fields {
		kinds, ok := seen[path]
		if !ok {
			problems = append(problems, "missing: "+path)
			continue
		}
		for k := range kinds {
			if k != strings.TrimSuffix(kind, "?") && !(k == "null" && strings.HasSuffix(kind, "?")) {
				problems = append(problems, "kind of "+path+": "+k+", want "+kind)
			}
		}
	}
	for path := range seen {
		if _, ok := v0Fields[path]; ok {
			continue
		}
		if _, ok := v0Extras[path]; ok || strings.HasPrefix(path, "warnings[]") {
			continue
		}
		problems = append(problems, "not in v0.1's list: "+path)
	}
	sort.Strings(problems)
	if diff := cmp.Diff([]string(nil), problems); diff != "" {
		t.Errorf("schema oo-claude/sessions/v0 (-want +got):\n%s", diff)
	}
}

func TestSchemaFields(t *testing.T) {
	_, st := synthetic(t)
	doc, err := observatory.Build(context.Background(), observatory.Options{Station: st, IncludeFinished: true, RidingWindow: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	checkV0Fields(t, raw)

	// The zero document still carries every top-level field.
	raw, err = json.Marshal(observatory.Document{})
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	json.Unmarshal(raw, &top)
	for path := range v0Fields {
		if !strings.Contains(path, ".") && !strings.Contains(path, "[]") {
			if _, ok := top[path]; !ok {
				t.Errorf("zero document lacks %q", path)
			}
		}
	}
}

func TestNullString(t *testing.T) {
	tests := []struct {
		name string
		in   inboxv1.NullString
		json string
	}{
		{"empty is null", "", "null"},
		{"text", "a\"b", `"a\"b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.in)
			if err != nil || string(b) != tt.json {
				t.Fatalf("marshal: %s, %v; want %s", b, err, tt.json)
			}
			var back inboxv1.NullString
			if err := json.Unmarshal(b, &back); err != nil || back != tt.in {
				t.Errorf("round trip: %q, %v", back, err)
			}
		})
	}
}
