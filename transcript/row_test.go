package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

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
		r, err := transcriptfile.ParseRow([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		kind, ok := promptKind(&r)
		if kind != want[i].kind || ok != want[i].ok {
			t.Errorf("row %d (%.60s): PromptKind = %q, %v; want %q, %v", i, line, kind, ok, want[i].kind, want[i].ok)
		}
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
		{"long", `{"command":"` + strings.Repeat("é", 300) + `"}`, strings.Repeat("é", maxToolInput-1) + "…"},
		{"not an object", `"x"`, `"x"`},
		{"empty", ``, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summarizeInput([]byte(tt.input)); got != tt.want {
				t.Errorf("summarizeInput(%s) = %q, want %q", tt.input, got, tt.want)
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
		r, err := transcriptfile.ParseRow([]byte(line))
		if err != nil {
			if !errors.Is(err, transcriptfile.ErrBadRow) {
				t.Fatalf("error %v does not wrap transcriptfile.ErrBadRow", err)
			}
			return
		}
		// None of the accessors may panic on whatever parsed.
		promptKind(&r)
		r.PeerOrigin()
		r.FinalAnswer()
		r.Time()
		r.Message.Blocks()
		if r.Attachment != nil {
			transcriptfile.TextOf(r.Attachment.Prompt)
		}
		for _, bl := range r.Message.Blocks() {
			summarizeInput(bl.Input)
		}
		var acc pending
		acc.add(&r)
		if kind, ok := promptKind(&r); ok {
			acc.finish(&r, kind)
		}
	})
}

// TestTypedPromptAndBlockedTools: rows recorded from the real Claude Code
// 2.1.332 (testdata/real, by e2e's TestInteractiveReadLabels and
// TestHeadlessReadBlocked). A prompt typed into the interactive TUI
// (origin kind "human", promptSource "typed") is the user's; it was
// PromptSystem. A Bash call the tool blocked ("<tool_use_error>Blocked:
// standalone sleep 25") and one the permission check refused
// (toolDenialKind, permissionDecision reject) are marked Blocked; a call
// that ran, and one that failed while running, are not.
func TestTypedPromptAndBlockedTools(t *testing.T) {
	for _, c := range []struct {
		file, prompt string
		kind         PromptKind
	}{
		{"testdata/real/typed-and-blocked.jsonl", "typed prompt 2ea080c3", PromptUser},
		{"testdata/real/permission-denied.jsonl", "run touch", PromptUser},
	} {
		ex, err := Exchanges(c.file, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ex) != 1 || ex[0].Prompt.Kind != c.kind || ex[0].Prompt.Text != c.prompt {
			t.Fatalf("%s: %+v; want one exchange, prompt %q of kind %s", c.file, ex, c.prompt, c.kind)
		}
		if len(ex[0].Tools) != 1 || !ex[0].Tools[0].Blocked {
			t.Errorf("%s: tools %+v; want the one Bash call blocked", c.file, ex[0].Tools)
		}
	}
	b := newBuilder(testSID, testCWD)
	b.prompt("run it").
		assistant("m1", "tool_use", toolUse("t1", "Bash", map[string]any{"command": "false"})).
		raw(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 1","is_error":true}]}}`).
		assistant("m2", "tool_use", toolUse("t2", "Bash", map[string]any{"command": "true"})).
		toolResult("t2", "ok").
		assistant("m3", "end_turn", textBlock("done"))
	path := filepath.Join(t.TempDir(), testSID+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ex, _ := exchangesOf(t, path, 1)
	if len(ex) != 1 || len(ex[0].Tools) != 2 {
		t.Fatalf("exchanges %+v; want one with two tools", ex)
	}
	for _, tc := range ex[len(ex)-1].Tools {
		if tc.Blocked {
			t.Errorf("%s (%s) is marked blocked; it ran", tc.ID, tc.Input)
		}
	}
}

// summarizeInputMap is summarizeInput as it was, through a map and
// encoding/json alone: the reference of its one-pass scan.
func summarizeInputMap(input []byte) string {
	s := inputField(input)
	if s == "" {
		var buf bytes.Buffer
		if json.Compact(&buf, input) == nil {
			s = buf.String()
		}
	}
	return clip(oneLine(s), maxToolInput)
}

// inputSamples are tool inputs for every rule of inputFieldScan.
var inputSamples = []string{
	`{"command":"go test ./...","description":"run"}`, `{"description":"d","command":"c"}`,
	`{"command":"first","command":"second"}`, `{"command":"x","command":1}`, `{"command":1,"command":"y"}`,
	`{"command":"","file_path":"/f"}`, `{"command":null,"path":"p"}`, `{"command":["a"],"url":"u"}`,
	`{"Command":"case","query":"q"}`, `{"comm\u0061nd":"escaped key"}`, `{"commänd":"not ascii"}`,
	`{"command":"esc\"aped \u00e9 \n"}`, `{"command":"bad \xff utf8"}`, `  {"command":"ws"}  `,
	`{"command":"x"} trailing`, `{"command":"x",}`, `{"a":{"b":[1,2,{"c":"d"}]},"skill":"s"}`,
	`{}`, `[]`, `"x"`, `null`, ``, `{"b":1,"a":[true]}`, `{"command":"` + strings.Repeat("é", 300) + `"}`,
}

// TestInputFieldScan: the one-pass scan picks inputField's field on every
// sample it answers, and summarizeInput's summary is the map's.
func TestInputFieldScan(t *testing.T) {
	answered := 0
	for _, in := range inputSamples {
		if f, ok := inputFieldScan([]byte(in)); ok {
			answered++
			if want := inputField([]byte(in)); f != want {
				t.Errorf("inputFieldScan(%s) = %q, inputField %q", in, f, want)
			}
		}
		if got, want := summarizeInput([]byte(in)), summarizeInputMap([]byte(in)); got != want {
			t.Errorf("summarizeInput(%s) = %q, want %q", in, got, want)
		}
	}
	if answered < len(inputSamples)/2 {
		t.Errorf("the scan answered %d of %d samples itself", answered, len(inputSamples))
	}
}

// FuzzInputFieldScan holds summarizeInput to the map's summary for any
// input.
func FuzzInputFieldScan(f *testing.F) {
	for _, in := range inputSamples {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if f, ok := inputFieldScan([]byte(in)); ok {
			if want := inputField([]byte(in)); f != want {
				t.Fatalf("inputFieldScan(%q) = %q, inputField %q", in, f, want)
			}
		}
		if got, want := summarizeInput([]byte(in)), summarizeInputMap([]byte(in)); got != want {
			t.Fatalf("summarizeInput(%q) = %q, want %q", in, got, want)
		}
	})
}
