package transcript

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var allowFacts = cmp.AllowUnexported(riderFacts{}, tailFacts{})

// general reads data through the general path (transcriptfile.ParseRow, Reader, bufio).
func general(tb testing.TB, data string) riderFacts {
	tb.Helper()
	rf, err := readRiderGeneral(strings.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatalf("readRiderGeneral: %v", err)
	}
	return rf
}

// fast reads data through the small-rider path.
func fast(tb testing.TB, data string) riderFacts {
	tb.Helper()
	rf, err := readRiderSmall(strings.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatalf("readRiderSmall: %v", err)
	}
	return rf
}

// riderCases are rider transcripts with what ReadRider must find in them.
func riderCases() []struct {
	name string
	data string
	want riderFacts
} {
	t0 := time.Date(2026, 11, 30, 12, 0, 1, 500e6, time.UTC) // the builder's first timestamp

	working := newBuilder(testSID, testCWD)
	working.prompt("task").assistant("m1", "tool_use", toolUse("t1", "Bash", map[string]any{"command": "make"}))

	done := newBuilder(testSID, testCWD)
	done.prompt("task").
		assistant("m1", "tool_use", toolUse("t1", "Read", map[string]any{"file_path": "/a"})).
		toolResult("t1", "x").
		assistant("m2", "end_turn", textBlock("All done:\nthree files.")).
		meta("<system-reminder>injected after the answer</system-reminder>")

	textThenTool := newBuilder(testSID, testCWD)
	textThenTool.prompt("task").
		assistant("m1", "", textBlock("Let me look.")).
		assistant("m1", "end_turn", toolUse("t1", "Glob", map[string]any{"pattern": "*.go"}))

	toolThenText := newBuilder(testSID, testCWD)
	toolThenText.prompt("task").
		assistant("m1", "", toolUse("t1", "Glob", map[string]any{"pattern": "*.go"})).
		assistant("m1", "end_turn", textBlock("Found them."))

	sidechain := newBuilder(testSID, testCWD)
	sidechain.sidechain("SUBAGENT-TASK: look").
		assistant("m1", "tool_use", toolUse("t1", "Grep", map[string]any{"pattern": "TODO"})).
		toolResult("t1", "3 hits").
		sidechain("and again")

	peerLast := newBuilder(testSID, testCWD)
	peerLast.prompt("task").
		assistant("m1", "end_turn", textBlock("Done.")).
		peerPrompt("one more thing", peerOrigin("omi", "m", 1, false))

	noise := newBuilder(testSID, testCWD)
	noise.raw(`{"type":"user","timestamp":17,"message":{"content":"x"}}`).
		raw(`{"type":"user","timestamp":"yesterday"}`).
		raw(`not json "user" at all`).
		raw(`["assistant"]`).
		raw(``).
		prompt("task").
		raw(`{"type":"assistant","message":"a string","timestamp":"2026-11-30T12:00:09Z"}`).
		raw(`{"type":"assistant","message":{"id":"m9","stop_reason":5,"content":[1,"x",null,{"type":"tool_use","name":"Bash","input":{"command":"ls"}},{"type":"text","text":7}]}}`).
		raw(`{"type":"assistant","isMeta":"yes","origin":"str","message":{"id":"m10","content":"plain string content\twith a tab"}}`).
		raw(`{"Type":"assistant","MESSAGE":{"ID":"m11","Stop_Reason":"end_turn","Content":[{"TYPE":"text","Text":"case folded keys"}]}}`).
		raw(`{"type":"assistant","message":{"id":"m12","content":[{"type":"tool_use","name":"Mystery","input":{"a":[1, 2],"b":"c"}}]},"message":{"stop_reason":"end_turn"}}`).
		raw(`{"type":"user","isMeta":true,"origin":{"kind":"task-notification"},"message":{"content":"injected"}}`).
		raw(`{"type":"assistant","message":[1],"timestamp":null}`).
		raw(`{"type":"assistant","message":5}`).
		raw(`{"type":"assistant","message":{"id":"m13","content":[{"type":"tool_use","name":"N\u00e9","input":null}]}}`).
		raw(`{"typ\u0065":"assistant","message":{"id":"m14","content":[{"type":"text","text":"escaped key"}]}}`).
		raw(`{"type":"assistant","message":{"id":"m15","id":"m16","content":[{"type":"text","text":"dup key"}]}}`).
		raw(`{"type":"assistant","Kind":1,"message":{"id":"m17","content":[{"type":"text","text":"non-ASCII key","Name":"x"}]}}`).
		raw(`{"type":"assistant","message":{"id":"m18","content":[{"type":"text","text":"bad number"}]},"n":-01}`).
		raw(`{"type":"assistant","message":{"id":"m19","content":[{"type":"text","text":"trailing"}]}} x`).
		raw(`{"type":"assistant","message":{"id":"m20","content":[{"type":"text","text":"deep"}]},"d":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`).
		raw(`{"type":"assistant","message":{"id":"m21","content":[{"type":"text","text":"bad \x escape"}]}}`).
		raw(`{"type":"assistant","message":{"id":"m22","content":[{"type":"text","text":"` + "\xff" + ` invalid utf-8 \ud800"}]}}`).
		raw(`  {"type":"user","isMeta":true,"origin":{"kind":"peer"},"message":{"content":[{"type":"text","text":"   "}]}}  `)

	long := newBuilder(testSID, testCWD)
	long.prompt("task").
		assistant("", "stop_sequence", textBlock(strings.Repeat("é long line ", 40)), toolUse("t", "Task", map[string]any{"prompt": "x\r\ny"}))

	cases := []struct {
		name string
		data string
		want riderFacts
	}{
		{"empty", "", riderFacts{}},
		{"only a torn line", `{"type":"user","timestamp":"2026-11-30T12:00:00Z"`, riderFacts{}},
		{"working", working.String(), riderFacts{rows: 2, started: t0, tail: tailFacts{lastStep: "Bash: make"}}},
		{"final text then a meta row", done.String(),
			riderFacts{rows: 5, started: t0, tail: tailFacts{lastStep: "Read: /a", lastText: "All done: three files.", final: true}}},
		{"final text then a torn tool call", done.String() + `{"type":"assistant","message":{"content":[{"type":"tool_use"`,
			riderFacts{rows: 5, started: t0, tail: tailFacts{lastStep: "Read: /a", lastText: "All done: three files.", final: true}}},
		{"multi-row message, tool after text", textThenTool.String(),
			riderFacts{rows: 3, started: t0, tail: tailFacts{lastStep: "Glob: *.go", lastText: "Let me look."}}},
		{"multi-row message, text after tool", toolThenText.String(),
			riderFacts{rows: 3, started: t0, tail: tailFacts{lastStep: "Glob: *.go", lastText: "Found them."}}},
		{"sidechain rows", sidechain.String(), riderFacts{rows: 4, started: t0, tail: tailFacts{lastStep: "Grep: TODO"}}},
		{"peer prompt last", peerLast.String(), riderFacts{rows: 3, started: t0, tail: tailFacts{lastText: "Done."}}},
		{"CRLF and blank lines", "\r\n\n" + strings.ReplaceAll(done.String(), "\n", "\r\n\r\n"),
			riderFacts{rows: 12, started: t0, tail: tailFacts{lastStep: "Read: /a", lastText: "All done: three files.", final: true}}},
		{"odd rows", noise.String(), riderFacts{rows: 24, started: t0,
			tail: tailFacts{lastStep: "Né: null", lastText: "\ufffd invalid utf-8 \ufffd"}}},
		{"long text, no message id", long.String(), riderFacts{rows: 2, started: t0,
			tail: tailFacts{lastStep: "Task: x y", lastText: clip(strings.TrimSpace(strings.Repeat("é long line ", 40)), maxRiderText), final: false}}},
	}
	for name, data := range syntheticTranscripts() {
		cases = append(cases, struct {
			name string
			data string
			want riderFacts
		}{name, data, riderFacts{rows: -1}})
	}
	return cases
}

// TestRiderPathsAgree: the small-rider path and the general path find the
// same facts in every case, and in its prefixes (each a transcript torn at
// that byte): every one of a small case, every step-th of a larger one.
func TestRiderPathsAgree(t *testing.T) {
	for _, tt := range riderCases() {
		t.Run(tt.name, func(t *testing.T) {
			g, f := general(t, tt.data), fast(t, tt.data)
			if diff := cmp.Diff(g, f, allowFacts); diff != "" {
				t.Fatalf("general (-) and small (+) paths disagree:\n%s", diff)
			}
			if tt.want.rows >= 0 {
				if diff := cmp.Diff(tt.want, f, allowFacts); diff != "" {
					t.Errorf("facts (-want +got):\n%s", diff)
				}
			}
			step := 1 + len(tt.data)/4096 // every byte of a small case
			for n := 0; n < len(tt.data); n += step {
				g, f := general(t, tt.data[:n]), fast(t, tt.data[:n])
				if diff := cmp.Diff(g, f, allowFacts); diff != "" {
					t.Fatalf("first %d bytes: general (-) and small (+) paths disagree:\n%s", n, diff)
				}
			}
		})
	}
}

// A rider above smallRiderBytes takes the general path and reads as the
// same bytes would on the small path; one at the limit takes the small path.
func TestReadRiderSizes(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	done := newBuilder(testSID, testCWD)
	done.prompt("task").
		assistant("m1", "tool_use", toolUse("t1", "Read", map[string]any{"file_path": "/a"})).
		toolResult("t1", "x").
		assistant("m2", "end_turn", textBlock("All done."))
	body := done.String()
	pad := func(n int) string { // n bytes of rows the rider ignores, each under 1 KiB
		var b strings.Builder
		for b.Len() < n {
			line := `{"type":"progress","data":"` + strings.Repeat("p", min(900, max(0, n-b.Len()-len(`{"type":"progress","data":""}`+"\n")))) + `"}` + "\n"
			b.WriteString(line)
		}
		return b.String()
	}
	for _, tt := range []struct {
		name string
		size int
	}{
		{"small", 2 << 10},
		{"at the limit", smallRiderBytes},
		{"just above", smallRiderBytes + 1},
		{"general", 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := pad(tt.size-len(body)) + body
			if len(data) != tt.size {
				t.Fatalf("fixture is %d bytes, want %d", len(data), tt.size)
			}
			p := filepath.Join(t.TempDir(), "agent-x.jsonl")
			writeFile(t, p, data)
			if err := os.Chtimes(p, now, now.Add(-time.Minute)); err != nil {
				t.Fatal(err)
			}
			got, err := ReadRider(p, now, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := riderFactsOf([]byte(data))
			if got.Rows != want.rows || !got.Started.Equal(want.started) || got.LastStep != "Read: /a" ||
				got.LastText != "All done." || got.State != QuietFinished || got.StateReason != ReasonFinalText {
				t.Errorf("ReadRider = %+v; want rows %d, started %v, final text", got, want.rows, want.started)
			}
		})
	}
}

func FuzzRiderPaths(f *testing.F) {
	for _, tt := range riderCases() {
		f.Add(tt.data)
	}
	f.Fuzz(func(t *testing.T, data string) {
		g, s := general(t, data), fast(t, data)
		if diff := cmp.Diff(g, s, allowFacts); diff != "" {
			t.Fatalf("general (-) and small (+) paths disagree:\n%s", diff)
		}
	})
}

// FuzzScanRow: scanRow reads every line it handles as encoding/json reads
// it into a tailRow.
func FuzzScanRow(f *testing.F) {
	for _, tt := range riderCases() {
		for _, l := range strings.Split(tt.data, "\n") {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		got, ts, ok, handled := scanRow([]byte(line))
		if !handled {
			return
		}
		var want tailRow
		wantOK := decodeRow([]byte(line), &want)
		var head struct {
			Timestamp string `json:"timestamp"`
		}
		decodeRow([]byte(line), &head)
		if ok != wantOK {
			t.Fatalf("scanRow ok = %v, encoding/json %v", ok, wantOK)
		}
		if !ok {
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("scanRow (-encoding/json +scanRow):\n%s", diff)
		}
		if ts != head.Timestamp {
			t.Fatalf("timestamp %q, encoding/json %q", ts, head.Timestamp)
		}
	})
}

// BenchmarkReadRider is ReadRider on a small rider (four rows, a meta file:
// the observatory's common case) and, for comparison, the two ways of
// reading the same open file.
func BenchmarkReadRider(b *testing.B) {
	done := newBuilder(testSID, testCWD)
	done.sidechain("look into it").
		assistant("m1", "tool_use", toolUse("t1", "Bash", map[string]any{"command": "ls -la"})).
		toolResult("t1", "ok").
		assistant("m2", "tool_use", toolUse("t2", "Read", map[string]any{"file_path": "/x/y.go"}))
	dir := b.TempDir()
	p := filepath.Join(dir, "agent-r01.jsonl")
	if err := os.WriteFile(p, []byte(done.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	meta := `{"agentType":"general-purpose","description":"task r01","model":"claude-haiku-5-5","finished":false}`
	if err := os.WriteFile(filepath.Join(dir, "agent-r01.meta.json"), []byte(meta), 0o600); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	b.Run("ReadRider", func(b *testing.B) {
		for b.Loop() {
			if r, err := ReadRider(p, now, 0); err != nil || r.LastStep != "Read: /x/y.go" || r.AgentType == "" {
				b.Fatal(r, err)
			}
		}
	})
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	size := int64(len(done.String()))
	for _, bc := range []struct {
		name string
		read func(*os.File, int64) (riderFacts, error)
	}{
		{"small-path", func(f *os.File, size int64) (riderFacts, error) { return readRiderSmall(f, size) }},
		{"general-path", func(f *os.File, size int64) (riderFacts, error) { return readRiderGeneral(f, size) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if rf, err := bc.read(f, size); err != nil || rf.tail.lastStep == "" {
					b.Fatal(rf, err)
				}
			}
		})
	}
}

// TestReadRiderSmallKeepsNothing: the small path's buffer is reused by
// the next read, so what it returns must not point into it: every case's
// facts, read one after another, are what each reads alone.
func TestReadRiderSmallKeepsNothing(t *testing.T) {
	cases := riderCases()
	var got []riderFacts
	for _, c := range cases {
		got = append(got, fast(t, c.data))
	}
	for i, c := range cases {
		if want := fast(t, c.data); !reflect.DeepEqual(got[i], want) {
			t.Errorf("%s: read before the others %+v, alone %+v", c.name, got[i], want)
		}
	}
}
