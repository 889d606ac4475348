package transcript

import (
	"errors"
	"strings"
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

func TestPromptKind(t *testing.T) {
	b := newBuilder(testSID, testCWD)
	b.prompt("typed").
		promptBlocks("a", "b").
		toolResult("toolu_1", "out").
		meta("<system-reminder>x</system-reminder>").
		peerPrompt("from a peer", peerOrigin("omi", "m1", 1, false)).
		sidechain("agent prompt").
		taskNotification("<task-notification/>").
		assistant("msg", "end_turn", textBlock("hi")).
		queuedCommand("mid-turn", peerOrigin("mama", "m2", 2, true)).
		raw(`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued"}}`).
		raw(`{"type":"user","turnOrigin":"peer","isMeta":true,"message":{"role":"user","content":"peer without origin"}}`).
		raw(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"},{"type":"text","text":"now-priority text"}]}}`)
	want := []struct {
		kind PromptKind
		ok   bool
	}{
		{PromptUser, true},
		{PromptUser, true},
		{"", false}, // tool results only
		{"", false}, // system meta row
		{PromptPeer, true},
		{"", false}, // sidechain
		{PromptSystem, true},
		{"", false}, // assistant
		{"", false}, // attachment
		{"", false}, // compaction summary
		{PromptPeer, true},
		{PromptUser, true}, // a text block beside the tool result
	}
	for i, line := range b.lines {
		r, err := ParseRow([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		kind, ok := r.PromptKind()
		if kind != want[i].kind || ok != want[i].ok {
			t.Errorf("row %d (%.60s): PromptKind = %q, %v; want %q, %v", i, line, kind, ok, want[i].kind, want[i].ok)
		}
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

func TestSummarizeInput(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"command", `{"command":"go test ./...","description":"run"}`, "go test ./..."},
		{"file", `{"file_path":"/a/b.go","old_string":"x"}`, "/a/b.go"},
		{"description when no command", `{"description":"list files","prompt":"SUBAGENT","subagent_type":"x"}`, "list files"},
		{"unknown tool", `{"b":1,"a":[true]}`, `{"b":1,"a":[true]}`},
		{"multi-line command", `{"command":"a\nb\tc"}`, "a b c"},
		{"long", `{"command":"` + strings.Repeat("é", 300) + `"}`, strings.Repeat("é", MaxToolInput-1) + "…"},
		{"not an object", `"x"`, `"x"`},
		{"empty", ``, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SummarizeInput([]byte(tt.input)); got != tt.want {
				t.Errorf("SummarizeInput(%s) = %q, want %q", tt.input, got, tt.want)
			}
		})
	}
}

func FuzzParseRow(f *testing.F) {
	b := newBuilder(testSID, testCWD)
	steeredTurn(b, 1)
	b.peerPrompt("p", peerOrigin("omi", "m", 1, false))
	for _, l := range b.lines {
		f.Add(l)
	}
	f.Add(`{"type":"user","message":{"content":[{"type":"text","text":1}]}}`)
	f.Add(`{"type":"attachment","attachment":{"type":"queued_command","prompt":[{"type":"text","text":"x"}],"origin":{"kind":"peer"}}}`)
	f.Fuzz(func(t *testing.T, line string) {
		r, err := ParseRow([]byte(line))
		if err != nil {
			if !errors.Is(err, ErrBadRow) {
				t.Fatalf("error %v does not wrap ErrBadRow", err)
			}
			return
		}
		// None of the accessors may panic on whatever parsed.
		r.PromptKind()
		r.PeerOrigin()
		r.FinalAnswer()
		r.Time()
		r.Message.Blocks()
		if r.Attachment != nil {
			textOf(r.Attachment.Prompt)
		}
		for _, bl := range r.Message.Blocks() {
			SummarizeInput(bl.Input)
		}
		var acc pending
		acc.add(&r)
		if kind, ok := r.PromptKind(); ok {
			acc.finish(&r, kind)
		}
	})
}
