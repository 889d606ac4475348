package transcriptfile

import (
	"errors"
	"testing"
)

func TestParseRowLenient(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		wantErr bool
		check   func(t *testing.T, r Row)
	}{
		{name: "not JSON", line: "hello", wantErr: true},
		{name: "array", line: "[1]", wantErr: true},
		{name: "empty", line: "", wantErr: true},
		{name: "broken object", line: `{"type":"user"`, wantErr: true},
		{name: "unknown type and fields", line: `{"type":"atis-latch","atis":"","extra":{"a":[1]}}`, check: func(t *testing.T, r Row) {
			if r.Type != "atis-latch" {
				t.Errorf("Type = %q", r.Type)
			}
		}},
		{name: "wrong field type keeps the rest", line: `{"type":"user","isMeta":"yes","cwd":"/w","message":{"role":"user","content":"hi"}}`, check: func(t *testing.T, r Row) {
			if r.CWD != "/w" || r.IsMeta || r.Message == nil {
				t.Errorf("row = %+v", r)
			}
		}},
		{name: "origin with a string pid", line: `{"type":"user","origin":{"kind":"peer","verifiedPeerPid":"12","msg_id":"m"}}`, check: func(t *testing.T, r Row) {
			if r.Origin == nil || r.Origin.MsgID != "m" || r.Origin.VerifiedPeerPid != 0 {
				t.Errorf("origin = %+v", r.Origin)
			}
		}},
		{name: "CRLF and spaces", line: " {\"type\":\"mode\"}\r", check: func(t *testing.T, r Row) {
			if r.Type != "mode" {
				t.Errorf("Type = %q", r.Type)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRow([]byte(tt.line))
			if tt.wantErr {
				if !errors.Is(err, ErrBadRow) {
					t.Fatalf("err = %v, want ErrBadRow", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
}

func TestFinalAnswer(t *testing.T) {
	tests := []struct {
		name string
		line string
		want bool
	}{
		{"end_turn text", `{"type":"assistant","message":{"content":[{"type":"text","text":"x"}],"stop_reason":"end_turn"}}`, true},
		{"stop_sequence", `{"type":"assistant","message":{"content":[{"type":"text","text":"x"}],"stop_reason":"stop_sequence"}}`, true},
		{"tool_use", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}],"stop_reason":"tool_use"}}`, false},
		{"end_turn with a tool_use block", `{"type":"assistant","message":{"content":[{"type":"text","text":"x"},{"type":"tool_use","name":"B"}],"stop_reason":"end_turn"}}`, false},
		{"streaming (no stop reason)", `{"type":"assistant","message":{"content":[{"type":"text","text":"x"}],"stop_reason":null}}`, false},
		{"max_tokens", `{"type":"assistant","message":{"content":[{"type":"text","text":"x"}],"stop_reason":"max_tokens"}}`, false},
		{"user", `{"type":"user","message":{"content":"x","stop_reason":"end_turn"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRow([]byte(tt.line))
			if err != nil {
				t.Fatal(err)
			}
			if got := r.FinalAnswer(); got != tt.want {
				t.Errorf("FinalAnswer = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPeerLineMsgID: the one rule of "a row shows a peer line's msg_id"
// (the seen and reply waits and the watch's line-seen events use it).
func TestPeerLineMsgID(t *testing.T) {
	const id = "7b0d0a4e-0f2a-4d4c-9a53-4f1f3c1e2a11"
	tests := []struct {
		name, line, want string
	}{
		{"user row with a peer origin", `{"type":"user","origin":{"kind":"peer","msg_id":"` + id + `"},"message":{"role":"user","content":"x"}}`, id},
		{"queued_command with a peer origin", `{"type":"attachment","attachment":{"type":"queued_command","prompt":"x","origin":{"kind":"peer","msg_id":"` + id + `"}}}`, id},
		{"user row, the user's own", `{"type":"user","message":{"role":"user","content":"x"}}`, ""},
		{"origin of another kind", `{"type":"user","origin":{"kind":"human","msg_id":"` + id + `"}}`, ""},
		{"attachment of another type", `{"type":"attachment","attachment":{"type":"todo","origin":{"kind":"peer","msg_id":"` + id + `"}}}`, ""},
		{"assistant row", `{"type":"assistant","origin":{"kind":"peer","msg_id":"` + id + `"}}`, ""},
		{"sidechain row", `{"type":"user","isSidechain":true,"origin":{"kind":"peer","msg_id":"` + id + `"}}`, ""},
	}
	for _, tt := range tests {
		r, err := ParseRow([]byte(tt.line))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := r.PeerLineMsgID(); got != tt.want {
			t.Errorf("%s: PeerLineMsgID() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestTokenTally: each request's tokens are counted once, its rows (one a
// content block) fed oldest or newest first; a rider's rows and other rows
// count nothing; a cost-state row carries Claude Code's figure.
func TestTokenTally(t *testing.T) {
	rows := []string{
		`{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":100,"output_tokens":5,"cache_creation_input_tokens":10,"cache_read_input_tokens":1000}}}`,
		`{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":7,"output_tokens":3}}}`,
		`{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":7,"output_tokens":3}}}`,
		`{"type":"assistant","isSidechain":true,"message":{"id":"r1","usage":{"input_tokens":9000}}}`,
		`{"type":"user","message":{"role":"user","content":"hi"}}`,
		`{"type":"assistant","message":{"id":"m3","usage":{"input_tokens":1}}}`,
	}
	for _, newestFirst := range []bool{false, true} {
		var tally TokenTally
		requests := 0
		for i := range rows {
			j := i
			if newestFirst {
				j = len(rows) - 1 - i
			}
			r, err := ParseRow([]byte(rows[j]))
			if err != nil {
				t.Fatal(err)
			}
			if tally.Add(&r) {
				requests++
			}
		}
		if tally.Tokens != 1115+10+1 || requests != 3 {
			t.Errorf("newest first %t: %d tokens in %d requests, want 1126 in 3", newestFirst, tally.Tokens, requests)
		}
	}
	r, err := ParseRow([]byte(`{"type":"cost-state","totalCostUSD":0.0026253,"hasUnknownModelCost":true}`))
	if err != nil || r.Type != RowCostState || r.TotalCostUSD == nil || *r.TotalCostUSD != 0.0026253 || !r.HasUnknownModelCost {
		t.Errorf("cost-state row %+v, %v", r, err)
	}
}
